import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeBatch, iterateBatches, readBatchHeader } from '../records/index.ts';
import { CHECKPOINT_FILE, CLEAN_SHUTDOWN_FILE, dumpLog, Log, type AppendResult } from './index.ts';
import { makeBatch, removeTmpDirs, tmpDir } from './testing.ts';
import { flushSchedulerStats } from './flush-scheduler.ts';

afterAll(removeTmpDirs);

/** Appends batches of varied sizes and record counts; returns the append results. */
function fill(log: Log, count: number, opts: { valueBytes?: (i: number) => number; records?: (i: number) => number } = {}): AppendResult[] {
  const out: AppendResult[] = [];
  for (let i = 0; i < count; i++) {
    out.push(log.append(makeBatch(i, { records: opts.records?.(i) ?? 1 + (i % 4), valueBytes: opts.valueBytes?.(i) ?? 50 + ((i * 37) % 400) })));
  }
  return out;
}

function batchesIn(data: Buffer): Array<{ baseOffset: number; lastOffset: number }> {
  return [...iterateBatches(data)].map((b) => ({ baseOffset: b.header.baseOffset, lastOffset: b.header.baseOffset + b.header.lastOffsetDelta }));
}

describe('Log append and read', () => {
  it('assigns offsets from the log end offset and reads every offset back in the batch that holds it, across segments', () => {
    const log = Log.open(tmpDir(), { segmentBytes: 8 * 1024, indexIntervalBytes: 512 });
    const results = fill(log, 120);
    expect(results[0].baseOffset).toBe(0);
    for (let i = 1; i < results.length; i++) expect(results[i].baseOffset).toBe(results[i - 1].lastOffset + 1);
    const infos = log.segmentInfos();
    expect(infos.length).toBeGreaterThan(3);
    expect(infos.some((s) => s.indexEntries > 2)).toBe(true);
    const leo = log.logEndOffset;
    expect(leo).toBe(results[results.length - 1].lastOffset + 1);
    for (const r of results) {
      for (let o = r.baseOffset; o <= r.lastOffset; o++) {
        const got = log.read(o, 1);
        const bs = batchesIn(got.data);
        expect(bs).toEqual([{ baseOffset: r.baseOffset, lastOffset: r.lastOffset }]);
        expect(got.firstOffset).toBe(r.baseOffset);
        expect(got.nextOffset).toBe(r.lastOffset + 1);
      }
    }
    log.close();
  });

  it('reads up to maxBytes of whole batches (at least one), stops below maxOffset, spans segments and rejects offsets beyond the end', () => {
    const log = Log.open(tmpDir(), { segmentBytes: 4096 });
    const results = fill(log, 60, { records: () => 2, valueBytes: () => 200 });
    const size = results[0].bytes;
    const all = log.read(0, 1 << 20);
    expect(batchesIn(all.data).length).toBe(60);
    expect(all.nextOffset).toBe(log.logEndOffset);
    expect(log.segmentInfos().length).toBeGreaterThan(5);
    expect(batchesIn(log.read(10, size * 3).data).length).toBe(3);
    expect(batchesIn(log.read(10, size * 3 - 1).data).length).toBe(2);
    expect(batchesIn(log.read(10, 0).data).length).toBe(1);
    const hw = log.read(0, 1 << 20, 21);
    expect(hw.nextOffset).toBe(20);
    expect(batchesIn(log.read(20, 1 << 20, 21).data)).toEqual([]);
    const atEnd = log.read(log.logEndOffset, 1000);
    expect(atEnd.data.length).toBe(0);
    expect(atEnd.nextOffset).toBe(log.logEndOffset);
    expect(() => log.read(log.logEndOffset + 1, 1000)).toThrow(expect.objectContaining({ kind: 'out-of-range', details: { logStartOffset: 0, logEndOffset: log.logEndOffset } }));
    // The bytes are the stamped batches as appended.
    const first = decodeBatch(log.read(7, 1).data);
    expect(first.header.baseOffset).toBe(6);
    expect(first.records[1].offset).toBe(7);
    expect(first.records[1].value!.subarray(0, 4).toString()).toBe('b3r1');
    log.close();
  });

  it('stamps the leader epoch, keeps a follower batch\'s offsets and refuses a follower batch that is not at the log end', () => {
    const log = Log.open(tmpDir());
    log.append(makeBatch(1, { records: 3 }), { leaderEpoch: 7 });
    expect(readBatchHeader(log.read(0, 100).data).partitionLeaderEpoch).toBe(7);
    const follower = makeBatch(2, { records: 2 });
    follower.writeBigInt64BE(3n, 0);
    const r = log.append(follower, { assignOffsets: false, leaderEpoch: 8 });
    expect([r.baseOffset, r.lastOffset]).toEqual([3, 4]);
    const wrong = makeBatch(3);
    wrong.writeBigInt64BE(9n, 0);
    expect(() => log.append(wrong, { assignOffsets: false })).toThrow(/base offset 9 is not the log end offset 5/);
    expect(log.logEndOffset).toBe(5);
    log.close();
  });

  it('refuses a log directory that is a file, or lies under one, by name', () => {
    const file = path.join(tmpDir(), 'a-file');
    fs.writeFileSync(file, 'x');
    expect(() => Log.open(file)).toThrow(`${file} is not a directory: a partition's log is a directory of segment files`);
    expect(() => Log.open(path.join(file, 'p0'))).toThrow(`${path.join(file, 'p0')} is not a directory`);
  });

  it('rejects oversized, corrupt and multi-batch input with clear errors and writes nothing', () => {
    const log = Log.open(tmpDir(), { maxBatchBytes: 2048 });
    log.append(makeBatch(0));
    const before = fs.statSync(log.segmentInfos()[0].logPath).size;
    expect(() => log.append(makeBatch(1, { valueBytes: 3000 }))).toThrow(
      expect.objectContaining({ kind: 'too-large', message: expect.stringMatching(/maxBatchBytes \(message\.max\.bytes\) = 2048/) }),
    );
    const corrupt = makeBatch(2);
    corrupt[corrupt.length - 3] ^= 0xff;
    expect(() => log.append(corrupt)).toThrow(expect.objectContaining({ kind: 'corrupt-batch', message: expect.stringMatching(/crc-mismatch/) }));
    const two = Buffer.concat([makeBatch(3), makeBatch(4)]);
    expect(() => log.append(two)).toThrow(/exactly one batch/);
    expect(fs.statSync(log.segmentInfos()[0].logPath).size).toBe(before);
    expect(log.logEndOffset).toBe(1);
    expect(log.stats().failed).toBeNull();
    log.append(makeBatch(5));
    expect(log.logEndOffset).toBe(2);
    log.close();
  });
});

