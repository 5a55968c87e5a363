import { describe, expect, it } from 'vitest';
import { checkAppendLog, fillRecord } from './append-log.ts';

const log = (n: number, size = 64): Buffer => {
  const buf = Buffer.alloc(n * size);
  for (let i = 0; i < n; i++) fillRecord(buf.subarray(i * size, (i + 1) * size), i);
  return buf;
};

describe('append log check', () => {
  it('counts an intact file', () => {
    expect(checkAppendLog(log(10), 64)).toEqual({ recordBytes: 64, fileBytes: 640, validRecords: 10, trailingBytes: 0 });
    expect(checkAppendLog(Buffer.alloc(0), 64)).toMatchObject({ validRecords: 0, fileBytes: 0 });
  });

  it('stops at the first record that is zeros, torn or out of sequence, and counts a torn tail', () => {
    const zeros = log(10);
    zeros.fill(0, 5 * 64, 6 * 64);
    expect(checkAppendLog(zeros, 64)).toMatchObject({ validRecords: 5, firstInvalid: { index: 5, offset: 320, reason: expect.stringMatching(/zeros/) } });

    const torn = log(10);
    torn[7 * 64 + 40] ^= 0xff;
    expect(checkAppendLog(torn, 64)).toMatchObject({ validRecords: 7, firstInvalid: { index: 7, reason: expect.stringMatching(/pattern/) } });

    const swapped = Buffer.concat([log(3), log(5).subarray(4 * 64)]);
    expect(checkAppendLog(swapped, 64)).toMatchObject({ validRecords: 3, firstInvalid: { index: 3, reason: 'sequence 4 where 3 was expected' } });

    expect(checkAppendLog(Buffer.concat([log(4), Buffer.alloc(10, 1)]), 64)).toMatchObject({ validRecords: 4, trailingBytes: 10 });
  });

  it('rejects a record size below the header', () => {
    expect(() => checkAppendLog(Buffer.alloc(0), 8)).toThrow(/recordBytes must be an integer >= 32/);
    expect(() => fillRecord(Buffer.alloc(8), 0)).toThrow(/below 32 bytes/);
  });
});
