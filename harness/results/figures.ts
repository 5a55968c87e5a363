// The figures a comparison or a claim reads from one cell of run.json, each with its spread
// over repetitions (performance) or trials (loss): median with min and max. Shared by
// `durolab compare` and the claims rules so both read a cell the same way.

import type { CellResult, CellThroughput, RunResult } from './types.ts';
import { distribution, type Distribution } from '../../engine/common/stats.ts';

export const FIGURES = [
  'recordsPerSec',
  'mbPerSec',
  'p50Us',
  'p99Us',
  'p999Us',
  'maxUs',
  'acked',
  'ackedLost',
  'lostBeyondPrediction',
  'lossWindowSec',
  'segments',
  'flushes',
  'maxDirtyPages',
  'tailingCacheHit',
  'lateGroupCacheHit',
  'lateGroupP99Ratio',
  'lateGroupCatchUpMBps',
  'lateGroupCpuPerGB',
  'ackedWhileIsrShrunk',
  'notEnoughReplicas',
  'faultP99Us',
  'faultUtilPct',
] as const;
export type FigureName = (typeof FIGURES)[number];

export const FIGURE_LABEL: Record<FigureName, string> = {
  recordsPerSec: 'records/s',
  mbPerSec: 'MB/s',
  p50Us: 'p50 µs',
  p99Us: 'p99 µs',
  p999Us: 'p99.9 µs',
  maxUs: 'max µs',
  acked: 'acked',
  ackedLost: 'acked lost',
  lostBeyondPrediction: 'lost beyond the predicted window',
  lossWindowSec: 'loss window s',
  segments: 'segments',
  flushes: 'flushes',
  maxDirtyPages: 'max nr_dirty pages',
  tailingCacheHit: 'cache hit ratio of the tailing consumers',
  lateGroupCacheHit: 'cache hit ratio of the late consumer group',
  lateGroupP99Ratio: "producers' p99 while the late group read / before",
  lateGroupCatchUpMBps: 'MB/s of the late consumer group until it caught up',
  lateGroupCpuPerGB: "brokers' CPU ms per GB served while the late group caught up",
  ackedWhileIsrShrunk: 'acked while the ISR was shrunk (acks=all)',
  notEnoughReplicas: 'NOT_ENOUGH_REPLICAS answers',
  faultP99Us: "producers' p99 µs during the fault",
  faultUtilPct: 'device utilisation % during the fault',
};

/** Higher is better for these; lower for latencies and loss. Used only to word a difference. */
export const HIGHER_IS_BETTER: ReadonlySet<FigureName> = new Set(['recordsPerSec', 'mbPerSec', 'acked', 'lateGroupCatchUpMBps']);

export interface Figure extends Distribution {
  /** Samples behind the band: repetitions or trials (1 = no band). */
  n: number;
  /** 'repetitions', 'trials' or 'cell' (the cell's single figure). */
  over: 'repetitions' | 'trials' | 'cell';
}

export function isMeasuredCell(cell: CellResult): boolean {
  return cell.status === 'ok' || cell.status === 'interrupted';
}

/** A measured cell with a throughput: some repetition finished its load (a cell where none did has none: not measured, never 0). */
export function hasThroughput(cell: CellResult): cell is CellResult & { throughput: CellThroughput } {
  return isMeasuredCell(cell) && cell.throughput !== undefined;
}

/** Loss figures, read from the checked trials: a trial whose cluster did not come back (CellResult.unavailableTrials) is not among them. */
export const TRIAL_LOSS_FIGURES: ReadonlySet<FigureName> = new Set<FigureName>(['ackedLost', 'lostBeyondPrediction', 'lossWindowSec']);

/** Fault trials of the cell whose cluster did not come back: their loss was never measured. */
export function unavailableCount(cell: CellResult): number {
  return cell.unavailableTrials?.length ?? 0;
}

/** Trials whose fault fired and that are not suspect: the ones a loss figure may speak for. */
export function judgedTrials(cell: CellResult) {
  return (cell.trials ?? []).filter((t) => t.fault && !t.suspect);
}

function single(v: number): Figure {
  return { min: v, median: v, max: v, n: 1, over: 'cell' };
}

