// Property tests: roundtrip, and that untrusted bytes only ever raise CorruptBatchError.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CorruptBatchError,
  crc32c,
  decodeBatch,
  encodeBatch,
  iterateBatches,
  readBatchHeader,
  recordsOf,
  scanValidPrefix,
  validateBatch,
  type CorruptionReason,
  type EncodeBatchOptions,
} from './index.ts';

const bytes = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 4, arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)) },
);
const timestamp = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 42 }),
  fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
);
const recordArb = fc.record(
  {
    key: bytes,
    value: bytes,
    headers: fc.array(fc.record({ key: fc.string({ unit: 'grapheme', maxLength: 10 }), value: bytes }), { maxLength: 3 }),
    timestamp,
  },
  { requiredKeys: ['value'] },
);
const batchArb: fc.Arbitrary<EncodeBatchOptions> = fc.record({
  baseOffset: fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 100 })),
  partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  producerId: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
  producerEpoch: fc.integer({ min: -1, max: 32767 }),
  baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  firstTimestamp: timestamp,
  attributes: fc.constantFrom(0, 8, 16),
  records: fc.array(recordArb, { minLength: 1, maxLength: 12 }),
});

function recrc(buf: Buffer): void {
  if (buf.length < 61) return;
  const size = 12 + buf.readInt32BE(8);
  if (size >= 61 && size <= buf.length) buf.writeUInt32BE(crc32c(buf.subarray(21, size)), 17);
}

/** Runs fn; returns the corruption reason or 'ok'; anything else thrown fails the property. */
function outcome(fn: () => unknown): CorruptionReason | 'ok' {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof CorruptBatchError) {
      expect(e.message).toMatch(/^corrupt batch at position \d+ \(base offset (-?\d+|unknown)\): [a-z-]+: /);
      expect(Number.isInteger(e.position)).toBe(true);
      return e.reason;
    }
    throw e;
  }
}

/** Every decoder entry point on buf: only CorruptBatchError, and the strict paths agree. */
function checkAllDecoders(buf: Buffer): void {
  for (const checkRecords of [false, true]) {
    const v = outcome(() => validateBatch(buf, 0, { checkRecords }));
    const d = outcome(() => decodeBatch(buf, 0, { checkRecords }));
    if (checkRecords) {
      // The allocation-free walk and the decoder must reach the same verdict.
      expect(d).toBe(v);
    } else if (d === 'ok') {
      expect(v).toBe('ok');
    }
  }
  outcome(() => readBatchHeader(buf));
  outcome(() => [...recordsOf(buf)]);
  checkScan(buf);
}

function checkScan(buf: Buffer): void {
  const r = scanValidPrefix(buf);
  expect(r.validBytes).toBeLessThanOrEqual(buf.length);
  expect(r.error === null).toBe(r.validBytes === buf.length);
  // validBytes is a batch boundary: the prefix is exactly r.batches whole valid batches.
  const prefix = [...iterateBatches(buf.subarray(0, r.validBytes))];
  expect(prefix.length).toBe(r.batches);
  if (r.batches > 0) {
    const last = prefix[prefix.length - 1];
    expect(last.position + last.size).toBe(r.validBytes);
    expect(r.nextOffset).toBe(last.header.baseOffset + last.header.lastOffsetDelta + 1);
  }
}

const mutation = fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) });

describe('codec properties', () => {
  it('roundtrip: decode(encode(records)) gives the records back', () => {
    fc.assert(
      fc.property(batchArb, (opts) => {
        const batch = encodeBatch(opts);
        const h = validateBatch(batch, 0, { checkRecords: true });
        const { header, records } = decodeBatch(batch, 0, { checkRecords: true });
        expect(header).toEqual(h);
        expect(header.length + 12).toBe(batch.length);
        const first = opts.firstTimestamp!;
        const ts = opts.records.map((r) => r.timestamp ?? first);
        const max = Math.max(...ts);
        expect(header.maxTimestamp).toBe(max);
        expect(records).toEqual(
          opts.records.map((r, i) => ({
            offset: opts.baseOffset! + i,
            timestamp: opts.attributes === 8 ? max : ts[i],
            key: r.key ?? null,
            value: r.value,
            headers: r.headers ?? [],
          })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes only raise CorruptBatchError', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), (a) => checkAllDecoders(Buffer.from(a))), { numRuns: 1000 });
  });

  it('random bytes behind a valid header and CRC only raise CorruptBatchError', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 49 - 5, maxLength: 400 }),
        fc.integer({ min: 0, max: 4 }),
        fc.boolean(),
        (tail, recordCount, clearAttributes) => {
          const buf = Buffer.alloc(17 + 4 + tail.length);
          buf.writeInt32BE(buf.length - 12, 8);
          buf[16] = 2;
          buf.set(tail, 21);
          if (clearAttributes) buf.writeInt16BE(0, 21);
          buf.writeInt32BE(recordCount, 57);
          recrc(buf);
          checkAllDecoders(buf);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('mutated valid batches only raise CorruptBatchError, with and without a fixed-up CRC', () => {
    fc.assert(
      fc.property(
        batchArb,
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.option(fc.nat(), { nil: undefined }),
        (opts, mutations, fixCrc, cut) => {
          let buf = encodeBatch(opts);
          for (const m of mutations) buf[m.at % buf.length] ^= m.xor;
          if (cut !== undefined) buf = buf.subarray(0, cut % (buf.length + 1));
          if (fixCrc) recrc(buf);
          checkAllDecoders(buf);
          // Without the fix-up, any change inside the CRC's range is caught.
          if (!fixCrc && cut === undefined && mutations.every((m) => m.at % buf.length >= 17)) {
            expect(outcome(() => validateBatch(buf))).not.toBe('ok');
          }
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('scanValidPrefix over damaged sequences never throws and stops at a batch boundary', () => {
    fc.assert(
      fc.property(
        fc.array(batchArb, { minLength: 1, maxLength: 4 }),
        fc.array(mutation, { maxLength: 3 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.constantFrom('none', 'zeros', 'garbage'),
        fc.uint8Array({ maxLength: 100 }),
        (batches, mutations, cut, tail, garbage) => {
          const encoded = batches.map((o) => encodeBatch(o));
          const boundaries = [0];
          for (const b of encoded) boundaries.push(boundaries[boundaries.length - 1] + b.length);
          let buf = Buffer.concat(encoded);
          for (const m of mutations) buf[m.at % buf.length] ^= m.xor;
          if (cut !== undefined) buf = buf.subarray(0, cut % (buf.length + 1));
          if (tail === 'zeros') buf = Buffer.concat([buf, Buffer.alloc(garbage.length + 1)]);
          if (tail === 'garbage') buf = Buffer.concat([buf, garbage]);
          checkScan(buf);
          const r = scanValidPrefix(buf);
          expect(boundaries).toContain(r.validBytes);
          if (mutations.length === 0 && cut === undefined) {
            expect(r.validBytes).toBe(boundaries[boundaries.length - 1]);
            expect(r.batches).toBe(encoded.length);
            if (tail === 'zeros') expect(r.error?.reason).toBe(buf.length - r.validBytes < 12 ? 'short' : 'length-out-of-range');
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
