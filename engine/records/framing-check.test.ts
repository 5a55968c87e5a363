// The fast record-framing checks (the addon's C loop and the JS loop) against the full walker
// (record-walk.ts walkRecords, strict): on every batch where the walker accepts, both must accept
// or defer; where the walker throws, both must refuse. Valid batches from the encoder, and the
// same batches with bytes overwritten, truncated or extended.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cImplementation, nativeRecordsFramingOk } from './crc.ts';
import { walkRecords } from './record-walk.ts';
import { encodeSizedBatch } from '../cli/sized-batch.ts';
import { recordsFramingOkJs } from './framing-check.ts';
import { encodeBatch, readBatchHeader, validateBatch, type BatchHeader, type EncodeBatchOptions } from './index.ts';
import { LOG_OVERHEAD } from './types.ts';

const bytes = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) });
const timestamp = fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.integer({ min: -(2 ** 52), max: 2 ** 52 }));
const batchArb: fc.Arbitrary<EncodeBatchOptions> = fc.record({
  baseOffset: fc.integer({ min: 0, max: 2 ** 40 }),
  firstTimestamp: timestamp,
  attributes: fc.constantFrom(0, 8),
  records: fc.array(
    fc.record(
      {
        key: bytes,
        value: bytes,
        headers: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: bytes }), { maxLength: 3 }),
        timestamp,
      },
      { requiredKeys: ['value'] },
    ),
    { minLength: 1, maxLength: 10 },
  ),
});

/** The walker's verdict: true = accepts, false = throws CorruptBatchError. */
function walkerAccepts(buf: Buffer, h: BatchHeader): boolean {
  try {
    walkRecords(buf, 0, h, 0, null, true);
    return true;
  } catch (e) {
    expect((e as Error).name).toBe('CorruptBatchError');
    return false;
  }
}

/** Fast checks may defer (false) where the walker accepts; they must never accept what it refuses. */
function agree(buf: Buffer): void {
  let h: BatchHeader;
  try {
    h = readBatchHeader(buf, 0, { maxBatchBytes: 1 << 24 });
  } catch {
    return; // the header itself is broken: the framing check never runs on it
  }
  if (LOG_OVERHEAD + h.length > buf.length) return; // validate refuses a short batch first
  const walker = walkerAccepts(buf, h);
  const js = recordsFramingOkJs(buf, 0, h);
  if (!walker) expect(js).toBe(false);
  if (nativeRecordsFramingOk) {
    const native = nativeRecordsFramingOk(buf, 0, LOG_OVERHEAD + h.length);
    // The two fast loops implement the same rules: same answer on every input.
    expect(native).toBe(js);
  }
}

