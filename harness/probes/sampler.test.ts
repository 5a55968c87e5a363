import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { deviceForPath } from '../../engine/common/device.ts';
import { foldVmStats } from '../../test/vmstat-fold.ts';
import { perSecond } from './per-second.ts';
import { describeProbeCost, PROBE_CPU_GOAL_PCT, ProbeSampler, ProbeSeriesBuilder } from './sampler.ts';

function vmstatText(dirty: number, writeback = 0): string {
  return `nr_dirty ${dirty}\nnr_writeback ${writeback}\nnr_dirtied 0\nnr_written 0\nnr_dirty_threshold 100\nnr_dirty_background_threshold 50\n`;
}

/** A diskstats line whose counters are given; everything else 0. */
function diskText(c: { writes: number; sectors?: number; wms?: number; flushes?: number; fms?: number; ticks?: number; weighted?: number }): string {
  return `   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n 254 0 vda 0 0 0 0 ${c.writes} 0 ${c.sectors ?? 0} ${c.wms ?? 0} 0 ${c.ticks ?? 0} ${c.weighted ?? 0} 0 0 0 0 ${c.flushes ?? 0} ${c.fms ?? 0}\n`;
}

describe('ProbeSeriesBuilder + perSecond (synthetic text, exact math)', () => {
  const origin = 1_000_000;

  it('turns steady counters into exact per-second figures on buckets aligned to the origin', () => {
    const b = new ProbeSeriesBuilder({ device: 'vda', intervalMs: 250 });
    // From 500 ms before the origin to 3 s after: 1000 writes/s of 8 sectors (4 kB), 0.1 ms
    // each, 200 flushes/s of 0.05 ms, io_ticks 600 ms/s, weighted 1500 ms/s.
    for (let t = -500; t <= 3000; t += 250) {
      const s = (t + 500) / 1000;
      b.add(origin + t, vmstatText(100 + t), diskText({ writes: 1000 * s, sectors: 8000 * s, wms: 100 * s, flushes: 200 * s, fms: 10 * s, ticks: 600 * s, weighted: 1500 * s }));
    }
    const pts = perSecond(b.toSeries(), origin);
    expect(pts.map((p) => p.t)).toEqual([0, 1, 2]);
    for (const p of pts) {
      expect(p.writesPerSec).toBeCloseTo(1000, 6);
      expect(p.writeKBPerSec).toBeCloseTo(4000, 6);
      expect(p.wAwaitMs).toBeCloseTo(0.1, 6);
      expect(p.flushesPerSec).toBeCloseTo(200, 6);
      expect(p.fAwaitMs).toBeCloseTo(0.05, 6);
      expect(p.utilPct).toBeCloseTo(60, 6);
      expect(p.aquSz).toBeCloseTo(1.5, 6);
    }
    // Gauges: mean of the samples in [start, end] of each bucket: t = 0,250,...,1000 -> 100+500.
    expect(pts[0].nrDirty).toBe(600);
    expect(pts[0].nrWriteback).toBe(0);
  });

  it('gives the read side per second: device reads and the page cache misses from /proc/vmstat counters', () => {
    const b = new ProbeSeriesBuilder({ device: 'vda', intervalMs: 250 });
    // 500 reads/s of 64 sectors (32 kB) taking 0.2 ms each; 16,000 KiB/s paged in, 40 major
    // faults/s, 3,000 file refaults/s, 9,000 pages scanned and 8,000 reclaimed per second.
    for (let t = 0; t <= 2000; t += 250) {
      const s = t / 1000;
      const vm =
        vmstatText(10) +
        `pgpgin ${16_000 * s}\npgmajfault ${40 * s}\nworkingset_refault_file ${3000 * s}\npgscan_kswapd ${6000 * s}\npgscan_direct ${3000 * s}\npgsteal_kswapd ${5000 * s}\npgsteal_direct ${3000 * s}\n`;
      b.add(origin + t, vm, ` 254 0 vda ${500 * s} 0 ${32_000 * s} ${100 * s} 0 0 0 0 0 0 0 0 0 0 0 0 0\n`);
    }
    const pts = perSecond(b.toSeries(), origin);
    expect(pts.map((p) => p.t)).toEqual([0, 1]);
    for (const p of pts) {
      expect(p).toMatchObject({ readsPerSec: 500, readKBPerSec: 16_000, rAwaitMs: 0.2, pgpginKBPerSec: 16_000, majorFaultsPerSec: 40, refaultsPerSec: 3000, pagesScannedPerSec: 9000, pagesStolenPerSec: 8000 });
    }
    // A kernel without the read keys (the guest's, or before 5.9's workingset_refault_file without the old name): no read-side figures, the write side as before.
    const older = new ProbeSeriesBuilder({ device: null, intervalMs: 250 });
    for (let t = 0; t <= 1000; t += 250) older.add(origin + t, vmstatText(4) + 'pgpgin 5\n', 'ignored');
    expect(perSecond(older.toSeries(), origin)).toEqual([{ t: 0, nrDirty: 4, nrWriteback: 0 }]);
  });

  it('splits samples that straddle a bucket edge in proportion to time', () => {
    const b = new ProbeSeriesBuilder({ device: 'vda', intervalMs: 400 });
    // 100 writes in [0, 800) then 700 writes in [800, 1600): 125/s then 875/s.
    b.add(origin, vmstatText(1), diskText({ writes: 0 }));
    b.add(origin + 800, vmstatText(1), diskText({ writes: 100 }));
    b.add(origin + 1600, vmstatText(1), diskText({ writes: 800 }));
    b.add(origin + 2000, vmstatText(1), diskText({ writes: 800 }));
    const pts = perSecond(b.toSeries(), origin);
    // Bucket 0: 100 + 200/800*700 = 275; bucket 1: 600/800*700 = 525 (+0 after 1600).
    expect(pts.map((p) => p.writesPerSec)).toEqual([275, 525]);
    expect(pts[0].wAwaitMs).toBe(0);
  });

  it('skips buckets covered less than half, drops t < 0, and gives gauges only without a device', () => {
    const b = new ProbeSeriesBuilder({ device: null, intervalMs: 250, note: 'tmpfs' });
    for (let t = -1000; t <= 1400; t += 200) b.add(origin + t, vmstatText(t < 0 ? 5 : 7, 3), 'ignored');
    const s = b.toSeries();
    expect(s.note).toBe('tmpfs');
    expect(s.samples.every((x) => x.disk === null && x.iostat === null)).toBe(true);
    // Bucket 1 spans [1000, 1400]: 40 % covered -> dropped.
    expect(perSecond(s, origin)).toEqual([{ t: 0, nrDirty: 7, nrWriteback: 3 }]);
    expect(perSecond(s, origin, { minCoverage: 0.3 }).map((p) => p.t)).toEqual([0, 1]);
  });

  it('rejects out-of-order samples and missing diskstats text', () => {
    const b = new ProbeSeriesBuilder({ device: 'vda', intervalMs: 250 });
    b.add(10, vmstatText(1), diskText({ writes: 0 }));
    expect(() => b.add(10, vmstatText(1), diskText({ writes: 0 }))).toThrow(/not after the previous one/);
    expect(() => b.add(20, vmstatText(1), null)).toThrow(/no \/proc\/diskstats text for device vda/);
    expect(() => b.add(30, vmstatText(1), diskText({ writes: 0 }).replace('vda', 'sdz'))).toThrow(/"vda" not found; devices present: loop0, sdz/);
  });
});

