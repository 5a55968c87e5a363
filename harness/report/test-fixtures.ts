// Run results for the report tests: real HdrHistograms filled with seeded log-normal
// latencies, and per-second series shaped like the modes they stand for (a buffered cell
// that stalls when writeback kicks in, a flushing cell that is slow and steady).

import { build, encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import { seededRandom } from '../common/seeded-random.ts';
import { summarizeLatency } from '../../engine/common/latency.ts';
import type { CellResult, LatencySummary, RunResult, TimePoint, Trial } from '../results/types.ts';

function normal(rand: () => number): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export interface LatencyShape {
  medianUs: number;
  sigma: number;
  count: number;
  seed: number;
}

export function latencyHistogram(shape: LatencyShape): { base64: string; summary: LatencySummary } {
  const rand = seededRandom(shape.seed);
  const h = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  for (let i = 0; i < shape.count; i++) {
    h.recordValue(Math.max(1, Math.round(shape.medianUs * Math.exp(shape.sigma * normal(rand)))));
  }
  const summary: LatencySummary = summarizeLatency(h);
  const base64 = encodeIntoCompressedBase64(h);
  h.destroy();
  return { base64, summary };
}

export interface CellShape {
  id: string;
  params: Record<string, string | number | boolean>;
  recordsPerSec: number;
  recordBytes?: number;
  latency: Omit<LatencyShape, 'seed'>;
  /** Seconds (from..to) where the rate collapses while writeback runs. */
  stall?: [number, number];
  flushesPerSec?: number;
  ackedLost?: number;
  trials?: Trial[];
  accelerator?: 'kvm' | 'tcg';
  status?: CellResult['status'];
  note?: string;
  seconds?: number;
  errors?: Record<string, number>;
}

function makeCell(shape: CellShape, seed: number): CellResult {
  const { base64, summary } = latencyHistogram({ ...shape.latency, seed });
  const rand = seededRandom(seed + 1);
  const seconds = shape.seconds ?? 30;
  const recordBytes = shape.recordBytes ?? 1024;
  const timeseries: TimePoint[] = [];
  let dirty = 0;
  for (let t = 1; t <= seconds; t++) {
    const stalled = shape.stall && t >= shape.stall[0] && t <= shape.stall[1];
    const rate = stalled ? shape.recordsPerSec * 0.02 : shape.recordsPerSec * (0.93 + 0.14 * rand());
    const flushing = (shape.flushesPerSec ?? 0) > 0;
    // Buffered writes pile up as dirty pages until writeback drains them in the stall.
    const bypassesCache = shape.params.io === 'direct';
    dirty = flushing || bypassesCache ? 20 + rand() * 30 : stalled ? dirty * 0.35 : dirty + (rate * recordBytes) / 4096;
    timeseries.push({
      t,
      recordsPerSec: Math.round(rate),
      p99Us: Math.round(summary.p99 * (stalled ? 40 : 0.85 + 0.3 * rand())),
      nrDirty: Math.round(dirty),
      nrWriteback: Math.round(stalled ? 30_000 + 10_000 * rand() : rand() * 40),
      writesPerSec: Math.round(flushing ? shape.flushesPerSec! * 2 : bypassesCache ? rate / 4 : stalled ? 2_500 : 5 + rand() * 10),
      writeKBPerSec: Math.round(flushing || bypassesCache ? (rate * recordBytes) / 1000 : stalled ? 180_000 : rand() * 200),
      flushesPerSec: Math.round(flushing ? shape.flushesPerSec! * (0.9 + 0.2 * rand()) : stalled ? 3 : 0),
    });
  }
  const measured = (shape.status ?? 'ok') === 'ok' || shape.status === 'interrupted';
  const acked = measured ? Math.round(shape.recordsPerSec * seconds) : 0;
  const flushes = Math.round((shape.flushesPerSec ?? 0) * seconds);
  return {
    id: shape.id,
    params: shape.params,
    status: shape.status ?? 'ok',
    note: shape.note,
    throughput: measured
      ? {
          recordsPerSec: shape.recordsPerSec,
          mbPerSec: (shape.recordsPerSec * recordBytes) / 1e6,
          requestsPerSec: shape.recordsPerSec / 10,
        }
      : { recordsPerSec: 0, mbPerSec: 0, requestsPerSec: 0 },
    latencyUs: measured ? summary : { p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, count: 0 },
    errors: shape.errors ?? {},
    ledger: { acked, ackedLost: shape.ackedLost ?? 0, duplicates: 0, outOfOrder: 0, corrupt: 0 },
    broker: {
      flushes,
      flushTimeUs: flushes ? { p50: 180, p99: 430, p999: 900, max: 2100 } : { p50: 0, p99: 0, p999: 0, max: 0 },
      segments: Math.max(1, Math.ceil((acked * recordBytes) / (64 * 1024 * 1024))),
      bytes: acked * recordBytes,
    },
    histograms: { latencyUs: measured ? base64 : '' },
    timeseries: measured ? timeseries : [],
    trials: shape.trials,
    accelerator: shape.accelerator,
  };
}

export function makeRun(cells: CellShape[], overrides: Partial<RunResult> = {}): RunResult {
  return {
    schemaVersion: 1,
    scenario: {
      name: 'io-modes',
      file: 'scenarios/io-modes.yaml',
      question: 'How much throughput and tail latency does each flush policy cost, and what does it buy in acknowledged records kept?',
      raw: { name: 'io-modes', matrix: { flush: ['never', 'per-batch'] }, duration: '30s' },
    },
    runId: '20250101T120000Z-a1b2',
    status: 'complete',
    startedAt: '2025-01-01T12:00:00.000Z',
    endedAt: '2025-01-01T12:02:10.000Z',
    gitCommit: '0123456789abcdef0123456789abcdef01234567',
    environment: {
      hostname: 'lab-1',
      cpu: 'Intel Xeon (virtual)',
      cores: 2,
      memoryBytes: 24 * 1024 ** 3,
      kernel: '6.1.0-18-amd64',
      os: 'Debian GNU/Linux 12',
      node: 'v20.20.2',
      dataDir: '/tmp/durolab-data',
      filesystem: 'ext4',
      device: 'vda (virtio)',
      note: 'Virtual disk with a write-back cache: fdatasync costs ~80-250 µs here, far less than real media.',
    },
    settings: { durationSec: 30, recordBytes: 1024, batchRecords: 10, vmDirty: { background_bytes: 0 } },
    target: 'process',
    cells: cells.map((c, i) => makeCell(c, 1000 + i * 17)),
    expectations: [
      { expression: 'p99(flush=per-batch) > 2 * p99(flush=never)', passed: true, detail: '1,720 µs > 2 × 505 µs' },
      { expression: 'ackedLost(acks=all) == 0', passed: true, detail: '0 == 0' },
    ],
    ...overrides,
  };
}

/** A process-target run: buffered (with a writeback stall), fdatasync per batch, O_DIRECT, and a skipped cell. */
export function processRun(): RunResult {
  return makeRun([
    {
      id: 'buffered, flush never',
      params: { io: 'buffered', flush: 'never', acks: 1 },
      recordsPerSec: 120_000,
      latency: { medianUs: 180, sigma: 0.45, count: 60_000 },
      stall: [14, 16],
    },
    {
      id: 'fdatasync per batch',
      params: { io: 'buffered', flush: 'per-batch', acks: 1 },
      recordsPerSec: 9_000,
      latency: { medianUs: 900, sigma: 0.35, count: 40_000 },
      flushesPerSec: 900,
    },
    {
      id: 'O_DIRECT',
      params: { io: 'direct', flush: 'never', acks: 1 },
      recordsPerSec: 30_000,
      latency: { medianUs: 420, sigma: 0.4, count: 40_000 },
      flushesPerSec: 0,
      errors: { ETIMEDOUT: 3 },
    },
    {
      id: 'O_DSYNC',
      params: { io: 'dsync', flush: 'never', acks: 1 },
      recordsPerSec: 0,
      latency: { medianUs: 1, sigma: 0, count: 0 },
      status: 'skipped',
      note: 'O_DSYNC not supported on tmpfs',
    },
  ]);
}

/** A VM run with power cuts under TCG and an interrupted end: trials, loss, guest page cache. */
export function powerCutRun(): RunResult {
  const trial = (index: number, acked: number, lost: number, windowSec: number, dirty: number): Trial => ({
    index,
    ledger: { acked, ackedLost: lost, duplicates: 0, outOfOrder: 0, corrupt: 0, unackedPresent: 40 + index, lostOffsetsSample: lost ? [acked - lost, acked - lost + 1] : [] },
    fault: {
      kind: 'power-cut',
      targets: [0],
      atMs: 8_000 + index * 100,
      ackedBeforeCut: acked,
      recovery: [{ broker: 0, durationMs: 420 + index * 10, bytesTruncated: lost * 1100, batchesTruncated: Math.ceil(lost / 10) }],
      lossWindowSec: windowSec,
      guestDirtyBeforeCut: { nrDirty: dirty, nrWriteback: Math.round(dirty / 20) },
    },
  });
  const buffered = [trial(0, 40_000, 3_100, 4.2, 21_000), trial(1, 41_000, 2_800, 3.9, 19_500), trial(2, 39_500, 0, 0, 300)];
  const synced = [trial(0, 3_000, 0, 0, 40), trial(1, 3_100, 0, 0, 35), trial(2, 2_950, 0, 0, 30)];
  const run = makeRun(
    [
      {
        id: 'vm buffered acks=1',
        params: { io: 'buffered', flush: 'never', acks: 1 },
        recordsPerSec: 5_000,
        latency: { medianUs: 900, sigma: 0.6, count: 20_000 },
        ackedLost: 5_900,
        trials: buffered,
        accelerator: 'tcg',
        seconds: 10,
      },
      {
        id: 'vm fdatasync acks=1',
        params: { io: 'buffered', flush: 'per-batch', acks: 1 },
        recordsPerSec: 380,
        latency: { medianUs: 6_000, sigma: 0.5, count: 3_000 },
        flushesPerSec: 38,
        trials: synced,
        accelerator: 'tcg',
        seconds: 10,
      },
      {
        id: 'vm fdatasync acks=all',
        params: { io: 'buffered', flush: 'per-batch', acks: 'all' },
        recordsPerSec: 0,
        latency: { medianUs: 1, sigma: 0, count: 0 },
        status: 'failed',
        note: 'VM did not boot within 120 s',
      },
    ],
    {
      scenario: {
        name: 'power-cut',
        file: 'scenarios/power-cut.yaml',
        question: 'Which flush policy keeps every acknowledged record through a power cut?',
        raw: { name: 'power-cut' },
      },
      runId: '20250102T090000Z-c3d4',
      status: 'incomplete',
      startedAt: '2025-01-02T09:00:00.000Z',
      endedAt: null,
      target: 'vm',
      expectations: [{ expression: 'ackedLost(flush=per-batch) == 0', passed: false, detail: 'not evaluated: cell vm fdatasync acks=all failed' }],
    },
  );
  run.cells[0].ledger.acked = buffered.reduce((a, t) => a + t.ledger.acked, 0);
  run.cells[1].ledger.acked = synced.reduce((a, t) => a + t.ledger.acked, 0);
  return run;
}
