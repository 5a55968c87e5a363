// The check's bound (bench-bound.ts, crc32c.c checkedWriteLoop): the C loop writes what it says
// it writes (every copy, stamped with its offset when checked), refuses a batch that fails the
// check, reports a failed write's errno, and the bound is the balanced ratio of real runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nativeCheckedWriteLoop } from '../records/crc.ts';
import { readI64 } from '../records/index.ts';
import { planRows } from './bench-plan.ts';
import { balancedRatio, checkBoundApplies, measureCheckBound } from './bench-bound.ts';
import { encodeSizedBatch } from './sized-batch.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-bench-bound-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const [SPEC_64K] = planRows({ modes: ['buffered'], flushes: ['never'], batches: [65536], verify: [true] });

/**
 * The addon's loop, for a test that needs it. Under CI=true it must run; elsewhere without it
 * the test checks what the bench says instead (the bound names why it is missing) and stops.
 */
function loopOrReason(): NonNullable<typeof nativeCheckedWriteLoop> | null {
  if (nativeCheckedWriteLoop !== null) return nativeCheckedWriteLoop;
  if (process.env.CI === 'true') throw new Error('the crc32c addon does not run: engine/records/crc.test.ts names why');
  expect(measureCheckBound(SPEC_64K, tmp, 65536, 1)).toMatch(/^no check bound: the crc32c addon does not run/);
  return null;
}

describe('check bound', () => {
  it('checkedWriteLoop writes count copies at consecutive positions, stamped with their offsets when checked', () => {
    const loop = loopOrReason();
    if (loop === null) return;
    const batch = encodeSizedBatch(4096, 4, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
    for (const check of [true, false]) {
      const file = path.join(tmp, `loop-${check}.dat`);
      const fd = fs.openSync(file, 'wx');
      const us = loop(fd, batch, 5, check);
      fs.closeSync(fd);
      expect(us).toBeGreaterThan(0);
      const data = fs.readFileSync(file);
      expect(data.length).toBe(5 * 4096);
      for (let i = 0; i < 5; i++) {
        const copy = data.subarray(i * 4096, (i + 1) * 4096);
        expect(readI64(copy, 0)).toBe(check ? i : readI64(batch, 0));
        expect(copy.subarray(8).equals(batch.subarray(8))).toBe(true);
      }
    }
  });

  it('refuses a batch that fails the check, writing nothing, and returns a failed write as -errno', () => {
    const loop = loopOrReason();
    if (loop === null) return;
    const batch = encodeSizedBatch(4096, 4, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
    const corrupt = Buffer.from(batch);
    corrupt[4000] ^= 0xff;
    const file = path.join(tmp, 'corrupt.dat');
    const fd = fs.openSync(file, 'wx');
    try {
      expect(() => loop(fd, corrupt, 3, true)).toThrow(/checkedWriteLoop: buf is not one batch that passes the append's check/);
      expect(fs.fstatSync(fd).size).toBe(0);
      // Unchecked, the same bytes are written as they are.
      expect(loop(fd, corrupt, 1, false)).toBeGreaterThan(0);
      expect(fs.fstatSync(fd).size).toBe(4096);
    } finally {
      fs.closeSync(fd);
    }
    const ro = fs.openSync(file, 'r');
    try {
      expect(loop(ro, batch, 1, false)).toBe(-os.constants.errno.EBADF);
    } finally {
      fs.closeSync(ro);
    }
    expect(() => loop(-1, batch, 1, false)).toThrow(/checkedWriteLoop\(fd, buf, count, check\)/);
    expect(() => loop(0, batch, 0, false)).toThrow(/count an integer >= 1/);
  });

  it('measureCheckBound: alternating runs of both loops into fresh files, removed afterwards', () => {
    if (loopOrReason() === null) return;
    const spec = SPEC_64K;
    expect(checkBoundApplies(spec)).toBe(true);
    const dir = path.join(tmp, 'measure');
    fs.mkdirSync(dir);
    const b = measureCheckBound(spec, dir, 4 * 2 ** 20, 2);
    if (typeof b === 'string') throw new Error(b);
    expect(b.runs).toBe(2);
    expect(b.checkedMBps).toBeGreaterThan(0);
    expect(b.bareMBps).toBeGreaterThan(0);
    expect(b.ratio).toBeGreaterThan(0);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('applies to buffered never rows with the check on only', () => {
    const rows = planRows({});
    const applies = rows.filter(checkBoundApplies).map((r) => `${r.mode} ${r.flush.kind} ${r.batchBytes} ${r.verify}`);
    expect(applies).toEqual(['buffered never 4096 true', 'buffered never 65536 true', 'buffered never 1048576 true']);
  });

  it('balancedRatio: a factor on whichever run comes second cancels within a block', () => {
    // True ratio 0.9; the second run of each pair is 1.3x slower, so the orders read 0.9 x 1.3 and 0.9 / 1.3.
    expect(balancedRatio([0.9 * 1.3, 0.9 / 1.3, 0.9 * 1.3, 0.9 / 1.3, 0.9 * 1.3])).toBeCloseTo(0.9, 10);
    expect(balancedRatio([0.8])).toBe(0.8);
    expect(Number.isNaN(balancedRatio([]))).toBe(true);
  });
});