describe('Log segment rolls', () => {
  it('rolls when the next batch would pass segment.bytes', async () => {
    const log = Log.open(tmpDir(), { segmentBytes: 1000 });
    const results = fill(log, 10, { valueBytes: () => 300, records: () => 1 });
    const size = results[0].bytes;
    const perSegment = Math.floor(1000 / size);
    const infos = log.segmentInfos();
    expect(infos.length).toBe(Math.ceil(10 / perSegment));
    for (const s of infos) expect(s.sizeBytes).toBeLessThanOrEqual(1000);
    expect(infos.map((s) => s.baseOffset)).toEqual(infos.map((_, i) => i * perSegment));
    expect(path.basename(infos[1].logPath)).toBe(`${String(perSegment).padStart(20, '0')}.log`);
    expect(log.stats().rolls).toBe(infos.length - 1);
    // The rolled segments are flushed in the background (roll.test.ts).
    await log.rollFlushesSettled();
    expect(log.stats().rollFlushes).toBe(infos.length - 1);
    // No sparse entry fits in a segment this small, but the roll writes the segment's max timestamp.
    for (const s of infos.slice(0, -1)) {
      expect(s.indexEntries).toBe(0);
      expect(s.timeIndexEntries).toBe(1);
      const t = fs.readFileSync(s.timeIndexPath);
      expect(Number(t.readBigInt64BE(0))).toBe(1_700_000_000_000 + s.nextOffset - 1);
      expect(t.readInt32BE(8)).toBe(s.nextOffset - 1 - s.baseOffset);
    }
    log.close();
  });

  it('rolls on segment.ms counted from the first append into the segment (injected clock)', () => {
    let now = 1_000_000;
    const log = Log.open(tmpDir(), { segmentMs: 60_000 }, { now: () => now });
    log.append(makeBatch(0));
    now += 30_000;
    log.append(makeBatch(1));
    now += 30_000; // exactly segment.ms: Kafka rolls only once it is exceeded
    log.append(makeBatch(2));
    expect(log.segmentInfos().length).toBe(1);
    now += 1;
    const r = log.append(makeBatch(3));
    expect(r.segmentBaseOffset).toBe(3);
    expect(log.segmentInfos().length).toBe(2);
    now += 59_000;
    log.append(makeBatch(4));
    expect(log.segmentInfos().length).toBe(2);
    now += 2_000;
    log.append(makeBatch(5));
    expect(log.segmentInfos().map((s) => s.baseOffset)).toEqual([0, 3, 5]);
    log.close();
  });

  it('rolls when an index is full (segment.index.bytes); the time index keeps its last slot for the roll entry', () => {
    // 48 bytes: 6 offset entries, 4 time entries of which 3 are usable before the roll.
    const log = Log.open(tmpDir(), { segmentIndexBytes: 48, indexIntervalBytes: 0 });
    for (let i = 0; i < 20; i++) log.append(makeBatch(i, { timestamp: 1000 + i }));
    const infos = log.segmentInfos();
    // indexIntervalBytes 0: every batch but the first gets an entry; the time index fills after 3.
    expect(infos[0].nextOffset - infos[0].baseOffset).toBe(4);
    // The roll entry is only written when the max timestamp rose after the last entry: not here.
    expect(infos[0].timeIndexEntries).toBe(3);
    expect(infos[0].indexEntries).toBe(3);
    expect(infos.length).toBe(5);
    for (const s of infos.slice(0, -1)) expect(fs.statSync(s.timeIndexPath).size).toBe(s.timeIndexEntries * 12);
    // The active segment's entries reach its files at the next flush, roll or close.
    log.close();
    const last = infos[infos.length - 1];
    expect(fs.statSync(last.indexPath).size).toBe(last.indexEntries * 8);
  });
});