function band(xs: number[], over: Figure['over']): Figure | null {
  const d = distribution(xs);
  return d ? { ...d, n: xs.length, over } : null;
}

/** One figure of a cell, with its band; null when the cell has none to give (not measured, no fault trial for a loss figure). */
export function cellFigure(cell: CellResult, name: FigureName): Figure | null {
  if (!isMeasuredCell(cell)) return null;
  // A replaced attempt's figures are kept in run.json but are not the cell's (harness/runner/trial-attempts.ts).
  const reps = (cell.repetitions ?? []).filter((r) => !r.replaced);
  // The cell's own figure stands for one repetition; absent (no repetition finished its load): not measured.
  const fromReps = (pick: (r: NonNullable<CellResult['repetitions']>[number]) => number, fallback: number | undefined) =>
    reps.length > 1 ? band(reps.map(pick), 'repetitions') : fallback === undefined ? null : single(fallback);
  // A latency summary of no sample (no repetition finished its load) holds 0s that were never measured.
  const latency = (v: number) => (cell.latencyUs.count > 0 ? v : undefined);
  const faulted = (cell.trials ?? []).some((t) => t.fault);
  switch (name) {
    case 'recordsPerSec':
      return fromReps((r) => r.recordsPerSec, cell.throughput?.recordsPerSec);
    case 'mbPerSec':
      return fromReps((r) => r.mbPerSec, cell.throughput?.mbPerSec);
    case 'p50Us':
      return fromReps((r) => r.p50Us, latency(cell.latencyUs.p50));
    case 'p99Us':
      return fromReps((r) => r.p99Us, latency(cell.latencyUs.p99));
    case 'p999Us':
      return fromReps((r) => r.p999Us, latency(cell.latencyUs.p999));
    case 'maxUs':
      return cell.latencyUs.count > 0 ? single(cell.latencyUs.max) : null;
    case 'acked':
    case 'ackedLost': {
      if (!faulted) return single(cell.ledger[name]);
      const trials = judgedTrials(cell);
      return trials.length ? band(trials.map((t) => t.ledger[name]), 'trials') : null;
    }
    case 'lostBeyondPrediction': {
      // Only trials that carry a prediction (run.json files before it have none: not measured).
      const trials = judgedTrials(cell).filter((t) => t.fault?.predicted);
      return trials.length ? band(trials.map((t) => t.fault!.predicted!.beyond), 'trials') : null;
    }
    case 'lossWindowSec': {
      // Fault trials only; a checked one that lost nothing has an empty loss window, 0 s (the check measured it).
      const trials = judgedTrials(cell).filter((t) => t.fault);
      return trials.length ? band(trials.map((t) => t.fault!.lossWindowSec ?? 0), 'trials') : null;
    }
    // Not reported by the brokers nor counted from files: not measured (null), never 0.
    case 'segments':
      return cell.broker.segments === undefined ? null : single(cell.broker.segments);
    case 'flushes':
      return cell.broker.flushes === undefined ? null : single(cell.broker.flushes);
    case 'tailingCacheHit': {
      // Groups that tail the log from the load's start (first repetition).
      const hits = (cell.consumers?.[0]?.groups ?? []).filter((g) => g.start === 'tail' && g.startAtSec === 0).map((g) => g.cacheHitRatio);
      const known = hits.filter((v): v is number => typeof v === 'number');
      return known.length ? single(Math.min(...known)) : null;
    }
    case 'lateGroupCacheHit':
    case 'lateGroupP99Ratio': {
      // The first group that starts after the load began (first repetition).
      const g = (cell.consumers?.[0]?.groups ?? []).find((x) => x.startAtSec > 0);
      if (!g) return null;
      if (name === 'lateGroupCacheHit') return typeof g.cacheHitRatio === 'number' ? single(g.cacheHitRatio) : null;
      return g.producerP99Us && g.producerP99Us.before > 0 ? single(g.producerP99Us.during / g.producerP99Us.before) : null;
    }
    case 'lateGroupCatchUpMBps':
    case 'lateGroupCpuPerGB': {
      // The first group that starts behind, over the repetitions in which it caught up.
      const xs = (cell.consumers ?? [])
        .map((r) => r.groups.find((g) => g.start !== 'tail')?.catchUp)
        .map((c) => (c ? (name === 'lateGroupCatchUpMBps' ? c.mbPerSec : c.brokerCpuMsPerGB) : null))
        .filter((v): v is number => typeof v === 'number');
      return xs.length > 1 ? band(xs, 'repetitions') : xs.length === 1 ? single(xs[0]!) : null;
    }
    case 'ackedWhileIsrShrunk': {
      // Sampled only under acks=all with RF > 1 (harness/runner/trial-isr.ts): absent, not 0, elsewhere.
      const xs = judgedOrLoadTrials(cell).map((t) => t.ledger.ackedWhileIsrShrunk).filter((v): v is number => typeof v === 'number');
      return xs.length ? band(xs, 'trials') : null;
    }
    case 'notEnoughReplicas': {
      const trials = judgedOrLoadTrials(cell);
      return trials.length ? band(trials.map(notEnoughReplicasOf), 'trials') : null;
    }
    case 'faultP99Us': {
      // Per trial (harness/runner/fault-p99.ts): absent where no lasting fault had answers around it.
      const xs = judgedTrials(cell).map((t) => t.p99DuringFaultUs).filter((v): v is number => typeof v === 'number');
      return xs.length ? band(xs, 'trials') : null;
    }
    case 'faultUtilPct': {
      // Per trial (harness/runner/fault-p99.ts): the disk under the data dirs, absent where the probes did not sample it.
      const xs = judgedTrials(cell).map((t) => t.utilDuringFaultPct).filter((v): v is number => typeof v === 'number');
      return xs.length ? band(xs, 'trials') : null;
    }
    case 'maxDirtyPages': {
      const dirty = cell.timeseries.map((p) => p.nrDirty).filter((v): v is number => typeof v === 'number');
      const guest = (cell.trials ?? []).map((t) => t.fault?.guestDirtyBeforeCut?.nrDirty).filter((v): v is number => typeof v === 'number');
      const all = [...dirty, ...guest];
      return all.length ? single(Math.max(...all)) : null;
    }
  }
  return null;
}

