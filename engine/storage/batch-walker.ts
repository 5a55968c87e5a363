// Walks the batches of a .log file through a read window, so a 1 GiB segment is never read
// whole. Two depths: headers only (loading trusted segments, index rebuilds, reads) and full
// validation with the codec (recovery: CRC and record framing of every batch).
import fs from 'node:fs';
import {
  BATCH_HEADER_BYTES,
  CorruptBatchError,
  LOG_OVERHEAD,
  MIN_BATCH_LENGTH,
  readBatchHeader,
  validateBatch,
  type BatchHeader,
} from '../records/index.ts';

export const WINDOW_BYTES = 64 * 1024;

let shared: Buffer | null = null;

/**
 * One read window for every Log of the process. Walks are synchronous and never interleave (a
 * walker's batchBytes() is used before the next walk starts; a batch larger than the window gets
 * a buffer of its own), so a window per partition (64 KiB x 10,000 partitions = 640 MiB) buys
 * nothing.
 */
export function sharedWindow(): Buffer {
  return (shared ??= Buffer.allocUnsafe(WINDOW_BYTES));
}

export interface WalkStop {
  /** Start of the batch that could not be taken: where a recovery truncates. */
  position: number;
  /** The offending byte (inside the batch for a CRC or record error). */
  errorPosition: number;
  reason: string;
  detail: string;
}

/** Reads until len bytes or end of file; returns the bytes read. */
export function readFully(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
  let got = 0;
  while (got < len) {
    const n = fs.readSync(fd, buf, off + got, len - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

export class BatchWalker {
  /** Position of the next batch. */
  position: number;
  batchPosition = 0;
  size = 0;
  header: BatchHeader | null = null;
  stop: WalkStop | null = null;
  private win: Buffer;
  private view: Buffer;
  private winStart = 0;

  constructor(
    private readonly fd: number,
    start: number,
    private readonly end: number,
    private readonly maxBatchBytes: number,
    private readonly validate: boolean,
    window?: Buffer,
  ) {
    this.position = start;
    this.win = window ?? Buffer.allocUnsafe(WINDOW_BYTES);
    this.view = this.win.subarray(0, 0);
  }

  /** Makes [pos, pos + n) readable in the window; n <= end - pos is the caller's duty. */
  private ensure(pos: number, n: number): boolean {
    if (pos >= this.winStart && pos + n <= this.winStart + this.view.length) return true;
    if (n > this.win.length) this.win = Buffer.allocUnsafe(Math.ceil(n / WINDOW_BYTES) * WINDOW_BYTES);
    const len = Math.min(this.win.length, this.end - pos);
    const got = readFully(this.fd, this.win, 0, len, pos);
    this.winStart = pos;
    this.view = this.win.subarray(0, got);
    return got >= n;
  }

  private halt(position: number, errorPosition: number, reason: string, detail: string): false {
    this.stop = { position, errorPosition, reason, detail };
    this.header = null;
    return false;
  }

  /** Takes the next batch; false at the end or at the first batch that fails (see stop). */
  next(): boolean {
    if (this.stop !== null || this.position >= this.end) {
      this.header = null;
      return false;
    }
    const pos = this.position;
    const avail = this.end - pos;
    if (avail < LOG_OVERHEAD) return this.halt(pos, pos, 'short', `${avail} bytes left, a batch needs at least ${BATCH_HEADER_BYTES}`);
    if (!this.ensure(pos, Math.min(avail, BATCH_HEADER_BYTES))) return this.halt(pos, pos, 'short', 'file ended before its expected size');
    const off = pos - this.winStart;
    const length = this.view.readInt32BE(off + 8);
    const size = LOG_OVERHEAD + length;
    if (length < MIN_BATCH_LENGTH || size > this.maxBatchBytes) {
      return this.halt(pos, pos + 8, 'length-out-of-range', `length ${length} outside [${MIN_BATCH_LENGTH}, ${this.maxBatchBytes - LOG_OVERHEAD}]`);
    }
    if (size > avail) return this.halt(pos, pos, 'short', `batch needs ${size} bytes, ${avail} left`);
    let header: BatchHeader;
    try {
      if (this.validate) {
        if (!this.ensure(pos, size)) return this.halt(pos, pos, 'short', 'file ended before its expected size');
        header = validateBatch(this.view, pos - this.winStart, {
          maxBatchBytes: this.maxBatchBytes,
          positionBase: this.winStart,
          checkRecords: true,
        });
      } else {
        header = readBatchHeader(this.view, off, { maxBatchBytes: this.maxBatchBytes, positionBase: this.winStart });
      }
    } catch (e) {
      if (!(e instanceof CorruptBatchError)) throw e;
      return this.halt(pos, e.position, e.reason, e.detail);
    }
    this.header = header;
    this.batchPosition = pos;
    this.size = size;
    this.position = pos + size;
    return true;
  }

  /** The bytes of the batch last returned by next() (valid until the next call). */
  batchBytes(): Buffer {
    this.ensure(this.batchPosition, this.size);
    const off = this.batchPosition - this.winStart;
    return this.view.subarray(off, off + this.size);
  }
}
