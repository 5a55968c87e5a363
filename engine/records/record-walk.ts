// The record walk of a RecordBatch v2 (records after the 61-byte header): every record's
// framing checked (strict: also the offset deltas and record count, as Kafka's leader does) and,
// when asked, each decoded into copies. decode.ts validates the batch around it; framing-check.ts
// is its allocation-free fast path for well-formed batches.
import { LOG_APPEND_TIME_FLAG } from './encode.ts';
import { corruptBatchAt } from './errors.ts';
import { readI64 } from './int64.ts';
import { BATCH_HEADER_BYTES, LOG_OVERHEAD, RECORD_COUNT_OFFSET, type BatchHeader, type CorruptionReason, type DecodedRecord, type RecordHeader } from './types.ts';

/** Smallest record: length, attributes, timestampDelta, offsetDelta, key, value, header count. */
const MIN_RECORD_BYTES = 7;

/**
 * Walks the records of a CRC-checked batch. With out === null nothing is allocated beyond
 * the cursor; otherwise decoded records are appended to out.
 */
export function walkRecords(
  buf: Buffer,
  batchPos: number,
  h: BatchHeader,
  base: number,
  out: DecodedRecord[] | null,
  strict: boolean,
): void {
  const end = batchPos + LOG_OVERHEAD + h.length;
  const c = new Cursor(buf, batchPos, base);
  const count = h.recordCount;
  const countAt = batchPos + RECORD_COUNT_OFFSET;
  if (count < 0) c.fail('record-count-mismatch', `recordCount ${count} is negative`, countAt);
  if (strict) {
    if (count === 0) c.fail('record-count-mismatch', 'recordCount 0: empty batch', countAt);
    if (h.lastOffsetDelta !== count - 1) {
      c.fail('record-count-mismatch', `lastOffsetDelta ${h.lastOffsetDelta} with recordCount ${count} (expected ${count - 1})`, batchPos + 23);
    }
  }
  const recordBytes = end - batchPos - BATCH_HEADER_BYTES;
  if (count > recordBytes / MIN_RECORD_BYTES) {
    c.fail('record-count-mismatch', `recordCount ${count} cannot fit in ${recordBytes} bytes of records`, countAt);
  }
  const logAppendTime = (h.attributes & LOG_APPEND_TIME_FLAG) !== 0;
  let p = batchPos + BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (p >= end) c.fail('record-count-mismatch', `batch ends after ${i} of ${count} records`, p);
    c.pos = p;
    c.end = end;
    const recordLength = c.varint('record length');
    const bodyStart = c.pos;
    if (recordLength < 0 || recordLength > end - bodyStart) {
      c.fail('record-overflow', `record ${i} length ${recordLength} but ${end - bodyStart} bytes left in the batch`, p);
    }
    const recordEnd = bodyStart + recordLength;
    c.end = recordEnd;
    c.byte('attributes'); // record attributes are unused in v2
    const tsAt = c.pos;
    const timestampDelta = c.varlong('timestampDelta');
    const odAt = c.pos;
    const offsetDelta = c.varint('offsetDelta');
    if (strict && offsetDelta !== i) {
      c.fail('record-count-mismatch', `record ${i} has offsetDelta ${offsetDelta}`, odAt);
    }
    const timestamp = logAppendTime ? h.maxTimestamp : h.firstTimestamp + timestampDelta;
    if (!Number.isSafeInteger(timestamp)) {
      c.fail('value-out-of-range', `record ${i} timestamp ${h.firstTimestamp} + ${timestampDelta} is not a safe JS integer`, tsAt);
    }
    const offset = h.baseOffset + offsetDelta;
    if (!Number.isSafeInteger(offset)) {
      c.fail('value-out-of-range', `record ${i} offset ${h.baseOffset} + ${offsetDelta} is not a safe JS integer`, odAt);
    }
    const key = c.bytes('key', out !== null);
    const value = c.bytes('value', out !== null);
    const hcAt = c.pos;
    const headerCount = c.varint('header count');
    // Each header takes at least 2 bytes; bounds the array before allocating it.
    if (headerCount < 0 || headerCount > (recordEnd - c.pos) / 2) {
      c.fail('record-overflow', `record ${i} header count ${headerCount} with ${recordEnd - c.pos} bytes left in the record`, hcAt);
    }
    let headers: RecordHeader[] = [];
    if (out !== null && headerCount > 0) headers = new Array<RecordHeader>(headerCount);
    for (let j = 0; j < headerCount; j++) {
      const hkAt = c.pos;
      const kl = c.varint('header key length');
      if (kl < 0 || kl > recordEnd - c.pos) {
        c.fail('record-overflow', `record ${i} header ${j} key length ${kl} with ${recordEnd - c.pos} bytes left in the record`, hkAt);
      }
      const hk = out !== null ? buf.toString('utf8', c.pos, c.pos + kl) : '';
      c.pos += kl;
      const hv = c.bytes('header value', out !== null);
      if (out !== null) headers[j] = { key: hk, value: hv };
    }
    if (c.pos !== recordEnd) {
      c.fail('record-overflow', `record ${i} declares ${recordLength} bytes but its fields end ${recordEnd - c.pos} bytes early`, c.pos);
    }
    if (out !== null) out.push({ offset, timestamp, key, value, headers });
    p = recordEnd;
  }
  if (p !== end) {
    c.fail('record-count-mismatch', `${end - p} bytes left after ${count} records`, p);
  }
}

