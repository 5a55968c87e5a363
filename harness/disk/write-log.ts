// The NBD disk's write log: every WRITE (offset, length, data, FUA), FLUSH and TRIM the guest
// sent, in the order the server completed them, with host-clock timestamps (engine/common/
// clock.ts) so a crash point compares with the ack ledger's times. Append-only; one record is
// written whole with one write(2), so a harness killed mid-trial leaves a valid prefix and at
// most one torn record at the end, which the reader reports (file and offset) without losing the
// prefix. Crash-state exploration (dm-log-writes / CrashMonkey style) replays prefixes of it.
//
// File layout (little-endian):
//   header  16 bytes: magic "DUROWLOG" | u32 version (1) | u32 sector size (512)
//   record  48-byte head + data:
//     u32 length of what follows this field (44 + data bytes)
//     u32 CRC-32C of the rest of the record (type .. data)
//     u8 type (1 WRITE, 2 FLUSH, 3 TRIM, 4 WRITE_ZEROES) | u8 flags (bit 0: FUA; bit 1: not
//       honoured, a lying drive acknowledged this FLUSH or FUA without persisting) | u16 0
//     u64 seq (0, 1, 2 ... in completion order)
//     u64 submitUs | u64 completeUs (host clock, µs)
//     u64 offset (bytes) | u32 length (bytes)
//     data (WRITE only: `length` bytes)
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { crc32c } from '../../engine/records/crc.ts';

export const WRITE_LOG_MAGIC = 'DUROWLOG';
export const WRITE_LOG_VERSION = 1;
export const WRITE_LOG_HEADER_BYTES = 16;
export const RECORD_HEAD_BYTES = 48;
export const SECTOR_BYTES = 512;

export type WriteLogOp = 'write' | 'flush' | 'trim' | 'write-zeroes';
const OP_CODE: Record<WriteLogOp, number> = { write: 1, flush: 2, trim: 3, 'write-zeroes': 4 };
const OP_NAME: Record<number, WriteLogOp> = { 1: 'write', 2: 'flush', 3: 'trim', 4: 'write-zeroes' };
const FLAG_FUA = 1;
const FLAG_NOT_HONOURED = 2;

export interface WriteLogRecord {
  seq: number;
  op: WriteLogOp;
  fua: boolean;
  submitUs: number;
  completeUs: number;
  /** Byte offset on the disk (0 for flush). */
  offset: number;
  /** Bytes covered (0 for flush). */
  length: number;
  /** WRITE only: the bytes written (a view into the loaded log file). */
  data: Buffer | null;
  /** Where the record starts in the log file (for error messages). */
  fileOffset: number;
  /** Present (true) when the disk acknowledged this FLUSH or FUA without persisting (vm.disk flush: ignored): not a durability point. */
  notHonoured?: true;
}

export type WriteLogEntry = Omit<WriteLogRecord, 'seq' | 'fileOffset'>;

export class WriteLogFullError extends Error {
  constructor(
    readonly file: string,
    readonly limitBytes: number,
    readonly wouldBeBytes: number,
  ) {
    super(
      `write log ${file}: recording this request would take it to ${wouldBeBytes} bytes, over its limit of ${limitBytes} bytes ` +
        `(vm.disk writeLog limit); the trial fails here rather than lose what the guest wrote — raise the limit or shorten the load`,
    );
  }
}

export class WriteLogCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`write log ${file} at byte ${offset}: ${reason}`);
  }
}

/** Appends records; each goes to the file with one write(2) (a crash tears at most the last one). */
export class WriteLogWriter {
  private fd: number;
  private bytes = WRITE_LOG_HEADER_BYTES;
  private nextSeq = 0;
  private closed = false;

  constructor(
    readonly file: string,
    readonly limitBytes: number,
  ) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes < WRITE_LOG_HEADER_BYTES + RECORD_HEAD_BYTES) {
      throw new Error(`write log ${file}: limit must be an integer of at least ${WRITE_LOG_HEADER_BYTES + RECORD_HEAD_BYTES} bytes, got ${limitBytes}`);
    }
    this.fd = openSync(file, 'wx');
    const header = Buffer.alloc(WRITE_LOG_HEADER_BYTES);
    header.write(WRITE_LOG_MAGIC, 0, 'latin1');
    header.writeUInt32LE(WRITE_LOG_VERSION, 8);
    header.writeUInt32LE(SECTOR_BYTES, 12);
    writeSync(this.fd, header);
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  get records(): number {
    return this.nextSeq;
  }

  /** Appends one record; returns its seq. Throws WriteLogFullError (nothing written) over the limit. */
  append(e: WriteLogEntry): number {
    if (this.closed) throw new Error(`write log ${this.file}: append after close`);
    const dataBytes = e.op === 'write' ? (e.data?.length ?? 0) : 0;
    if (e.op === 'write' && (e.data === null || e.data.length !== e.length)) {
      throw new Error(`write log ${this.file}: a write of ${e.length} bytes at ${e.offset} must carry exactly that many data bytes, got ${e.data?.length ?? 'none'}`);
    }
    const total = RECORD_HEAD_BYTES + dataBytes;
    if (this.bytes + total > this.limitBytes) throw new WriteLogFullError(this.file, this.limitBytes, this.bytes + total);
    const seq = this.nextSeq;
    const rec = Buffer.allocUnsafe(total);
    rec.writeUInt32LE(total - 4, 0);
    rec.writeUInt8(OP_CODE[e.op], 8);
    rec.writeUInt8((e.fua ? FLAG_FUA : 0) | (e.notHonoured ? FLAG_NOT_HONOURED : 0), 9);
    rec.writeUInt16LE(0, 10);
    rec.writeBigUInt64LE(BigInt(seq), 12);
    rec.writeBigUInt64LE(BigInt(e.submitUs), 20);
    rec.writeBigUInt64LE(BigInt(e.completeUs), 28);
    rec.writeBigUInt64LE(BigInt(e.offset), 36);
    rec.writeUInt32LE(e.length, 44);
    if (dataBytes > 0) e.data!.copy(rec, RECORD_HEAD_BYTES);
    rec.writeUInt32LE(crc32c(rec.subarray(8)), 4);
    let done = 0;
    while (done < total) done += writeSync(this.fd, rec, done, total - done);
    this.bytes += total;
    this.nextSeq++;
    return seq;
  }

  /** fsync the log (at the end of a trial, before crash states are built from it). */
  sync(): void {
    if (!this.closed) fsyncSync(this.fd);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
  }
}

