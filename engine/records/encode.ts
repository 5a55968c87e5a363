import { crc32c } from './crc.ts';
import { writeI64 } from './int64.ts';
import {
  ATTRIBUTES_OFFSET,
  BATCH_HEADER_BYTES,
  CRC_OFFSET,
  LOG_OVERHEAD,
  MAGIC_V2,
  type EncodeBatchOptions,
  type RecordInput,
} from './types.ts';
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.ts';

/** Attributes bits 0-2: compression codec. */
export const COMPRESSION_MASK = 0x07;
/** Attributes bit 3: timestamps are the broker's log-append time (the batch's maxTimestamp). */
export const LOG_APPEND_TIME_FLAG = 0x08;

const INT32_MAX = 0x7fffffff;

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`encodeBatch: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  }
}

function checkSafe(name: string, v: number): void {
  if (!Number.isSafeInteger(v)) {
    throw new RangeError(`encodeBatch: ${name} must be a safe integer, got ${v}`);
  }
}

function checkBytes(name: string, v: unknown): asserts v is Uint8Array | null {
  if (v !== null && !(v instanceof Uint8Array)) {
    throw new TypeError(`encodeBatch: ${name} must be a Buffer or null, got ${typeof v}`);
  }
}

function sizeOfBytes(b: Uint8Array | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

function writeBytes(buf: Buffer, pos: number, b: Uint8Array | null): number {
  if (b === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, b.length);
  buf.set(b, pos);
  return pos + b.length;
}

/** Size of a record's body (everything after its length varint); validates the record. */
function recordBodySize(r: RecordInput, i: number, firstTimestamp: number): number {
  const ts = r.timestamp ?? firstTimestamp;
  checkSafe(`records[${i}].timestamp`, ts);
  const delta = ts - firstTimestamp;
  checkSafe(`records[${i}].timestamp - firstTimestamp`, delta);
  const key = r.key ?? null;
  checkBytes(`records[${i}].key`, key);
  checkBytes(`records[${i}].value`, r.value);
  let size = 1 + sizeOfVarlong(delta) + sizeOfVarint(i) + sizeOfBytes(key) + sizeOfBytes(r.value);
  const headers = r.headers;
  const hc = headers === undefined ? 0 : headers.length;
  size += sizeOfVarint(hc);
  for (let h = 0; h < hc; h++) {
    const { key: hk, value: hv } = headers![h];
    if (typeof hk !== 'string') {
      throw new TypeError(`encodeBatch: records[${i}].headers[${h}].key must be a string`);
    }
    checkBytes(`records[${i}].headers[${h}].value`, hv);
    const kl = Buffer.byteLength(hk, 'utf8');
    size += sizeOfVarint(kl) + kl + sizeOfBytes(hv);
  }
  return size;
}

/**
 * Builds one uncompressed v2 batch: sizes every record first, allocates once, writes the
 * fields in place and fills the CRC. Offsets are baseOffset + index, lastOffsetDelta is
 * count - 1 and maxTimestamp the largest record timestamp. Throws RangeError/TypeError for
 * bad input (an empty record list included: Kafka's producer never writes empty batches).
 */
export function encodeBatch(opts: EncodeBatchOptions): Buffer {
  const records = opts.records;
  if (!Array.isArray(records) || records.length === 0) {
    throw new RangeError('encodeBatch: records must be a non-empty array');
  }
  const count = records.length;
  checkInt('records.length', count, 1, INT32_MAX);
  const baseOffset = opts.baseOffset ?? 0;
  checkSafe('baseOffset', baseOffset);
  checkSafe('baseOffset + records.length - 1', baseOffset + count - 1);
  const partitionLeaderEpoch = opts.partitionLeaderEpoch ?? -1;
  checkInt('partitionLeaderEpoch', partitionLeaderEpoch, -0x80000000, INT32_MAX);
  const producerId = opts.producerId ?? -1;
  checkSafe('producerId', producerId);
  const producerEpoch = opts.producerEpoch ?? -1;
  checkInt('producerEpoch', producerEpoch, -0x8000, 0x7fff);
  const baseSequence = opts.baseSequence ?? -1;
  checkInt('baseSequence', baseSequence, -0x80000000, INT32_MAX);
  const firstTimestamp = opts.firstTimestamp ?? Date.now();
  checkSafe('firstTimestamp', firstTimestamp);
  const attributes = opts.attributes ?? 0;
  checkInt('attributes', attributes, 0, 0x7fff);
  if ((attributes & COMPRESSION_MASK) !== 0) {
    throw new RangeError(`encodeBatch: compression (attributes bits 0-2 = ${attributes & COMPRESSION_MASK}) is not supported`);
  }

  const bodySizes = new Array<number>(count);
  let total = BATCH_HEADER_BYTES;
  let maxTimestamp = -Infinity;
  for (let i = 0; i < count; i++) {
    const r = records[i];
    const body = recordBodySize(r, i, firstTimestamp);
    bodySizes[i] = body;
    total += sizeOfVarint(body) + body;
    const ts = r.timestamp ?? firstTimestamp;
    if (ts > maxTimestamp) maxTimestamp = ts;
  }
  if (total - LOG_OVERHEAD > INT32_MAX) {
    throw new RangeError(`encodeBatch: batch of ${total} bytes exceeds the i32 length field`);
  }

  // Every byte is written below, so unzeroed memory never leaks out.
  const buf = Buffer.allocUnsafe(total);
  writeI64(buf, 0, baseOffset);
  buf.writeInt32BE(total - LOG_OVERHEAD, 8);
  buf.writeInt32BE(partitionLeaderEpoch, 12);
  buf.writeInt8(MAGIC_V2, 16);
  buf.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
  buf.writeInt32BE(count - 1, 23);
  writeI64(buf, 27, firstTimestamp);
  writeI64(buf, 35, maxTimestamp);
  writeI64(buf, 43, producerId);
  buf.writeInt16BE(producerEpoch, 51);
  buf.writeInt32BE(baseSequence, 53);
  buf.writeInt32BE(count, 57);

  let pos = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const r = records[i];
    pos = writeVarint(buf, pos, bodySizes[i]);
    buf[pos++] = 0; // record attributes: unused in v2
    pos = writeVarlong(buf, pos, (r.timestamp ?? firstTimestamp) - firstTimestamp);
    pos = writeVarint(buf, pos, i);
    pos = writeBytes(buf, pos, r.key ?? null);
    pos = writeBytes(buf, pos, r.value);
    const headers = r.headers;
    const hc = headers === undefined ? 0 : headers.length;
    pos = writeVarint(buf, pos, hc);
    for (let h = 0; h < hc; h++) {
      const { key, value } = headers![h];
      pos = writeVarint(buf, pos, Buffer.byteLength(key, 'utf8'));
      pos += buf.write(key, pos, 'utf8');
      pos = writeBytes(buf, pos, value);
    }
  }
  if (pos !== total) {
    throw new Error(`encodeBatch: internal size mismatch, computed ${total} bytes but wrote ${pos}`);
  }
  buf.writeUInt32BE(crc32c(buf.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  return buf;
}

/**
 * Rewrites baseOffset and/or partitionLeaderEpoch in place. Both lie before the CRC's range
 * (attributes..end), which is why Kafka puts them there: the broker stamps them without
 * recomputing the CRC.
 */
export function stampBatch(
  buf: Buffer,
  pos: number,
  fields: { baseOffset?: number; partitionLeaderEpoch?: number },
): void {
  stampBatchFields(buf, pos, fields.baseOffset, fields.partitionLeaderEpoch);
}

/** stampBatch with the fields as arguments (the append path: no object per append). */
export function stampBatchFields(buf: Buffer, pos: number, baseOffset: number | undefined, partitionLeaderEpoch: number | undefined): void {
  if (!Number.isInteger(pos) || pos < 0 || buf.length - pos < CRC_OFFSET) {
    throw new RangeError(`stampBatch: no batch header at position ${pos} of a ${buf.length}-byte buffer`);
  }
  if (baseOffset !== undefined) {
    if (!Number.isSafeInteger(baseOffset)) {
      throw new RangeError(`stampBatch: baseOffset must be a safe integer, got ${baseOffset}`);
    }
    writeI64(buf, pos, baseOffset);
  }
  if (partitionLeaderEpoch !== undefined) {
    const e = partitionLeaderEpoch;
    if (!Number.isInteger(e) || e < -0x80000000 || e > INT32_MAX) {
      throw new RangeError(`stampBatch: partitionLeaderEpoch must be an int32, got ${e}`);
    }
    buf.writeInt32BE(e, pos + 12);
  }
}
