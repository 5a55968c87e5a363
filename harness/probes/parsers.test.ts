import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviceForPath } from '../../engine/common/device.ts';
import { diskstatsDevices, parseDiskstats } from './diskstats.ts';
import { interpolateCounters, iostatBetween } from './iostat.ts';
import { parseVmstat } from './vmstat.ts';
import { foldVmStats } from '../../test/vmstat-fold.ts';

// Captured from this machine's /proc/vmstat (excerpt, order as the kernel prints it).
const VMSTAT = `nr_free_pages 6059339
nr_zone_inactive_anon 2
nr_dirty 2191
nr_writeback 0
nr_writeback_temp 0
nr_dirtied 145192
nr_written 103883
nr_dirty_threshold 1218469
nr_dirty_background_threshold 608491
pgpgin 264793
`;

// Captured /proc/diskstats line (kernel 6.18: 20 fields incl. discard and flush).
const LINE_A = ' 254       0 vda 5737 3724 529586 3381 1246 14942 800984 2025 0 1936 5571 3110 49 41248 163 15 0';
// One second later, by hand: +10 reads (+2 merged, +160 sectors, +5 ms), +2000 writes
// (+500 merged, +32000 sectors, +300 ms), 1 in flight, io_ticks +680, weighted +900,
// discards +0, +1000 flushes (+120 ms).
const LINE_B = ' 254       0 vda 5747 3726 529746 3386 3246 15442 832984 2325 1 2616 6471 3110 49 41248 163 1015 120';
const LOOP = '   7       0 loop0 35 0 244 1 6 0 4 1 0 8 4 0 0 0 0 6 1';

describe('parseVmstat', () => {
  it('reads the six figures from captured text', () => {
    expect(parseVmstat(VMSTAT, 12.5)).toEqual({
      tMs: 12.5,
      nrDirty: 2191,
      nrWriteback: 0,
      nrDirtied: 145192,
      nrWritten: 103883,
      dirtyThreshold: 1218469,
      dirtyBackgroundThreshold: 608491,
    });
  });

  it('does not confuse nr_writeback with nr_writeback_temp or nr_dirty with nr_dirtied', () => {
    const text = 'nr_writeback_temp 77\nnr_dirtied 5\nnr_dirty 1\nnr_writeback 2\nnr_written 3\nnr_dirty_threshold 9\nnr_dirty_background_threshold 8\n';
    const s = parseVmstat(text, 0);
    expect([s.nrDirty, s.nrWriteback, s.nrDirtied]).toEqual([1, 2, 5]);
  });

  it('names every missing key', () => {
    expect(() => parseVmstat('nr_dirty 1\nnr_writeback 0\n', 0)).toThrow(
      /missing nr_dirtied, nr_written, nr_dirty_threshold, nr_dirty_background_threshold/,
    );
    expect(() => parseVmstat('', 0)).toThrow(/empty text/);
    expect(() => parseVmstat(VMSTAT.replace('nr_dirty 2191', 'nr_dirty x'), 0)).toThrow(/nr_dirty is not a number/);
  });

  it('parses the real /proc/vmstat, and nr_dirtied grows by at least the pages a buffered write dirties', () => {
    const before = parseVmstat(readFileSync('/proc/vmstat', 'utf8'), 0);
    expect(before.dirtyThreshold).toBeGreaterThan(0);
    expect(before.dirtyThreshold).toBeGreaterThanOrEqual(before.dirtyBackgroundThreshold);
    const { reads, ...writeSide } = before;
    for (const v of Object.values(writeSide)) expect(Number.isInteger(v) && v >= 0).toBe(true);
    // This kernel (6.x) has every read-side key: pgpgin, pgmajfault, workingset_refault_file, pgscan_*, pgsteal_*.
    expect(reads).toBeDefined();
    for (const v of Object.values(reads!)) expect(Number.isInteger(v) && v >= 0).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), 'durolab-vmstat-'));
    try {
      const fd = openSync(join(dir, 'f'), 'w');
      const chunk = Buffer.alloc(1 << 20, 7);
      for (let i = 0; i < 8; i++) writeSync(fd, chunk);
      // The counts are per CPU until folded (test/vmstat-fold.ts): fold them before each read,
      // or allow for a CPU's batch.
      const foldedMid = foldVmStats();
      const mid = parseVmstat(readFileSync('/proc/vmstat', 'utf8'), 1);
      fsyncSync(fd);
      closeSync(fd);
      const foldedAfter = foldVmStats();
      const after = parseVmstat(readFileSync('/proc/vmstat', 'utf8'), 2);
      // 8 MiB = 2048 pages of 4 KiB; other processes can only add to the counters.
      expect(mid.nrDirtied - before.nrDirtied).toBeGreaterThanOrEqual(foldedMid ? 2048 : 1024);
      expect(after.nrWritten - before.nrWritten).toBeGreaterThanOrEqual(foldedAfter ? 2048 : 1024);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseDiskstats', () => {
  it('reads all 17 counters of a captured 20-field line', () => {
    expect(parseDiskstats(`${LOOP}\n${LINE_A}\n`, 'vda', 100)).toEqual({
      tMs: 100,
      device: 'vda',
      readsCompleted: 5737,
      readsMerged: 3724,
      sectorsRead: 529586,
      readTimeMs: 3381,
      writesCompleted: 1246,
      writesMerged: 14942,
      sectorsWritten: 800984,
      writeTimeMs: 2025,
      inFlight: 0,
      ioTimeMs: 1936,
      weightedIoTimeMs: 5571,
      discardsCompleted: 3110,
      discardsMerged: 49,
      sectorsDiscarded: 41248,
      discardTimeMs: 163,
      flushesCompleted: 15,
      flushTimeMs: 0,
    });
  });

  it('leaves discard and flush fields out on older kernels (14 and 18 fields)', () => {
    const old14 = '   8       0 sda 1 2 3 4 5 6 7 8 0 9 10';
    const k418 = '   8       0 sda 1 2 3 4 5 6 7 8 0 9 10 11 12 13 14';
    const a = parseDiskstats(old14, 'sda', 0);
    expect(a.weightedIoTimeMs).toBe(10);
    expect(a.discardsCompleted).toBeUndefined();
    expect(a.flushesCompleted).toBeUndefined();
    const b = parseDiskstats(k418, 'sda', 0);
    expect(b.discardTimeMs).toBe(14);
    expect(b.flushesCompleted).toBeUndefined();
  });

  it('matches the device name exactly and names the devices found when it is absent', () => {
    expect(() => parseDiskstats(`${LOOP}\n${LINE_A}\n`, 'vd', 0)).toThrow(
      '/proc/diskstats: device "vd" not found; devices present: loop0, vda',
    );
    expect(() => parseDiskstats('', 'vda', 0)).toThrow(/none: empty text/);
    expect(() => parseDiskstats(' 254 0 vda 1 2 3', 'vda', 0)).toThrow(/6 fields, expected at least 14/);
    expect(diskstatsDevices(`${LOOP}\n${LINE_A}`)).toEqual(['loop0', 'vda']);
  });

  it('parses the real /proc/diskstats line of the device holding the temp dir', async () => {
    const info = await deviceForPath(tmpdir());
    expect(info.device).not.toBeNull();
    const c = parseDiskstats(readFileSync('/proc/diskstats', 'utf8'), info.device as string, 0);
    expect(c.device).toBe(info.device);
    expect(c.writesCompleted).toBeGreaterThan(0);
    expect(c.sectorsWritten).toBeGreaterThan(0);
    expect(c.flushesCompleted).toBeTypeOf('number'); // kernel here is 6.x
  });
});

