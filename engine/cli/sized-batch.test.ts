import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateBatch } from '../records/index.ts';
import { encodeSizedBatch, valueLengthsFor } from './sized-batch.ts';

describe('sized batches', () => {
  it('makes the bench sizes exactly, as valid batches with the asked record count', () => {
    for (const [bytes, count] of [
      [4096, 4],
      [65536, 64],
      [1048576, 1024],
    ]) {
      const b = encodeSizedBatch(bytes, count);
      expect(b.length).toBe(bytes);
      expect(validateBatch(b, 0, { checkRecords: true }).recordCount).toBe(count);
    }
  });

  it('hits any reachable size across varint boundaries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.integer({ min: 0, max: 20000 }), (count, extra) => {
        const bytes = 61 + count * 12 + extra;
        const b = encodeSizedBatch(bytes, count);
        expect(b.length).toBe(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('says why a size is too small for the record count', () => {
    expect(() => valueLengthsFor(100, 10)).toThrow(/a batch of 100 bytes cannot hold 10 records: the smallest is \d+ bytes/);
  });
});