describe('Log lookups by timestamp', () => {
  it('finds the first offset whose timestamp is >= ts, for every ts, with non-monotonic timestamps', () => {
    const log = Log.open(tmpDir(), { segmentBytes: 3000, indexIntervalBytes: 300 });
    const all: Array<{ offset: number; ts: number }> = [];
    let offset = 0;
    for (let i = 0; i < 80; i++) {
      // Mostly rising, with some records from the past.
      const base = 10_000 + i * 10;
      const timestamps = [base, base + 3, i % 7 === 0 ? base - 45 : base + 5];
      log.append(makeBatch(i, { timestamps, valueBytes: 60 }));
      for (const ts of timestamps) all.push({ offset: offset++, ts });
    }
    expect(log.segmentInfos().length).toBeGreaterThan(3);
    const expected = (ts: number): number | null => all.find((r) => r.ts >= ts)?.offset ?? null;
    for (let ts = 9_900; ts <= 10_850; ts++) {
      expect([ts, log.offsetForTimestamp(ts)]).toEqual([ts, expected(ts)]);
    }
    log.close();
  });
});

describe('Log truncation', () => {
  it('truncateTo drops batches at and after the offset, deletes later segments and continues at the new end', () => {
    const dir = tmpDir();
    const log = Log.open(dir, { segmentBytes: 2000, indexIntervalBytes: 200 });
    const results = fill(log, 40, { records: () => 3, valueBytes: () => 100 });
    const segsBefore = log.segmentInfos().length;
    expect(segsBefore).toBeGreaterThan(4);
    // Inside batch 20 (offsets 60..62): the cut is at the batch start.
    log.truncateTo(61);
    expect(log.logEndOffset).toBe(60);
    expect(log.segmentInfos().length).toBeLessThan(segsBefore);
    const kept = log.segmentInfos();
    for (const s of kept) {
      expect(s.nextOffset).toBeLessThanOrEqual(60);
      expect(fs.statSync(s.logPath).size).toBe(s.sizeBytes);
      // Sealed segments' indexes are trimmed; the active one's is preallocated (sparse) to segment.index.bytes.
      expect(fs.statSync(s.indexPath).size).toBe(s === kept[kept.length - 1] ? 10 * 1024 * 1024 : s.indexEntries * 8);
    }
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(files.length).toBe(log.segmentInfos().length);
    const r = log.append(makeBatch(100, { records: 2 }));
    expect([r.baseOffset, r.lastOffset]).toEqual([60, 61]);
    for (let o = 0; o < 62; o++) expect(log.read(o, 1).firstOffset).toBe(o < 60 ? results[Math.floor(o / 3)].baseOffset : 60);
    // To a segment's base offset: that segment is emptied, the earlier one stays.
    const second = log.segmentInfos()[1].baseOffset;
    log.truncateTo(second);
    expect(log.logEndOffset).toBe(second);
    expect(log.append(makeBatch(101)).baseOffset).toBe(second);
    log.close();
    const again = Log.open(dir, { segmentBytes: 2000, indexIntervalBytes: 200 });
    expect(again.recovery.cleanShutdown).toBe(true);
    expect(again.logEndOffset).toBe(second + 1);
    for (let o = 0; o < second + 1; o++) expect(again.read(o, 1).data.length).toBeGreaterThan(0);
    again.close();
  });

  it('truncateTo below the log start starts over at that offset, and moves a checkpoint back', () => {
    const dir = tmpDir();
    const log = Log.open(dir);
    fill(log, 5);
    log.flush();
    log.truncateTo(0);
    expect(log.logEndOffset).toBe(0);
    expect(log.stats().checkpointedRecoveryPoint).toBe(0);
    expect(fs.readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').trim().split('\n')[2]).toMatch(/ 0$/);
    expect(log.append(makeBatch(9)).baseOffset).toBe(0);
    log.close();
  });
});

describe('Flush policies and stats', () => {
  it('never: no flush while appending; per-batch: one per append with flushUs reported', () => {
    const never = Log.open(tmpDir(), { flush: { kind: 'never' } });
    fill(never, 30);
    expect(never.stats().flushes).toBe(0);
    expect(never.stats().recoveryPoint).toBe(0);
    never.close();
    const per = Log.open(tmpDir(), { flush: { kind: 'per-batch' }, sync: 'fsync' });
    const rs = fill(per, 12);
    expect(rs.every((r) => r.flushed && r.flushUs > 0)).toBe(true);
    const st = per.stats();
    expect(st.flushes).toBe(12);
    expect(st.flushTimeUs.count).toBe(12);
    expect(st.writeTimeUs.count).toBe(12);
    expect(st.recoveryPoint).toBe(per.logEndOffset);
    expect(st.appends).toBe(12);
    expect(st.bytes).toBe(rs.reduce((a, r) => a + r.bytes, 0));
    expect(st.records).toBe(per.logEndOffset);
    per.close();
  });

  it('messages:N flushes once N records (not batches) are unflushed', () => {
    const log = Log.open(tmpDir(), { flush: { kind: 'messages', every: 10 } });
    const flushedAt: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = log.append(makeBatch(i, { records: 3 }));
      if (r.flushed) flushedAt.push(r.lastOffset + 1);
    }
    // 3 records a batch: flush at 12, 24, 36, 48, 60 records.
    expect(flushedAt).toEqual([12, 24, 36, 48, 60]);
    expect(log.stats().flushes).toBe(5);
    expect(log.recoveryPoint).toBe(60);
    log.close();
  });

  it('ms:T flushes from a timer only when something is unflushed, and the timer stops on close', async () => {
    const log = Log.open(tmpDir(), { flush: { kind: 'ms', every: 25 } });
    await new Promise((r) => setTimeout(r, 120));
    expect(log.stats().flushes).toBe(0);
    log.append(makeBatch(0));
    expect(log.recoveryPoint).toBe(0);
    await new Promise((r) => setTimeout(r, 150));
    expect(log.stats().flushes).toBe(1);
    expect(log.recoveryPoint).toBe(1);
    log.append(makeBatch(1));
    log.append(makeBatch(2));
    await new Promise((r) => setTimeout(r, 150));
    expect(log.stats().flushes).toBe(2);
    log.close();
    await new Promise((r) => setTimeout(r, 80));
    expect(log.stats().flushes).toBe(2);
  });

  it('ms:T on 300 logs holds one timer for the period, flushes each log, and drops the timer with the last log', async () => {
    const before = flushSchedulerStats();
    const logs = Array.from({ length: 300 }, () => Log.open(tmpDir(), { flush: { kind: 'ms', every: 30 } }));
    expect(flushSchedulerStats().timers).toBe(before.timers + 1);
    expect(flushSchedulerStats().members).toBe(before.members + 300);
    logs.forEach((l, i) => l.append(makeBatch(i)));
    await new Promise((r) => setTimeout(r, 200));
    expect(logs.map((l) => l.recoveryPoint)).toEqual(logs.map(() => 1));
    for (const l of logs) l.close();
    expect(flushSchedulerStats()).toEqual(before);
  });

  it('writes the checkpoint at most once a second while flushing, and on close with the clean-shutdown marker', () => {
    const dir = tmpDir();
    let now = 0;
    const log = Log.open(dir, { flush: { kind: 'per-batch' } }, { now: () => now });
    const at = (): string => fs.readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').split('\n')[2];
    const cps = log.stats().checkpoints;
    for (let i = 0; i < 10; i++) log.append(makeBatch(i));
    expect(log.stats().checkpoints).toBe(cps);
    expect(at()).toMatch(/ 0$/);
    now += 1000;
    log.append(makeBatch(10));
    expect(log.stats().checkpoints).toBe(cps + 1);
    expect(at()).toMatch(/ 11$/);
    log.append(makeBatch(11));
    expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).toBe(false);
    log.close();
    expect(at()).toMatch(/ 12$/);
    expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).toBe(true);
    const again = Log.open(dir);
    expect(again.recovery.cleanShutdown).toBe(true);
    expect(again.recovery.segmentsScanned).toBe(0);
    expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).toBe(false);
    expect(() => log.append(makeBatch(1))).toThrow(/closed/);
    again.close();
  });
});