/** The trials a per-trial figure speaks for: the judged fault trials, or every trial of a cell without a fault. */
function judgedOrLoadTrials(cell: CellResult) {
  return (cell.trials ?? []).some((t) => t.fault) ? judgedTrials(cell) : (cell.trials ?? []);
}

/** A trial's NOT_ENOUGH_REPLICAS(_AFTER_APPEND) answers, before and after its fault. */
export function notEnoughReplicasOf(t: NonNullable<CellResult['trials']>[number]): number {
  let n = 0;
  for (const errs of [t.errors ?? {}, t.errorsAfterFault ?? {}]) for (const [name, count] of Object.entries(errs)) if (name.startsWith('NOT_ENOUGH_REPLICAS')) n += count;
  return n;
}

/** A fault scenario: some cell has trials with a fault. */
export function isFaultRun(run: RunResult): boolean {
  return run.cells.some((c) => (c.trials ?? []).some((t) => t.fault)) || ((run.scenario.raw as { faults?: unknown[] } | null)?.faults?.length ?? 0) > 0;
}

/** Cells are the same experiment in two runs when their settings and target agree. */
export function cellKey(run: RunResult, cell: CellResult): string {
  const params = Object.entries(cell.params)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  // A run with a target axis has each cell's own target (cell.target); others have the run's.
  return `${cell.target ?? run.target}: ${params || cell.id}`;
}

export function fmtFigureValue(name: FigureName, v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (name === 'mbPerSec') return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  if (name === 'lossWindowSec') return v.toFixed(v >= 10 ? 1 : 2);
  // Small figures keep 3 significant digits: the median of 10 and 11 is 10.5, not 11.
  if (Math.abs(v) < 100 && !Number.isInteger(v)) return String(Number(v.toPrecision(3)));
  return Math.round(v).toLocaleString('en-US');
}

/** "12,345" or "12,345 (11,900-12,800)" when there is a band. */
export function fmtFigure(name: FigureName, f: Figure | null): string {
  if (!f) return '—';
  const m = fmtFigureValue(name, f.median);
  return f.n > 1 && f.min !== f.max ? `${m} (${fmtFigureValue(name, f.min)}-${fmtFigureValue(name, f.max)})` : m;
}