describe('iostatBetween', () => {
  const a = parseDiskstats(LINE_A, 'vda', 10_000);

  it('gives the hand-computed iostat -x figures for one second', () => {
    const b = parseDiskstats(LINE_B, 'vda', 11_000);
    const f = iostatBetween(a, b);
    expect(f.intervalMs).toBe(1000);
    expect(f.rPerSec).toBeCloseTo(10, 10);
    expect(f.rkBPerSec).toBeCloseTo(80, 10); // 160 sectors * 512 B
    expect(f.rrqmPerSec).toBeCloseTo(2, 10);
    expect(f.rAwaitMs).toBeCloseTo(0.5, 10); // 5 ms / 10 reads
    expect(f.wPerSec).toBeCloseTo(2000, 10);
    expect(f.wkBPerSec).toBeCloseTo(16000, 10); // 32000 sectors / 2
    expect(f.wrqmPerSec).toBeCloseTo(500, 10);
    expect(f.wAwaitMs).toBeCloseTo(0.15, 10); // 300 ms / 2000 writes
    expect(f.fPerSec).toBeCloseTo(1000, 10);
    expect(f.fAwaitMs).toBeCloseTo(0.12, 10); // 120 ms / 1000 flushes
    expect(f.aquSz).toBeCloseTo(0.9, 10); // 900 weighted ms / 1000 ms
    expect(f.utilPct).toBeCloseTo(68, 10); // 680 ms busy / 1000 ms
  });

  it('scales rates, not per-request figures, with the interval', () => {
    const b = parseDiskstats(LINE_B, 'vda', 10_500);
    const f = iostatBetween(a, b);
    expect(f.wPerSec).toBeCloseTo(4000, 10);
    expect(f.wkBPerSec).toBeCloseTo(32000, 10);
    expect(f.wAwaitMs).toBeCloseTo(0.15, 10);
    expect(f.aquSz).toBeCloseTo(1.8, 10);
    expect(f.utilPct).toBe(100); // 680 ms busy in 500 ms: capped
  });

  it('reports await 0 when nothing completed, null flush figures without flush counters', () => {
    const f = iostatBetween(a, { ...a, tMs: 11_000 });
    expect([f.wPerSec, f.wAwaitMs, f.rAwaitMs, f.fPerSec, f.fAwaitMs, f.utilPct]).toEqual([0, 0, 0, 0, 0, 0]);
    const old = parseDiskstats('   8 0 sda 1 2 3 4 5 6 7 8 0 9 10', 'sda', 0);
    const g = iostatBetween(old, { ...old, tMs: 1000, writesCompleted: 15 });
    expect(g.wPerSec).toBe(10);
    expect(g.fPerSec).toBeNull();
    expect(g.fAwaitMs).toBeNull();
  });

  it('handles a 32-bit wrap of the millisecond fields', () => {
    const before = { ...a, writeTimeMs: 2 ** 32 - 100 };
    const after = { ...a, tMs: 11_000, writesCompleted: a.writesCompleted + 100, writeTimeMs: 200 };
    expect(iostatBetween(before, after).wAwaitMs).toBeCloseTo(3, 10); // 300 ms / 100 writes
    const mid = interpolateCounters(before, after, 10_500);
    expect(mid.writeTimeMs).toBeCloseTo(50, 10); // wrapped half-way: 2^32-100 + 150
    expect(iostatBetween(mid, after).wAwaitMs).toBeCloseTo(3, 10);
  });

  it('rejects readings of different devices or out of order', () => {
    const b = parseDiskstats(LINE_B, 'vda', 11_000);
    expect(() => iostatBetween(b, a)).toThrow(/time order/);
    expect(() => iostatBetween(a, { ...b, device: 'sda' })).toThrow(/different devices \(vda vs sda\)/);
  });

  it('interpolates counters linearly between two readings', () => {
    const b = parseDiskstats(LINE_B, 'vda', 11_000);
    const m = interpolateCounters(a, b, 10_250);
    expect(m.writesCompleted).toBeCloseTo(1246 + 500, 10);
    expect(m.flushesCompleted).toBeCloseTo(15 + 250, 10);
    const f = iostatBetween(a, m);
    expect(f.wPerSec).toBeCloseTo(2000, 8);
    expect(f.wAwaitMs).toBeCloseTo(0.15, 10);
  });
});