describe('ProbeSampler (real /proc)', () => {
  it('samples vmstat and the temp dir device on its timer while this process writes and syncs in bursts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durolab-sampler-'));
    const sampler = new ProbeSampler({ dataDir: dir, intervalMs: 50 });
    try {
      sampler.mark('before-start');
      await sampler.start();
      expect(sampler.device).toBe((await deviceForPath(dir)).device);
      await sleep(200);
      sampler.mark('load-start');
      // Short synchronous bursts with pauses so the timer keeps firing in this process.
      const fd = openSync(join(dir, 'f'), 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      for (let i = 0; i < 8; i++) {
        for (let j = 0; j < 8; j++) writeSync(fd, chunk);
        fdatasyncSync(fd);
        await sleep(40);
      }
      closeSync(fd);
      sampler.mark('load-end');
      // nr_dirtied is counted per CPU and folded about once a second (test/vmstat-fold.ts): fold
      // it now, or the bound below allows for a batch.
      const folded = foldVmStats();
      await sleep(150);
      const series = await sampler.stop();

      const n = series.samples.length;
      expect(n).toBeGreaterThanOrEqual(10); // ~0.7 s at 50 ms, allowing for a busy machine
      expect(series.intervalMs).toBe(50);
      expect(series.note).toBeUndefined();
      for (let i = 1; i < n; i++) {
        expect(series.samples[i].tMs).toBeGreaterThan(series.samples[i - 1].tMs);
        expect(series.samples[i].iostat).not.toBeNull();
      }
      expect(series.samples[0].iostat).toBeNull();
      // 8 x 512 KiB were written and synced: the device saw at least 4 MiB of writes.
      const first = series.samples[0].disk!;
      const last = series.samples[n - 1].disk!;
      expect((last.sectorsWritten - first.sectorsWritten) / 2).toBeGreaterThanOrEqual(4096);
      expect(last.flushesCompleted! - first.flushesCompleted!).toBeGreaterThanOrEqual(8);
      expect(series.samples[n - 1].vmstat.nrDirtied - series.samples[0].vmstat.nrDirtied).toBeGreaterThanOrEqual(folded ? 1024 : 512);

      expect(series.marks.map((m) => m.label)).toEqual(['before-start', 'load-start', 'load-end']);
      const ls = series.marks[1].tMs;
      expect(ls).toBeGreaterThan(series.samples[0].tMs);
      expect(ls).toBeLessThan(series.samples[n - 1].tMs);
      // stop() again returns the same samples.
      expect((await sampler.stop()).samples.length).toBe(n);
    } finally {
      await sampler.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('measures its own CPU: under 2 % of one core at the default 250 ms (issue 14 item 5)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durolab-sampler-'));
    const sampler = new ProbeSampler({ dataDir: dir });
    try {
      await sampler.start();
      await sleep(2600);
      const series = await sampler.stop();
      const c = series.cost!;
      console.log(`[sampler] ${describeProbeCost(c, series.intervalMs)}; load average ${loadavg()[0].toFixed(2)}`);
      expect(series.intervalMs).toBe(250);
      expect(c.samples).toBe(series.samples.length);
      expect(c.samples).toBeGreaterThanOrEqual(6);
      expect(c.cpuUs).toBeGreaterThan(0);
      expect(c.wallMs).toBeGreaterThanOrEqual(2000);
      expect(c.usPerSample).toBe(Math.round(c.cpuUs / c.samples));
      expect(c.cpuPctOfOneCore).toBeCloseTo((c.cpuUs / 1000 / c.wallMs) * 100, 1);
      expect(c.cpuPctOfOneCore).toBeLessThan(PROBE_CPU_GOAL_PCT);
    } finally {
      await sampler.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('records vmstat only on tmpfs, and fails start() naming a bad proc path', async () => {
    const s = new ProbeSampler({ dataDir: '/dev/shm', intervalMs: 20 });
    await s.start();
    await sleep(120);
    const series = await s.stop();
    expect(series.device).toBeNull();
    expect(series.note).toMatch(/no block device/);
    expect(series.samples.length).toBeGreaterThanOrEqual(3);
    expect(series.samples.every((x) => x.iostat === null && x.vmstat.dirtyThreshold > 0)).toBe(true);

    const bad = new ProbeSampler({ dataDir: '/tmp', vmstatPath: '/proc/no-such-vmstat' });
    await expect(bad.start()).rejects.toThrow(/\/proc\/no-such-vmstat/);
    expect(() => new ProbeSampler({ dataDir: '/tmp', intervalMs: 0 })).toThrow(/intervalMs must be >= 10/);
  });
});
