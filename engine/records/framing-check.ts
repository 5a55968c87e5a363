// The record-framing check of validateBatch (record-walk.ts walkRecords, strict, nothing decoded)
// as one tight loop over plain byte reads: no cursor object, no per-field strings, nothing
// allocated. It answers only "is every record well framed?"; when it says no (or meets what
// it leaves to the full walker: a timestamp delta longer than 7 bytes), validateBatch runs
// walkRecords, which throws the precise error or accepts. So the two must agree on every
// batch the fast check accepts (framing-check.test.ts compares them on valid and damaged
// batches). On the append path the cursor's walk cost more than the ISA-L CRC itself (~35 ns
// a record); the addon runs the same loop in C (engine/native/crc32c/crc32c.c), this JS
// version where the addon is not loaded.
import { nativeRecordsFramingOk } from './crc.ts';
import { LOG_APPEND_TIME_FLAG } from './encode.ts';
import { BATCH_HEADER_BYTES, LOG_OVERHEAD, type BatchHeader } from './types.ts';

/** Smallest record: length, attributes, timestampDelta, offsetDelta, key, value, header count (decode.ts). */
const MIN_RECORD_BYTES = 7;

/** Where the last varint read by varintAt ended. */
let next = 0;

/**
 * Zigzag int32 at p, not reading at or past limit; NaN when it runs past limit or is longer
 * than 5 bytes / wider than 32 bits (decode.ts Cursor.varint's rules).
 */
function varintAt(buf: Uint8Array, p: number, limit: number): number {
  if (p >= limit) return NaN;
  let b = buf[p++];
  if (b < 0x80) {
    next = p;
    return (b >>> 1) ^ -(b & 1);
  }
  let u = b & 0x7f;
  for (let shift = 7; ; shift += 7) {
    if (p >= limit) return NaN;
    b = buf[p++];
    if (shift === 28) {
      if (b > 0x0f) return NaN;
      u |= b << 28;
      break;
    }
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  next = p;
  return (u >>> 1) ^ -(u & 1);
}

/**
 * Zigzag int64 of at most 7 bytes (49 bits: exact in a double) at p; NaN past limit or when
 * longer (the full walker decides those).
 */
function varlong7At(buf: Uint8Array, p: number, limit: number): number {
  let u = 0;
  let mul = 1;
  for (let i = 0; i < 7; i++) {
    if (p >= limit) return NaN;
    const b = buf[p++];
    u += (b & 0x7f) * mul;
    if (b < 0x80) {
      next = p;
      return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    }
    mul *= 128;
  }
  return NaN;
}

/** Length-prefixed bytes (-1 = null) at p within limit: the position after them, or -1 when malformed. */
function skipBytesAt(buf: Uint8Array, p: number, limit: number): number {
  const len = varintAt(buf, p, limit);
  if (len !== len) return -1;
  if (len === -1) return next;
  if (len < -1 || len > limit - next) return -1;
  return next + len;
}

/**
 * True when the records of the CRC-checked batch at batchPos (header h) are framed as
 * validateBatch's checkRecords requires; false means "ask walkRecords".
 */
export function recordsFramingOk(buf: Uint8Array, batchPos: number, h: BatchHeader): boolean {
  return nativeRecordsFramingOk !== null ? nativeRecordsFramingOk(buf, batchPos, LOG_OVERHEAD + h.length) : recordsFramingOkJs(buf, batchPos, h);
}

/** The same check in JS, where the addon does not run (and the reference the addon's walk is tested against). */
export function recordsFramingOkJs(buf: Uint8Array, batchPos: number, h: BatchHeader): boolean {
  const end = batchPos + LOG_OVERHEAD + h.length;
  const count = h.recordCount;
  if (count <= 0 || h.lastOffsetDelta !== count - 1) return false;
  if (count > (end - batchPos - BATCH_HEADER_BYTES) / MIN_RECORD_BYTES) return false;
  const logAppendTime = (h.attributes & LOG_APPEND_TIME_FLAG) !== 0;
  const firstTimestamp = h.firstTimestamp;
  let p = batchPos + BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (p >= end) return false;
    const recordLength = varintAt(buf, p, end);
    if (recordLength !== recordLength) return false;
    const bodyStart = next;
    if (recordLength < 0 || recordLength > end - bodyStart) return false;
    const recordEnd = bodyStart + recordLength;
    // attributes
    if (bodyStart >= recordEnd) return false;
    const timestampDelta = varlong7At(buf, bodyStart + 1, recordEnd);
    if (timestampDelta !== timestampDelta) return false;
    if (!logAppendTime && !Number.isSafeInteger(firstTimestamp + timestampDelta)) return false;
    // Offsets: offsetDelta must be i; baseOffset + lastOffsetDelta was checked safe with the header.
    if (varintAt(buf, next, recordEnd) !== i) return false;
    let q = skipBytesAt(buf, next, recordEnd); // key
    if (q < 0) return false;
    q = skipBytesAt(buf, q, recordEnd); // value
    if (q < 0) return false;
    const headerCount = varintAt(buf, q, recordEnd);
    if (headerCount !== headerCount) return false;
    q = next;
    if (headerCount < 0 || headerCount > (recordEnd - q) / 2) return false;
    for (let j = 0; j < headerCount; j++) {
      const keyLength = varintAt(buf, q, recordEnd);
      if (keyLength !== keyLength) return false;
      q = next;
      if (keyLength < 0 || keyLength > recordEnd - q) return false;
      q = skipBytesAt(buf, q + keyLength, recordEnd); // header value
      if (q < 0) return false;
    }
    if (q !== recordEnd) return false;
    p = recordEnd;
  }
  return p === end;
}