/** Reads varints within [pos, end) of a batch and reports failures with the batch's context. */
class Cursor {
  pos = 0;
  end = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly batchPos: number,
    private readonly base: number,
  ) {}

  fail(reason: CorruptionReason, detail: string, at: number): never {
    throw corruptBatchAt(reason, detail, this.buf, this.batchPos, this.base, at);
  }

  private pastEnd(what: string, start: number): never {
    this.fail('record-overflow', `${what} runs past the end of its record or batch at ${this.base + this.end}`, start);
  }

  byte(what: string): number {
    if (this.pos >= this.end) this.pastEnd(what, this.pos);
    return this.buf[this.pos++];
  }

  /** Zigzag int32, at most 5 bytes. Kafka silently drops bits beyond 32 in the 5th byte; we reject them. */
  varint(what: string): number {
    const buf = this.buf;
    const start = this.pos;
    let p = start;
    let u = 0;
    for (let shift = 0; ; shift += 7) {
      if (p >= this.end) this.pastEnd(what, start);
      const b = buf[p++];
      if (shift === 28) {
        if (b > 0x0f) this.fail('varint-overflow', `${what} varint longer than 5 bytes or wider than 32 bits`, start);
        u |= b << 28;
        break;
      }
      u |= (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    this.pos = p;
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zigzag int64 as a safe integer, at most 10 bytes. */
  varlong(what: string): number {
    const buf = this.buf;
    const start = this.pos;
    let p = start;
    let u = 0;
    let mul = 1;
    // 7 bytes carry 49 bits: exact in a double, so the common case needs no BigInt.
    for (let i = 0; i < 7; i++) {
      if (p >= this.end) this.pastEnd(what, start);
      const b = buf[p++];
      u += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = p;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      mul *= 128;
    }
    return this.varlongBig(what, start);
  }

  private varlongBig(what: string, start: number): number {
    const buf = this.buf;
    let p = start;
    let u = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (p >= this.end) this.pastEnd(what, start);
      const b = buf[p++];
      if (shift === 63n) {
        if (b > 0x01) this.fail('varint-overflow', `${what} varlong longer than 10 bytes or wider than 64 bits`, start);
        u |= BigInt(b) << 63n;
        break;
      }
      u |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    const v = (u >> 1n) ^ -(u & 1n);
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail('value-out-of-range', `${what} ${v} is not a safe JS integer`, start);
    }
    this.pos = p;
    return Number(v);
  }

  /** Length-prefixed bytes (-1 = null); a copy when materialize, else skipped. */
  bytes(what: string, materialize: boolean): Buffer | null {
    const at = this.pos;
    const len = this.varint(`${what} length`);
    if (len === -1) return null;
    if (len < -1 || len > this.end - this.pos) {
      this.fail('record-overflow', `${what} length ${len} with ${this.end - this.pos} bytes left in the record`, at);
    }
    const start = this.pos;
    this.pos += len;
    if (!materialize) return null;
    const copy = Buffer.allocUnsafe(len);
    this.buf.copy(copy, 0, start, start + len);
    return copy;
  }
}