export interface LoadedWriteLog {
  file: string;
  records: WriteLogRecord[];
  /** Set when the file ends in a torn or corrupt record: everything before it is in `records`. */
  truncated: { offset: number; reason: string } | null;
}

/**
 * Reads a whole write log. A bad header throws WriteLogCorruptError; a torn or corrupt record
 * ends the read there and is reported in `truncated` (file offset and why), keeping the valid
 * prefix. Callers that need the whole log use `requireComplete`.
 */
export function readWriteLog(file: string): LoadedWriteLog {
  const buf = readFileSync(file);
  if (buf.length < WRITE_LOG_HEADER_BYTES) throw new WriteLogCorruptError(file, 0, `the header needs ${WRITE_LOG_HEADER_BYTES} bytes, the file has ${buf.length}`);
  const magic = buf.toString('latin1', 0, 8);
  if (magic !== WRITE_LOG_MAGIC) throw new WriteLogCorruptError(file, 0, `expected magic ${WRITE_LOG_MAGIC}, found ${JSON.stringify(magic)}`);
  const version = buf.readUInt32LE(8);
  if (version !== WRITE_LOG_VERSION) throw new WriteLogCorruptError(file, 8, `expected version ${WRITE_LOG_VERSION}, found ${version}`);
  const records: WriteLogRecord[] = [];
  let pos = WRITE_LOG_HEADER_BYTES;
  let truncated: LoadedWriteLog['truncated'] = null;
  while (pos < buf.length) {
    const fail = (reason: string) => (truncated = { offset: pos, reason });
    if (buf.length - pos < RECORD_HEAD_BYTES) {
      fail(`a record head needs ${RECORD_HEAD_BYTES} bytes, ${buf.length - pos} remain (torn at the end: the writer was killed mid-record)`);
      break;
    }
    const len = buf.readUInt32LE(pos);
    if (len < RECORD_HEAD_BYTES - 4) {
      fail(`record length ${len} is below the ${RECORD_HEAD_BYTES - 4}-byte minimum`);
      break;
    }
    if (pos + 4 + len > buf.length) {
      fail(`record of ${len + 4} bytes runs past the end of the file (${buf.length - pos} remain): torn at the end`);
      break;
    }
    const body = buf.subarray(pos + 8, pos + 4 + len);
    const crc = buf.readUInt32LE(pos + 4);
    if (crc32c(body) !== crc) {
      fail(`record CRC-32C mismatch (stored ${crc.toString(16)}, computed ${crc32c(body).toString(16)})`);
      break;
    }
    const op = OP_NAME[buf.readUInt8(pos + 8)];
    if (!op) {
      fail(`unknown record type ${buf.readUInt8(pos + 8)}`);
      break;
    }
    const seq = Number(buf.readBigUInt64LE(pos + 12));
    if (seq !== records.length) {
      fail(`expected record seq ${records.length}, found ${seq}`);
      break;
    }
    const length = buf.readUInt32LE(pos + 44);
    const dataBytes = len + 4 - RECORD_HEAD_BYTES;
    if ((op === 'write' && dataBytes !== length) || (op !== 'write' && dataBytes !== 0)) {
      fail(`a ${op} of ${length} bytes carries ${dataBytes} data bytes`);
      break;
    }
    records.push({
      seq,
      op,
      fua: (buf.readUInt8(pos + 9) & FLAG_FUA) !== 0,
      submitUs: Number(buf.readBigUInt64LE(pos + 20)),
      completeUs: Number(buf.readBigUInt64LE(pos + 28)),
      offset: Number(buf.readBigUInt64LE(pos + 36)),
      length,
      data: op === 'write' ? buf.subarray(pos + RECORD_HEAD_BYTES, pos + 4 + len) : null,
      fileOffset: pos,
      ...((buf.readUInt8(pos + 9) & FLAG_NOT_HONOURED) !== 0 ? { notHonoured: true as const } : {}),
    });
    pos += 4 + len;
  }
  return { file, records, truncated };
}

/** The log's records, or WriteLogCorruptError naming the file and offset where it stops being valid. */
export function requireComplete(log: LoadedWriteLog): WriteLogRecord[] {
  if (log.truncated) throw new WriteLogCorruptError(log.file, log.truncated.offset, `${log.truncated.reason}; ${log.records.length} records before it are intact`);
  return log.records;
}