describe('parseProcStatCpuMs', () => {
  it('reads utime + stime after a command name with spaces and parentheses, and refuses other text', async () => {
    const { parseProcStatCpuMs, processesCpuMs } = await import('./process-stat.ts');
    const line = '4242 (java (main) x) S 1 4242 4242 0 -1 4194560 93412 0 12 0 1234 567 0 0 20 0 61 0 2150 4310601728 105210 18446744073709551615';
    expect(parseProcStatCpuMs(line, 't')).toBe(18_010);
    expect(() => parseProcStatCpuMs('garbage', '/proc/1/stat')).toThrow(/\/proc\/1\/stat: not a \/proc\/<pid>\/stat line/);
    // This process, read for real: a positive figure that grows with work.
    const fs = await import('node:fs/promises');
    const before = (await processesCpuMs([process.pid], (f) => fs.readFile(f, 'utf8')))!;
    const t0 = Date.now();
    while (Date.now() - t0 < 150) Math.sqrt(Math.random());
    const after = (await processesCpuMs([process.pid], (f) => fs.readFile(f, 'utf8')))!;
    expect(after).toBeGreaterThan(before);
    expect(await processesCpuMs([2 ** 30], (f) => fs.readFile(f, 'utf8'))).toBeNull();
  });
});

describe('processFootprint', () => {
  it('counts this process\'s descriptors and resident memory, and is null for a process that is gone', async () => {
    const { parseVmRss, processFootprint } = await import('./process-stat.ts');
    const fs = await import('node:fs/promises');
    expect(parseVmRss('Name:\tnode\nVmRSS:\t  123456 kB\nThreads:\t7\n', 't')).toBe(123456 * 1024);
    expect(() => parseVmRss('Name: x\n', '/proc/1/status')).toThrow(/\/proc\/1\/status: no VmRSS line/);
    const before = (await processFootprint(process.pid, fs))!;
    const fd = openSync(join(tmpdir(), `durolab-footprint-${process.pid}`), 'w');
    const after = (await processFootprint(process.pid, fs))!;
    closeSync(fd);
    rmSync(join(tmpdir(), `durolab-footprint-${process.pid}`));
    expect(after.fds).toBe(before.fds + 1);
    expect(before.rssBytes).toBeGreaterThan(10 * 2 ** 20);
    expect(await processFootprint(2 ** 30, fs)).toBeNull();
  });
});
