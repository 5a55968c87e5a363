// The one-call native append (native-append.ts, crc32c.c appendSoleBatch) against the JS path
// it replaces for a leader's batch: the same files, the same results, the same refusals with
// nothing written, and the write's own errno. Real files throughout.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeBatch, LOG_APPEND_TIME_FLAG } from '../records/index.ts';
import { nativeAppendSoleBatch, crc32cImplementation } from '../records/crc.ts';
import { pwriteImplementation } from './file-write.ts';
import { Log, type AppendResult } from './index.ts';
import { describeWritePath, nativeAppendAvailable, nativeAppendSwitch } from './native-append.ts';
import { makeBatch, removeTmpDirs, tmpDir } from './testing.ts';

afterAll(removeTmpDirs);
afterEach(() => {
  nativeAppendSwitch.enabled = true;
});

const nativeWrites = (log: Log): number => (log as unknown as { nativeAppender: { written: number } }).nativeAppender.written;

/** Leader appends with epochs, rolls by size and by index, a log-append-time batch and a follower append. */
function workload(log: Log): Array<Omit<AppendResult, 'writeUs' | 'flushUs'>> {
  const out: Array<Omit<AppendResult, 'writeUs' | 'flushUs'>> = [];
  const keep = ({ writeUs: _w, flushUs: _f, ...r }: AppendResult) => out.push(r);
  for (let i = 0; i < 40; i++) {
    keep(log.append(makeBatch(i, { records: 1 + (i % 5), valueBytes: 30 + ((i * 53) % 300) }), { leaderEpoch: i < 20 ? 3 : 4, nowMs: 1_700_000_000_000 + i }));
  }
  const lat = encodeBatch({ records: [{ key: null, value: Buffer.from('log-append time'), timestamp: 5 }], firstTimestamp: 5, attributes: LOG_APPEND_TIME_FLAG });
  keep(log.append(lat, { leaderEpoch: 4, nowMs: 1_700_000_001_000 }));
  const follower = makeBatch(99, { records: 2 });
  follower.writeBigInt64BE(BigInt(log.logEndOffset), 0);
  keep(log.append(follower, { assignOffsets: false, leaderEpoch: 5, nowMs: 1_700_000_002_000 }));
  keep(log.append(makeBatch(100, { records: 3 }), { nowMs: 1_700_000_003_000 }));
  return out;
}

function filesOf(dir: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => /\.(log|index|timeindex)$/.test(f))
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('hex')]),
  );
}

describe('native append', () => {
  it('runs where both addons load, and the environment record says which path appends took', () => {
    expect(nativeAppendAvailable).toBe(crc32cImplementation.name !== '@node-rs/crc32' && pwriteImplementation.name === 'native' && nativeAppendSoleBatch !== null);
    if (process.env.CI === 'true') expect(nativeAppendAvailable).toBe(true);
    expect(describeWritePath()).toMatch(nativeAppendAvailable ? /in one native call \(crc32c\.node appendSoleBatch\)$/ : /no one-call append/);
  });

  for (const io of ['buffered', 'dsync'] as const) {
    it(`writes the same files and answers the same as the JS path (${io}: epochs, rolls by size and by index, log-append time, a follower batch)`, () => {
      const config = { io, segmentBytes: 3000, segmentIndexBytes: 48, indexIntervalBytes: 200 };
      const fast = Log.open(tmpDir(), config);
      const fastResults = workload(fast);
      const fastWrites = nativeWrites(fast);
      fast.close();
      nativeAppendSwitch.enabled = false;
      const slow = Log.open(tmpDir(), config);
      const slowResults = workload(slow);
      expect(nativeWrites(slow)).toBe(0);
      slow.close();
      expect(fastResults).toEqual(slowResults);
      expect(filesOf(fast.dir)).toEqual(filesOf(slow.dir));
      expect(Object.keys(filesOf(fast.dir)).length).toBeGreaterThan(6); // several segments
      // Every leader batch but the ones that rolled a segment or ran under log-append time.
      if (nativeAppendAvailable) expect(fastWrites).toBeGreaterThan(20);
      else expect(fastWrites).toBe(0);
    });
  }

  it('refuses what the JS path refuses, with its error, writing and stamping nothing', () => {
    const log = Log.open(tmpDir(), { maxBatchBytes: 2048, segmentBytes: 1500 });
    log.append(makeBatch(0), { leaderEpoch: 2 });
    const file = log.segmentInfos()[0]!.logPath;
    const before = fs.readFileSync(file);
    const corrupt = makeBatch(1);
    corrupt[corrupt.length - 3] ^= 0xff;
    const corruptBytes = Buffer.from(corrupt);
    expect(() => log.append(corrupt, { leaderEpoch: 2 })).toThrow(expect.objectContaining({ kind: 'corrupt-batch', message: expect.stringMatching(/crc-mismatch/) }));
    expect(corrupt.equals(corruptBytes)).toBe(true);
    expect(() => log.append(makeBatch(2, { valueBytes: 3000 }))).toThrow(expect.objectContaining({ kind: 'too-large', message: expect.stringMatching(/maxBatchBytes/) }));
    expect(() => log.append(makeBatch(3, { valueBytes: 1800 }))).toThrow(expect.objectContaining({ kind: 'too-large', message: expect.stringMatching(/segmentBytes \(segment\.bytes\) = 1500/) }));
    expect(() => log.append(Buffer.concat([makeBatch(4), makeBatch(5)]))).toThrow(/exactly one batch/);
    expect(() => log.append(makeBatch(6), { leaderEpoch: 2 ** 31 })).toThrow(/partitionLeaderEpoch must be an int32/);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(log.logEndOffset).toBe(1);
    expect(log.stats().failed).toBeNull();
    log.close();
  });

  it('returns the write\'s -errno and nothing else happens to the batch (a descriptor open read-only: EBADF)', () => {
    const append = nativeAppendSoleBatch;
    if (!append) return expect(crc32cImplementation.name).toBe('@node-rs/crc32');
    const file = path.join(tmpDir(), 'ro');
    fs.writeFileSync(file, '');
    const fd = fs.openSync(file, 'r');
    try {
      const batch = makeBatch(1, { records: 2 });
      const params = Float64Array.from([0, 1 << 20, 1, 7, -1, 0x7fffffff, 1, 9]);
      const out = new Float64Array(13);
      expect(append(fd, batch, params, out)).toBe(-9); // EBADF
      // Stamped before the write: base offset 7, epoch 9, outside the CRC (a retry writes the same bytes).
      expect([Number(batch.readBigInt64BE(0)), batch.readInt32BE(12)]).toEqual([7, 9]);
      expect(fs.statSync(file).size).toBe(0);
      params[5] = 0; // the batch's lastOffsetDelta 1 passes what the segment takes: roll first
      expect(append(fs.openSync(path.join(path.dirname(file), 'rw'), 'w'), makeBatch(2, { records: 2 }), params, out)).toBe(2);
      expect(() => append(fd, batch, new Float64Array(7), out)).toThrow(/params a Float64Array of 8/);
      expect(() => append(fd, batch, params, new Float64Array(12))).toThrow(/out a Float64Array of 13/);
      expect(() => append(-1, batch, params, out)).toThrow(/fd an int32/);
    } finally {
      fs.closeSync(fd);
    }
  });
});