describe('record framing: fast checks vs the full walker', () => {
  it('the addon provides the C loop (CI=true: required)', () => {
    if (crc32cImplementation.name === '@node-rs/crc32' && (process.env.CI === 'true' || process.env.DUROLAB_CRC32C === undefined)) {
      throw new Error(`the CRC-32C addon is not running: ${crc32cImplementation.fallbackReason}`);
    }
    expect(nativeRecordsFramingOk === null).toBe(crc32cImplementation.name === '@node-rs/crc32');
  });

  it('accept every batch the encoder makes (timestamp deltas under 2^47: no deferral), and validateBatch accepts the rest', () => {
    fc.assert(
      fc.property(batchArb, (opts) => {
        const buf = encodeBatch(opts);
        const h = readBatchHeader(buf, 0);
        expect(walkerAccepts(buf, h)).toBe(true);
        expect(validateBatch(buf, 0, { checkRecords: true }).recordCount).toBe(opts.records.length);
        // A zigzag varlong of 7 bytes carries 49 bits: larger deltas go to the full walker.
        const first = opts.firstTimestamp ?? 0;
        const small = opts.records.every((r) => Math.abs((r.timestamp ?? first) - first) < 2 ** 47);
        if (small) {
          expect(recordsFramingOkJs(buf, 0, h)).toBe(true);
          if (nativeRecordsFramingOk) expect(nativeRecordsFramingOk(buf, 0, buf.length)).toBe(true);
        } else if (nativeRecordsFramingOk) {
          expect(nativeRecordsFramingOk(buf, 0, buf.length)).toBe(recordsFramingOkJs(buf, 0, h));
        }
      }),
      { numRuns: 300 },
    );
    for (const size of [4096, 65536, 1048576]) {
      const b = encodeSizedBatch(size, size / 1024, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
      expect(recordsFramingOkJs(b, 0, readBatchHeader(b, 0, { maxBatchBytes: 1 << 24 }))).toBe(true);
      if (nativeRecordsFramingOk) expect(nativeRecordsFramingOk(b, 0, b.length)).toBe(true);
    }
  });

  it('agree with the walker on damaged batches: bytes overwritten, cut or extended', () => {
    fc.assert(
      fc.property(
        batchArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: -20, max: 20 }),
        (opts, edits, lengthChange) => {
          const good = encodeBatch(opts);
          const buf = Buffer.alloc(Math.max(61, good.length + Math.max(0, lengthChange)));
          good.copy(buf);
          // Damage only the records (from byte 61), as a CRC-valid batch built by a faulty client would be.
          for (const [at, v] of edits) buf[61 + (at % (buf.length - 61 || 1))] = v;
          buf.writeInt32BE(good.length - LOG_OVERHEAD + lengthChange, 8);
          agree(buf);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agree on damaged headers: record count, last offset delta, attributes', () => {
    fc.assert(
      fc.property(batchArb, fc.integer({ min: -3, max: 3 }), fc.integer({ min: -3, max: 3 }), fc.constantFrom(0, 8), (opts, dCount, dLast, attr) => {
        const buf = encodeBatch(opts);
        buf.writeInt32BE(buf.readInt32BE(57) + dCount, 57);
        buf.writeInt32BE(buf.readInt32BE(23) + dLast, 23);
        buf.writeInt16BE(attr, 21);
        agree(buf);
      }),
      { numRuns: 500 },
    );
  });

  // The C walk's fast path (records-framing.c fast_record) takes records with 1-2 byte lengths,
  // a 1-byte timestamp delta and keys under 64 bytes; these batches sit on its edges: values and
  // keys across the 1/2/3-byte varint lengths, null values and header values last in a record,
  // first timestamps at the safe-integer limits, offset deltas past 2 bytes.
  const edgeBytes = fc.oneof(
    fc.constant(null),
    fc.constantFrom(0, 1, 62, 63, 64, 65, 8190, 8191, 8192, 8193).map((n) => Buffer.alloc(n, 0x61)),
  );
  const edgeBatch: fc.Arbitrary<EncodeBatchOptions> = fc
    .record({
      firstTimestamp: fc.constantFrom(0, 1_700_000_000_000, 2 ** 53 - 1, 2 ** 53 - 64, 2 ** 53 - 65, -(2 ** 53) + 1, -(2 ** 53) + 65),
      attributes: fc.constantFrom(0, 8),
      records: fc.array(
        fc.record({
          key: edgeBytes,
          value: edgeBytes,
          headers: fc.array(fc.record({ key: fc.constantFrom('', 'k', 'x'.repeat(63), 'y'.repeat(64)), value: edgeBytes }), { maxLength: 2 }),
          delta: fc.integer({ min: -70, max: 70 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    })
    .map(({ firstTimestamp, attributes, records }) => ({
      firstTimestamp,
      attributes,
      // The encoder takes safe timestamps only; deltas past the limit are patched in below.
      records: records.map(({ delta, ...r }) => ({ ...r, timestamp: Math.max(-(2 ** 53) + 1, Math.min(2 ** 53 - 1, firstTimestamp + delta)) })),
    }));

  it('agree on the edges of the C fast path, intact and damaged', () => {
    fc.assert(
      fc.property(edgeBatch, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }), (opts, edits) => {
        const buf = encodeBatch(opts);
        agree(buf);
        for (const [at, v] of edits) buf[61 + (at % (buf.length - 61))] = v;
        agree(buf);
      }),
      { numRuns: 3000 },
    );
    // A 1-byte timestamp delta that takes the timestamp past 2^53 - 1 (the encoder writes none): refused.
    for (const [first, zigzag] of [[2 ** 53 - 1, 2], [2 ** 53 - 64, 126], [-(2 ** 53) + 1, 1], [2 ** 53 - 65, 126]] as const) {
      const buf = encodeBatch({ firstTimestamp: first, records: [{ value: Buffer.from('v') }], attributes: 0 });
      expect(buf[61 + 2]).toBe(0); // record length, attributes, then the timestamp delta 0
      buf[61 + 2] = zigzag;
      agree(buf);
      const safe = Number.isSafeInteger(first + (zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2));
      if (nativeRecordsFramingOk) expect(nativeRecordsFramingOk(buf, 0, buf.length)).toBe(safe);
    }
    // Offset deltas of 3 bytes (index 8192 on): the fast path hands those records to the byte walk.
    const many = encodeSizedBatch(9000 * 16, 9000, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
    agree(many);
    if (nativeRecordsFramingOk) expect(nativeRecordsFramingOk(many, 0, many.length)).toBe(true);
  });

  it('validateBatch still names the framing error (the walker explains what the fast check refuses)', () => {
    const buf = encodeBatch({ records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }] });
    buf.writeInt32BE(3, 57); // recordCount 3 with lastOffsetDelta 1
    buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
    expect(() => validateBatch(buf, 0, { checkRecords: true })).toThrow('record-count-mismatch: lastOffsetDelta 1 with recordCount 3 (expected 2)');
    const value = encodeBatch({ records: [{ value: Buffer.from('abc') }] });
    value[value.length - 5] = 0x7e; // the value length (zigzag 3 -> 63) runs past the record: it ends with 3 'abc' 0
    value.writeUInt32BE(crc32c(value.subarray(21)), 17);
    expect(() => validateBatch(value, 0, { checkRecords: true })).toThrow(/record-overflow/);
    expect(validateBatch(encodeBatch({ records: [{ value: Buffer.from('a') }] }), 0, { checkRecords: true }).recordCount).toBe(1);
  });

  it('the addon refuses a range outside the buffer', () => {
    if (!nativeRecordsFramingOk) {
      expect(crc32cImplementation.name).toBe('@node-rs/crc32');
      return;
    }
    const b = Buffer.alloc(100);
    expect(() => nativeRecordsFramingOk!(b, 50, 51)).toThrow('[batchPos, batchPos + size) must lie inside buf');
    expect(() => nativeRecordsFramingOk!(b, -1, 10)).toThrow(RangeError);
    expect(nativeRecordsFramingOk(b, 0, 100)).toBe(false);
  });
});
