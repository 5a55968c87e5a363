// Smoke tests of `durolab engine bench` on tiny rows: the shape of results/engine/latest.json
// and that both sides measured something. Not a timed assertion: the targets are judged by
// the full bench, on a quiet machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCrc32c } from '../records/index.ts';
import { formatBench } from './bench-command.ts';
import { planRows, syncEveryFor } from './bench-plan.ts';
import { orderBalancedRatio, runBench, type BenchResult } from './bench-runner.ts';
import type { BenchRep, BenchRow } from './bench-row.ts';
import { orderEffects } from './bench-goals.ts';
import { fioArgs, fioAvailable, parseFioJson, runFioSide } from './bench-side.ts';
import { missingRequirement } from '../../test/requirements.ts';

let tmp: string;
let fio: string | null;
beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-engine-bench-test-'));
  fio = await fioAvailable();
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const TINY = { volumeBytes: 2 * 2 ** 20, maxSeconds: 0.1, reps: 1 };

describe('engine bench', () => {
  it('--quick style run writes the JSON file with rows, environment and targets', async () => {
    const out = path.join(tmp, 'quick', 'latest.json');
    const progress: string[] = [];
    const r = await runBench({
      budget: TINY,
      quick: true,
      dir: tmp,
      out,
      filter: { modes: ['buffered'], flushes: ['never', 'per-batch'], batches: [65536] },
      onProgress: (l) => progress.push(l),
    });
    const file = JSON.parse(fs.readFileSync(out, 'utf8')) as BenchResult;
    expect(file).toEqual(JSON.parse(JSON.stringify(r)));
    expect(file.complete).toBe(true);
    expect(file.interrupted).toBeNull();
    expect(file.environment.kernel).toBe(os.release());
    // Which CRC-32C the engine ran, and how busy the shared machine was.
    expect(file.environment.crc32c).toBe(describeCrc32c());
    expect(file.loadAverage.start).toHaveLength(3);
    expect(file.loadAverage.end).toHaveLength(3);
    expect(file.environment.tmpfs).toBe(false);
    expect(file.environment.fsType).not.toBe('');
    expect(file.note).toMatch(/fdatasync costs ~80-250 µs/);
    // never runs twice: with batch verification (the default) and without it.
    expect(file.rows.map((x) => [x.flush, x.verify])).toEqual([
      ['never', true],
      ['never', false],
      ['per-batch', true],
    ]);
    for (const row of file.rows) {
      expect(row).toMatchObject({ mode: 'buffered', batchBytes: 65536, baseline: fio ? 'fio' : 'writeSync' });
      expect(row.error).toBeUndefined();
      expect(row.engineMBps).toBeGreaterThan(0);
      expect(row.baselineMBps).toBeGreaterThan(0);
      expect(row.ratio).toBeGreaterThan(0);
      expect(row.p50Us).toBeGreaterThan(0);
      expect(row.p99Us).toBeGreaterThanOrEqual(row.p50Us);
      expect(row.reps).toHaveLength(1);
    }
    const perBatch = file.rows.find((x) => x.flush === 'per-batch')!;
    expect(perBatch.syncEvery).toBe(1);
    expect(perBatch.engineFlushes).toBeGreaterThan(0);
    expect(perBatch.baselineSyncs).toBeGreaterThan(0);
    expect(perBatch.baselineSyncP50Us).toBeGreaterThan(0);
    expect(perBatch.baselineOpP50Us).toBeGreaterThanOrEqual(perBatch.baselineSyncP50Us!);
    expect(file.targets.map((t) => t.id)).toEqual(['ratio-large-batches', 'ratio-4k-buffered', 'per-batch-fdatasync-p50']);
    // The verify-off row is shown, not judged.
    expect(file.targets[0].checks.map((c) => c.row)).toEqual(['buffered never 64 KiB', 'buffered per-batch 64 KiB']);
    expect(file.targets[1].pass).toBeNull(); // no 4 KiB row in this run
    expect(progress).toHaveLength(3);
    expect(progress[1]).toMatch(/buffered never 65536 \(verify off\): engine/);
    const text = formatBench(file, out);
    expect(text).toMatch(/buffered\s+per-batch\s+64 KiB\s+on\s/);
    expect(text).toMatch(/buffered\s+never\s+64 KiB\s+off\s/);
    expect(text).toMatch(/(PASS|FAIL) {2}engine\/baseline throughput ratio >= 0.85/);
    expect(text).toMatch(/info {2}what batch verification .* costs[^\n]*\n {8}buffered never 64 KiB: ratio \d\.\d\d vs \d\.\d\d, append p50 \d+ vs \d+ µs/);
    expect(text).toMatch(/sum of two p50s/);
    // The check's bound: measured for the buffered never row with the check on, and only there.
    const bound = file.rows.find((x) => x.flush === 'never' && x.verify)!.checkBound!;
    expect(bound.runs).toBe(1);
    expect(bound.checkedMBps).toBeGreaterThan(0);
    expect(bound.bareMBps).toBeGreaterThan(0);
    expect(bound.ratio).toBeCloseTo(bound.checkedMBps / bound.bareMBps, 2);
    expect(file.rows.filter((x) => x.checkBound !== undefined)).toHaveLength(1);
    expect(text).toMatch(/info {2}the check's bound[^\n]*\n[^\n]*\n {8}buffered never 64 KiB: bound \d\.\d{3} \(checked [\d,.]+, bare [\d,.]+ MB\/s, 1 run\(s\) each\); the engine's ratio to (fio|writeSync): \d\.\d{3}/);
    // The fresh bench directory is gone.
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('durolab-engine-bench-'))).toEqual([]);
  });

  it('falls back to a raw fs.writeSync baseline, alternates the order and keeps partial rows on interrupt', async () => {
    const out = path.join(tmp, 'ws', 'latest.json');
    const ac = new AbortController();
    const r = await runBench({
      budget: { ...TINY, reps: 2 },
      quick: true,
      dir: tmp,
      out,
      baseline: 'writeSync',
      filter: { modes: ['direct', 'dsync'], flushes: ['per-batch'], batches: [4096, 65536] },
      signal: ac.signal,
      onProgress: () => ac.abort('SIGINT'),
    });
    expect(r.interrupted).toBe('SIGINT');
    expect(r.complete).toBe(false);
    expect(r.rows).toHaveLength(1);
    const row = r.rows[0];
    expect(row).toMatchObject({ mode: 'direct', flush: 'per-batch', batchBytes: 4096, baseline: 'writeSync' });
    expect(row.reps.map((x) => x.order)).toEqual(['engine-first', 'baseline-first']);
    expect(row.baselineSyncs).toBeGreaterThan(0);
    expect(row.ratio).toBeGreaterThan(0);
    const file = JSON.parse(fs.readFileSync(out, 'utf8')) as BenchResult;
    expect(file.interrupted).toBe('SIGINT');
    expect(file.rows).toHaveLength(1);
  });

  it('gives rows with short runs more repetitions, up to maxReps, and the ratio is the order-balanced one', async () => {
    const out = path.join(tmp, 'adaptive', 'latest.json');
    const r = await runBench({
      // Runs of 256 KiB last milliseconds: 1000 s of measurement is never reached, so maxReps bounds it.
      budget: { volumeBytes: 256 * 1024, maxSeconds: 0.05, reps: 1, minRowSeconds: 1000, maxReps: 3 },
      quick: false,
      dir: tmp,
      out,
      baseline: 'writeSync',
      filter: { modes: ['buffered'], flushes: ['never'], batches: [65536], verify: [true] },
    });
    const row = r.rows[0];
    expect(row.reps.map((x) => x.order)).toEqual(['engine-first', 'baseline-first', 'engine-first']);
    // One complete block (the first two); the third repetition has no partner.
    const [a, b] = row.reps.map((x) => x.engine.mbps / x.baseline.mbps);
    expect(row.ratio).toBeCloseTo(Math.sqrt(a * b), 3);
    expect(row.ratio).toBeCloseTo(orderBalancedRatio(row.reps), 3);
    expect(r.options).toMatchObject({ reps: 1, minRowSeconds: 1000, maxReps: 3 });
  });

  it('ends a row extended for its measured time on a complete block of both orders', async () => {
    const r = await runBench({
      // The first repetition already passes minRowSeconds; its block partner still runs.
      budget: { volumeBytes: 256 * 1024, maxSeconds: 0.05, reps: 1, minRowSeconds: 1e-6, maxReps: 8 },
      quick: false,
      dir: tmp,
      out: path.join(tmp, 'blocks', 'latest.json'),
      baseline: 'writeSync',
      filter: { modes: ['buffered'], flushes: ['never'], batches: [65536], verify: [true] },
    });
    expect(r.rows[0].reps.map((x) => x.order)).toEqual(['engine-first', 'baseline-first']);
  });

  it('cancels an order effect within each block: the ratio is the median of the blocks\' geometric means', () => {
    // A true ratio of 0.9 and a run right after the other side's run 1.3x slower.
    const rep = (order: BenchRep['order'], engine: number, baseline: number) => ({ order, engine: { mbps: engine }, baseline: { mbps: baseline } }) as BenchRep;
    const block = (k: number) => [rep('engine-first', 900 * k, 1000 * k / 1.3), rep('baseline-first', (900 * k) / 1.3, 1000 * k)];
    const reps = [...block(1), ...block(1.1), ...block(0.8), rep('engine-first', 900, 1000 / 1.3)];
    expect(orderBalancedRatio(reps)).toBeCloseTo(0.9, 9);
    // The median of single ratios would land on the more frequent order (4 engine-first, 3 baseline-first).
    const single = reps.map((x) => x.engine.mbps / x.baseline.mbps).sort((x, y) => x - y)[3];
    expect(single).toBeCloseTo(1.17, 9);
    // A lone repetition (an interrupted row) is the ratio when no block is complete.
    expect(orderBalancedRatio([rep('engine-first', 500, 1000)])).toBe(0.5);
  });

  it('names the rows whose two orders disagree, beside their balanced ratio', () => {
    const rep = (order: BenchRep['order'], engine: number, baseline: number) => ({ order, engine: { mbps: engine }, baseline: { mbps: baseline } }) as BenchRep;
    const row = (mode: string, reps: BenchRep[]) => ({ mode, flush: 'never', batchBytes: 1 << 20, verify: true, ratio: orderBalancedRatio(reps), reps, notes: [] }) as unknown as BenchRow;
    const skewed = row('direct', [rep('engine-first', 1060, 1000), rep('baseline-first', 750, 1000), rep('engine-first', 1050, 1000), rep('baseline-first', 760, 1000)]);
    const even = row('buffered', [rep('engine-first', 900, 1000), rep('baseline-first', 880, 1000)]);
    const found = orderEffects([skewed, even]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ engineFirst: 1.055, baselineFirst: 0.755 });
    expect(found[0].row).toContain('direct');
    expect(found[0].balanced).toBeCloseTo(Math.sqrt(1.055 * 0.755), 2);
  });

  it('reads fio JSON: write clat apart from fdatasync latency', async (ctx) => {
    // Without fio the writeSync test above covers the fallback; this one needs the real fio.
    if (!fio) missingRequirement(ctx, 'fio on the PATH (apt-get install fio)');
    const spec = planRows({ modes: ['buffered'], flushes: ['per-batch'], batches: [4096] })[0];
    const file = path.join(tmp, 'fio.dat');
    const args = fioArgs(spec, file, { volumeBytes: 1 << 20, maxSeconds: 0.1 });
    expect(args).toEqual(expect.arrayContaining(['--bs=4096', '--file_append=1', '--invalidate=0', '--fdatasync=1', '--output-format=json']));
    const r = await runFioSide(spec, file, { volumeBytes: 1 << 20, maxSeconds: 0.1 });
    fs.rmSync(file, { force: true });
    expect(r.kind).toBe('fio');
    expect(r.ops).toBeGreaterThan(0);
    expect(r.bytes).toBe(r.ops * 4096);
    expect(r.syncs).toBeGreaterThanOrEqual(r.ops - 1);
    expect(r.opP50Us).toBe(r.latUs.p50 + r.syncLatUs!.p50);
  });

  it('maps flush policies to the baseline sync cadence', () => {
    expect(syncEveryFor({ kind: 'never' }, 4)).toBe(0);
    expect(syncEveryFor({ kind: 'per-batch' }, 4)).toBe(1);
    expect(syncEveryFor({ kind: 'messages', every: 32 }, 4)).toBe(8);
    expect(syncEveryFor({ kind: 'messages', every: 32 }, 64)).toBe(1);
    expect(() => syncEveryFor({ kind: 'ms', every: 10 }, 4)).toThrow(/ms:10 has no fixed write count/);
    expect(planRows()).toHaveLength(21);
    expect(planRows().filter((r) => !r.verify).map((r) => `${r.mode} ${r.flush.kind} ${r.batchBytes}`)).toEqual([
      'buffered never 4096',
      'buffered never 65536',
      'buffered never 1048576',
    ]);
    expect(planRows({ verify: [true] })).toHaveLength(18);
    expect(() => planRows({ modes: ['direct'], verify: [false] })).toThrow(/leave no row to run/);
  });

  it('rejects fio output without a job', () => {
    expect(() => parseFioJson('fio: some warning\n{"jobs": []}', 1)).toThrow('fio JSON: expected jobs[0].write.io_bytes');
    expect(() => parseFioJson('nothing', 1)).toThrow('fio printed no JSON');
  });
});