describe('deferred checkpoint', () => {
  it('writes a checkpoint the once-a-second limit held back once the second has passed, with no append after it', async () => {
    const dir = tmpDir();
    let now = 0;
    const log = Log.open(dir, { flush: { kind: 'per-batch' } }, { now: () => now });
    const at = (): string => fs.readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').split('\n')[2];
    const cps = log.stats().checkpoints;
    for (let i = 0; i < 5; i++) log.append(makeBatch(i));
    // Held back: less than a second since the log opened.
    expect(log.stats().checkpoints).toBe(cps);
    expect(at()).toMatch(/ 0$/);
    now += 1000;
    // The shared timer's turn comes within a period (1 s here); nothing else is appended.
    const deadline = Date.now() + 3000;
    while (log.stats().checkpoints === cps && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(log.stats().checkpoints).toBe(cps + 1);
    expect(at()).toMatch(/ 5$/);
    // Off the shared timer again once written: close leaves no member behind.
    const members = flushSchedulerStats().members;
    log.close();
    expect(flushSchedulerStats().members).toBe(members);
  });
});

describe('crash without close', () => {
  it('a killed process leaves page-cache data that recovery validates from the checkpointed recovery point', async () => {
    const dir = tmpDir();
    let now = 0;
    const cfg = { flush: { kind: 'messages', every: 10 } as const, segmentBytes: 3000 };
    const log = Log.open(dir, cfg, { now: () => now });
    for (let i = 0; i < 60; i++) {
      if (i === 30) {
        // Lets one checkpoint through, once the rolls so far have been flushed in the background.
        await log.rollFlushesSettled();
        now += 1000;
      }
      log.append(makeBatch(i, { records: 2 }));
    }
    const st = log.stats();
    expect(st.checkpointedRecoveryPoint).toBeGreaterThan(0);
    expect(st.checkpointedRecoveryPoint).toBeLessThan(st.recoveryPoint);
    const leo = log.logEndOffset;
    const infos = log.segmentInfos();
    // A live log's active index is preallocated: dumpLog shows the zero room, not a problem.
    // Its entries reach the file before each checkpoint, so the file may lag the memory image.
    const live = dumpLog(dir).segments.at(-1)!;
    expect(live.index.zeroEntries).toBeGreaterThan(1000);
    expect(live.index.problem).toBeNull();
    expect(live.index.entries.length).toBeLessThanOrEqual(infos.at(-1)!.indexEntries);
    log.abandon();
    expect(() => log.append(makeBatch(1))).toThrow(/closed/);
    const again = Log.open(dir, cfg);
    const r = again.recovery;
    expect(r.cleanShutdown).toBe(false);
    expect(r.recoveryPoint).toBe(st.checkpointedRecoveryPoint);
    // Validated: the segment holding the recovery point and every later one.
    const fromSeg = infos.findIndex((s, i) => s.baseOffset <= r.recoveryPoint && (infos[i + 1]?.baseOffset ?? Infinity) > r.recoveryPoint);
    expect(r.segmentsScanned).toBe(infos.length - fromSeg);
    expect(r.bytesTruncated).toBe(0);
    expect(again.logEndOffset).toBe(leo);
    expect(again.recoveryPoint).toBe(leo);
    // The rebuilt index holds what the live file held, and more.
    const rebuilt = dumpLog(dir).segments.at(-1)!;
    expect(rebuilt.index.entries.slice(0, live.index.entries.length)).toEqual(live.index.entries);
    expect(rebuilt.index.entries.length).toBe(infos.at(-1)!.indexEntries);
    again.close();
  });

  it('verifyBatches=false skips the CRC check on append (for measuring its cost): recovery then cuts the bad batch', () => {
    const dir = tmpDir();
    const log = Log.open(dir, { verifyBatches: false });
    log.append(makeBatch(0));
    const bad = makeBatch(1);
    bad[bad.length - 1] ^= 0xff;
    expect(log.append(bad).baseOffset).toBe(1);
    log.abandon();
    const again = Log.open(dir);
    expect(again.logEndOffset).toBe(1);
    expect(again.recovery.truncation?.reason).toMatch(/crc-mismatch/);
    again.close();
  });
});

describe('index files are synced with the checkpoint, not at each flush', () => {
  const cfg = { flush: { kind: 'per-batch' } as const, segmentBytes: 6000, indexIntervalBytes: 300 };
  const batchOf = (i: number): Buffer => makeBatch(i, { records: 1 + (i % 3), valueBytes: 120 + ((i * 53) % 300), timestamp: 1_700_000_000_000 + i * 10 });

  /** What a clean run of the same appends leaves in the index files (the reference). */
  function referenceIndexes(n: number): Array<{ index: unknown; timeIndex: unknown }> {
    const dir = tmpDir();
    const ref = Log.open(dir, cfg);
    for (let i = 0; i < n; i++) ref.append(batchOf(i));
    ref.close();
    return dumpLog(dir).segments.map((s) => ({ index: s.index.entries, timeIndex: s.timeIndex.entries }));
  }

  it('a per-batch flush syncs the .log only; a crash before the checkpoint leaves a stale active index that recovery rebuilds', async () => {
    const dir = tmpDir();
    const now = 0; // the clock never moves: no checkpoint after open
    const log = Log.open(dir, cfg, { now: () => now });
    const atOpen = log.stats().indexSyncs; // the checkpoint written by open
    const results: AppendResult[] = [];
    for (let i = 0; i < 80; i++) results.push(log.append(batchOf(i)));
    await log.rollFlushesSettled();
    const st = log.stats();
    expect(st.flushes).toBe(80);
    expect(st.rolls).toBeGreaterThan(2);
    expect(st.checkpointedRecoveryPoint).toBe(0);
    // Rolls sync the sealed segments' indexes (2 files each, in the background); flushes sync none.
    expect(st.indexSyncs - atOpen).toBe(2 * st.rolls);
    const infos = log.segmentInfos();
    const active = infos.at(-1)!;
    expect(active.indexEntries).toBeGreaterThan(3);
    // The active segment's entries are in memory only: its file is the preallocated zeros.
    expect(dumpLog(dir).segments.at(-1)!.index.entries).toEqual([]);
    log.abandon();

    const again = Log.open(dir, cfg);
    const r = again.recovery;
    expect(r.cleanShutdown).toBe(false);
    expect(r.recoveryPoint).toBe(0);
    expect(r.bytesTruncated).toBe(0);
    expect(r.indexesRebuilt).toBe(2 * infos.length);
    expect(again.logEndOffset).toBe(results.at(-1)!.lastOffset + 1);
    expect(again.segmentInfos().map((s) => [s.baseOffset, s.indexEntries, s.timeIndexEntries])).toEqual(infos.map((s) => [s.baseOffset, s.indexEntries, s.timeIndexEntries]));
    // Lookups through the rebuilt indexes find every offset in the batch that holds it.
    results.forEach((res, i) => {
      for (let o = res.baseOffset; o <= res.lastOffset; o++) {
        const got = again.read(o, 1);
        expect([...iterateBatches(got.data)].map((b) => b.header.baseOffset)).toEqual([res.baseOffset]);
      }
      // And through the rebuilt time indexes: batch i's records carry timestamp base + 10 i.
      expect(again.offsetForTimestamp(1_700_000_000_000 + i * 10)).toBe(res.baseOffset);
    });
    again.close();
    expect(dumpLog(dir).segments.map((s) => ({ index: s.index.entries, timeIndex: s.timeIndex.entries }))).toEqual(referenceIndexes(80));
  });

  it('the checkpoint writes and syncs the index entries it covers first; a crash after it trusts the sealed segments\' index files', async () => {
    const dir = tmpDir();
    let now = 0;
    const log = Log.open(dir, cfg, { now: () => now });
    for (let i = 0; i < 60; i++) log.append(batchOf(i));
    await log.rollFlushesSettled();
    const before = log.stats();
    now += 1000;
    log.append(batchOf(60));
    const st = log.stats();
    expect(st.checkpoints).toBe(before.checkpoints + 1);
    expect(st.checkpointedRecoveryPoint).toBe(log.logEndOffset);
    // The active segment's index changed since the last roll: synced with the checkpoint.
    expect(st.indexSyncs).toBeGreaterThan(before.indexSyncs);
    const infos = log.segmentInfos();
    expect(infos.length).toBeGreaterThan(2);
    const onDisk = dumpLog(dir).segments;
    expect(onDisk.map((s) => s.index.entries.length)).toEqual(infos.map((s) => s.indexEntries));
    // More appends after the checkpoint, then a crash.
    for (let i = 61; i < 70; i++) log.append(batchOf(i));
    expect(log.stats().checkpoints).toBe(st.checkpoints);
    const leo = log.logEndOffset;
    const segs = log.segmentInfos().length;
    log.abandon();

    const again = Log.open(dir, cfg);
    const r = again.recovery;
    expect(r.recoveryPoint).toBe(st.checkpointedRecoveryPoint);
    // Sealed segments below the checkpoint are trusted: their index files are loaded, not rebuilt.
    const validated = segs - infos.findIndex((s, i) => (infos[i + 1]?.baseOffset ?? Infinity) > r.recoveryPoint);
    expect(r.segmentsScanned).toBe(validated);
    expect(r.indexesRebuilt).toBe(2 * validated);
    expect(again.logEndOffset).toBe(leo);
    for (let o = 0; o < leo; o++) {
      const got = again.read(o, 1);
      const [b] = [...iterateBatches(got.data)];
      expect(b.header.baseOffset).toBeLessThanOrEqual(o);
      expect(b.header.baseOffset + b.header.lastOffsetDelta).toBeGreaterThanOrEqual(o);
    }
    again.close();
    expect(dumpLog(dir).segments.map((s) => ({ index: s.index.entries, timeIndex: s.timeIndex.entries }))).toEqual(referenceIndexes(70));
  });
});
