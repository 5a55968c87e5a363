// checkSoleBatch (decode.ts): the append's batch check in one native call. Whenever the addon
// passes a buffer, the JS path (validateBatch / readBatchHeader, then "exactly one batch") must
// accept it too and give the same header; every kind of damage must make the addon defer to the
// JS path, so the errors a producer sees stay the JS path's precise ones. Encoder batches
// (fast-check), the same with bytes overwritten anywhere (CRC fixed up or not), cut or extended.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSizedBatch } from '../cli/sized-batch.ts';
import { crc32c, crc32cImplementation, nativeSoleBatchOk } from './crc.ts';
import { checkSoleBatch, encodeBatch, readBatchHeader, validateBatch, type BatchHeader, type EncodeBatchOptions, type ValidateOptions } from './index.ts';
import { LOG_OVERHEAD } from './types.ts';

const MAX = 1 << 24;
const batchArb: fc.Arbitrary<EncodeBatchOptions> = fc.record({
  baseOffset: fc.integer({ min: 0, max: 2 ** 40 }),
  firstTimestamp: fc.integer({ min: 0, max: 2 ** 42 }),
  attributes: fc.constantFrom(0, 8),
  producerId: fc.integer({ min: -1, max: 2 ** 40 }),
  records: fc.array(fc.record({ key: fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a))), value: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)) }), { minLength: 1, maxLength: 8 }),
});

/** The JS path's verdict on a buffer that must be exactly one batch: the header, or the error message. */
function jsVerdict(buf: Buffer, verify: boolean): BatchHeader | string {
  try {
    const opts: ValidateOptions = { maxBatchBytes: MAX, checkRecords: verify };
    const h = verify ? validateBatch(buf, 0, opts) : readBatchHeader(buf, 0, opts);
    if (LOG_OVERHEAD + h.length !== buf.length) return `not exactly one batch: ${buf.length} vs ${LOG_OVERHEAD + h.length}`;
    return { ...h };
  } catch (e) {
    return (e as Error).message;
  }
}

/** What the append path gets: checkSoleBatch plus the same size comparison. */
function appendVerdict(buf: Buffer, verify: boolean): BatchHeader | string {
  try {
    const h = checkSoleBatch(buf, { maxBatchBytes: MAX, checkRecords: verify, into: {} as BatchHeader });
    if (LOG_OVERHEAD + h.length !== buf.length) return `not exactly one batch: ${buf.length} vs ${LOG_OVERHEAD + h.length}`;
    return { ...h };
  } catch (e) {
    return (e as Error).message;
  }
}

function agree(buf: Buffer): void {
  for (const verify of [true, false]) {
    const js = jsVerdict(buf, verify);
    expect(appendVerdict(buf, verify)).toEqual(js);
    if (nativeSoleBatchOk && nativeSoleBatchOk(buf, MAX, verify, new Float64Array(12))) {
      // The addon never passes what the JS path refuses.
      expect(typeof js, `native passed, JS said ${String(js)}`).toBe('object');
    }
  }
}

describe('checkSoleBatch: the native one-call check agrees with the JS path', () => {
  it('runs natively where the addon runs (CI=true: required) and passes clean batches of every bench size', () => {
    if (crc32cImplementation.name === '@node-rs/crc32' && (process.env.CI === 'true' || process.env.DUROLAB_CRC32C === undefined)) {
      throw new Error(`the CRC-32C addon is not running: ${crc32cImplementation.fallbackReason}`);
    }
    expect(nativeSoleBatchOk === null).toBe(crc32cImplementation.name === '@node-rs/crc32');
    for (const size of [61 + 8, 4096, 65536, 1048576]) {
      const b = encodeSizedBatch(size, Math.max(1, Math.floor(size / 1024)), { producerId: 7, producerEpoch: 3, baseSequence: 11 });
      if (nativeSoleBatchOk) {
        expect(nativeSoleBatchOk(b, MAX, true, new Float64Array(12))).toBe(true);
        expect(nativeSoleBatchOk(b, MAX, false, new Float64Array(12))).toBe(true);
      }
      agree(b);
    }
  });

  it('same header on every encoder batch (fast-check), verify on and off', () => {
    fc.assert(
      fc.property(batchArb, (opts) => {
        const buf = encodeBatch(opts);
        agree(buf);
        expect(appendVerdict(buf, true)).toMatchObject({ baseOffset: opts.baseOffset, recordCount: opts.records.length });
      }),
      { numRuns: 300 },
    );
  });

  it('defers every damaged batch to the JS path: bytes overwritten (CRC fixed up or not), cut, extended', () => {
    fc.assert(
      fc.property(
        batchArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: -20, max: 20 }),
        fc.boolean(),
        fc.boolean(),
        (opts, edits, sizeChange, fixCrc, fixLength) => {
          const good = encodeBatch(opts);
          const buf = Buffer.alloc(Math.max(0, good.length + sizeChange));
          good.copy(buf, 0, 0, Math.min(good.length, buf.length));
          for (const [at, v] of edits) if (buf.length > 0) buf[at % buf.length] = v;
          if (fixLength && buf.length >= 12) buf.writeInt32BE(buf.length - LOG_OVERHEAD, 8);
          if (fixCrc && buf.length >= 21) buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
          agree(buf);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses each kind of damage natively (the JS path then names it)', () => {
    if (!nativeSoleBatchOk) return expect(crc32cImplementation.name).toBe('@node-rs/crc32');
    const ok = (b: Buffer, verify = true) => nativeSoleBatchOk!(b, MAX, verify, new Float64Array(12));
    const fresh = () => encodeBatch({ baseOffset: 5, records: [{ value: Buffer.from('abc') }, { value: Buffer.from('de') }] });
    const withCrc = (b: Buffer) => (b.writeUInt32BE(crc32c(b.subarray(21)), 17), b);
    expect(ok(fresh())).toBe(true);
    const badCrc = fresh();
    badCrc[70] ^= 1;
    expect(ok(badCrc)).toBe(false);
    expect(ok(badCrc, false)).toBe(true); // verify off checks the header only, as readBatchHeader does
    expect(appendVerdict(badCrc, true)).toMatch(/crc-mismatch/);
    const compressed = fresh();
    compressed.writeInt16BE(1, 21);
    expect(ok(withCrc(compressed))).toBe(false);
    expect(appendVerdict(compressed, true)).toMatch(/unsupported-compression/);
    const magic = fresh();
    magic[16] = 1;
    expect(ok(magic, false)).toBe(false);
    expect(ok(Buffer.concat([fresh(), Buffer.alloc(1)]), false)).toBe(false); // more than one batch
    expect(appendVerdict(Buffer.concat([fresh(), Buffer.alloc(1)]), true)).toMatch(/not exactly one batch/);
    const unsafe = fresh();
    unsafe.writeBigInt64BE(2n ** 60n, 0);
    expect(ok(withCrc(unsafe), false)).toBe(false);
    expect(appendVerdict(unsafe, false)).toMatch(/baseOffset 1152921504606846976 is not a safe JS integer/);
    const framing = fresh();
    framing.writeInt32BE(3, 57); // recordCount 3 with lastOffsetDelta 1
    expect(ok(withCrc(framing))).toBe(false);
    expect(appendVerdict(framing, true)).toMatch(/record-count-mismatch/);
    expect(ok(fresh().subarray(0, 60), false)).toBe(false);
    expect(() => (nativeSoleBatchOk as unknown as (...a: unknown[]) => boolean)(fresh(), MAX, true, new Float64Array(11))).toThrow(/Float64Array of 12/);
  });
});
