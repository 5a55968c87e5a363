// `durolab engine bench` without the CLI: runs every row (engine and baseline in alternating
// order, median of the repetitions), checks the goals, and keeps the JSON file current
// after every row so an interrupted run leaves its finished rows behind, marked partial.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatFlushPolicy } from '../storage/index.ts';
import { collectEnvironment, type Environment } from '../common/environment.ts';
import { planRows, type BenchRowSpec, type Budget, type PlanFilter } from './bench-plan.ts';
import type { BenchRep, BenchRow } from './bench-row.ts';
import { fioAvailable, runDirFor, runEngineSide, runFioSide, runWriteSyncSide, type SideResult } from './bench-side.ts';
import { evaluateGoals, type GoalResult } from './bench-goals.ts';
import { writeJsonAtomic } from '../common/atomic-file.ts';
import { balancedRatio, checkBoundApplies, measureCheckBound } from './bench-bound.ts';
import { median } from '../common/stats.ts';

export type BaselineChoice = 'auto' | 'fio' | 'writeSync';

export interface BenchOptions {
  budget: Budget;
  quick: boolean;
  /** A fresh directory is made inside it (default os.tmpdir()) and removed at the end. */
  dir?: string;
  out: string;
  baseline?: BaselineChoice;
  filter?: PlanFilter;
  signal?: AbortSignal;
  /** Progress lines (one per row). */
  onProgress?: (line: string) => void;
}

export interface BenchResult {
  kind: 'durolab-engine-bench';
  schemaVersion: 1;
  complete: boolean;
  interrupted: string | null;
  startedAt: string;
  endedAt: string | null;
  durationSeconds: number;
  options: { quick: boolean; volumeMiB: number; maxSecondsPerRun: number; reps: number; minRowSeconds: number; maxReps: number; baseline: BaselineChoice; fio: string | null };
  environment: Environment & { benchDir: string; fsType: string; tmpfs: boolean };
  /** os.loadavg() (1, 5, 15 min) when the run started and ended: the machine is shared, this says how busy it was. */
  loadAverage: { start: number[]; end: number[] };
  note: string;
  rows: BenchRow[];
  targets: GoalResult[];
}

const ENV_NOTE =
  'Absolute numbers are for this machine: a 2-core VM with a virtual disk behind a write-back cache, where an fdatasync costs ~80-250 µs (the device ~30-40 µs per flush), far less than on real media. Compare engine and baseline within a row (ratio), not with other machines. The machine is shared with other work: expect some noise.';

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

function fsTypeName(dir: string): { name: string; tmpfs: boolean } {
  const t = fs.statfsSync(dir).type;
  const known: Record<number, string> = { 0xef53: 'ext4', 0x58465342: 'xfs', 0x9123683e: 'btrfs', [TMPFS_MAGIC]: 'tmpfs', [RAMFS_MAGIC]: 'ramfs', 0x794c7630: 'overlayfs', 0x65735546: 'fuse' };
  return { name: known[t] ?? `0x${t.toString(16)}`, tmpfs: t === TMPFS_MAGIC || t === RAMFS_MAGIC };
}

function rowSummary(spec: BenchRowSpec, reps: BenchRep[], notes: string[]): BenchRow {
  // NaN when no repetition ran: the row then says so instead of showing a zero.
  const m = (f: (r: BenchRep) => number) => median(reps.map(f)) ?? NaN;
  const engineMBps = m((r) => r.engine.mbps);
  const baselineMBps = m((r) => r.baseline.mbps);
  const kinds = new Set(reps.map((r) => r.baseline.kind));
  const syncP50 = reps.every((r) => r.baseline.syncLatUs !== null) ? m((r) => r.baseline.syncLatUs!.p50) : null;
  const flushP50 = reps.every((r) => r.engine.syncLatUs !== null) ? m((r) => r.engine.syncLatUs!.p50) : null;
  return {
    mode: spec.mode,
    flush: formatFlushPolicy(spec.flush),
    batchBytes: spec.batchBytes,
    recordsPerBatch: spec.recordsPerBatch,
    syncEvery: spec.syncEvery,
    verify: spec.verify,
    baseline: kinds.size === 1 ? reps[0].baseline.kind : 'writeSync',
    engineMBps: round(engineMBps, 1),
    baselineMBps: round(baselineMBps, 1),
    ratio: round(orderBalancedRatio(reps), 3),
    p50Us: m((r) => r.engine.latUs.p50),
    p99Us: m((r) => r.engine.latUs.p99),
    p999Us: m((r) => r.engine.latUs.p999),
    baselineP50Us: m((r) => r.baseline.latUs.p50),
    baselineSyncP50Us: syncP50,
    baselineOpP50Us: m((r) => r.baseline.opP50Us),
    engineFlushes: m((r) => r.engine.syncs),
    engineFlushP50Us: flushP50,
    baselineSyncs: m((r) => r.baseline.syncs),
    reps,
    notes,
  };
}

/**
 * The engine/baseline throughput ratio of a row: over blocks of two consecutive repetitions
 * (one engine-first, one baseline-first), the geometric mean of the block's two ratios, and
 * the median of those. A run right after the other side's run can be slower (on this lab's
 * virtual disk, direct never 1 MiB measured 1.06 engine-first against 0.75 baseline-first):
 * within a block that factor multiplies one ratio and divides the other, so it cancels, where
 * a median of single ratios would land on whichever order had more repetitions. A repetition
 * without its block partner (an interrupted row) counts only when no block is complete.
 */
export function orderBalancedRatio(reps: readonly BenchRep[]): number {
  return balancedRatio(reps.map((r) => r.engine.mbps / r.baseline.mbps));
}

function loadAverage(): number[] {
  return os.loadavg().map((x) => round(x, 2));
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function errorRow(spec: BenchRowSpec, message: string, notes: string[]): BenchRow {
  return {
    ...rowSummary(spec, [], notes),
    baseline: 'fio',
    engineMBps: 0,
    baselineMBps: 0,
    ratio: 0,
    p50Us: 0,
    p99Us: 0,
    p999Us: 0,
    baselineP50Us: 0,
    baselineSyncP50Us: null,
    baselineOpP50Us: 0,
    engineFlushes: 0,
    engineFlushP50Us: null,
    baselineSyncs: 0,
    error: message,
  };
}

/** Warm-up budget: enough appends for V8 to optimise the append path (fio is native code from the first write). */
const WARM_UP = { volumeBytes: 8 * 2 ** 20, maxSeconds: 0.05 };

/** Untimed runs of the row's code paths (engine, and the writeSync loop when it is the baseline) before its first repetition. */
function warmUp(spec: BenchRowSpec, root: string, fioBaseline: boolean): void {
  const dir = path.join(root, 'warm-up');
  try {
    runEngineSide(spec, dir, WARM_UP);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (fioBaseline) return;
  const file = path.join(root, 'warm-up.dat');
  try {
    runWriteSyncSide(spec, file, WARM_UP);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

export async function runBench(opts: BenchOptions): Promise<BenchResult> {
  const t0 = Date.now();
  const specs = planRows(opts.filter);
  const parent = path.resolve(opts.dir ?? os.tmpdir());
  fs.mkdirSync(parent, { recursive: true });
  const root = fs.mkdtempSync(path.join(parent, 'durolab-engine-bench-'));
  const progress = opts.onProgress ?? (() => {});
  const choice = opts.baseline ?? 'auto';
  try {
    const fsType = fsTypeName(root);
    const fioVersion = choice === 'writeSync' ? null : await fioAvailable();
    if (choice === 'fio' && fioVersion === null) throw new Error('bench: --baseline fio was asked for but `fio --version` does not run: install fio (apt-get install fio)');
    const env = await collectEnvironment(root);
    const result: BenchResult = {
      kind: 'durolab-engine-bench',
      schemaVersion: 1,
      complete: false,
      interrupted: null,
      startedAt: new Date(t0).toISOString(),
      endedAt: null,
      durationSeconds: 0,
      options: {
        quick: opts.quick,
        volumeMiB: opts.budget.volumeBytes / 2 ** 20,
        maxSecondsPerRun: opts.budget.maxSeconds,
        reps: opts.budget.reps,
        minRowSeconds: opts.budget.minRowSeconds ?? 0,
        maxReps: opts.budget.maxReps ?? opts.budget.reps,
        baseline: choice,
        fio: fioVersion,
      },
      environment: { ...env, benchDir: root, fsType: fsType.name, tmpfs: fsType.tmpfs },
      loadAverage: { start: loadAverage(), end: loadAverage() },
      note: fsType.tmpfs
        ? `${root} is on ${fsType.name}: these numbers measure memory, not a disk, and io=direct cannot run there. ${ENV_NOTE}`
        : ENV_NOTE,
      rows: [],
      targets: [],
    };
    if (fsType.tmpfs) progress(`warning: ${root} is on ${fsType.name}, not a disk: pass --dir on a real filesystem`);
    if (choice !== 'writeSync' && fioVersion === null) progress('fio not found: the baseline is a raw fs.writeSync loop (same open flags and sync cadence)');
    const save = () => {
      result.durationSeconds = round((Date.now() - t0) / 1000, 1);
      result.loadAverage.end = loadAverage();
      result.targets = evaluateGoals(result.rows);
      writeJsonAtomic(opts.out, result);
    };
    for (let i = 0; i < specs.length; i++) {
      if (opts.signal?.aborted) break;
      const spec = specs[i];
      const label = `${spec.mode} ${formatFlushPolicy(spec.flush)} ${spec.batchBytes}${spec.verify ? '' : ' (verify off)'}`;
      const reps: BenchRep[] = [];
      const notes: string[] = [];
      let useFio = fioVersion !== null;
      let error: string | null = null;
      try {
        warmUp(spec, root, useFio);
      } catch (e) {
        error = (e as Error).message;
      }
      const { reps: minReps, minRowSeconds = 0, maxReps = minReps } = opts.budget;
      let ranSeconds = 0;
      // More repetitions come in blocks of both orders (orderBalancedRatio): a row extended for
      // its measured time ends on a complete block.
      const wantMore = (rep: number) => rep < minReps || ((ranSeconds < minRowSeconds || rep % 2 === 1) && rep < maxReps);
      for (let rep = 0; wantMore(rep) && error === null && !opts.signal?.aborted; rep++) {
        const engineFirst = rep % 2 === 0;
        const engineDir = runDirFor(root, i, rep, 'engine');
        const baseFile = runDirFor(root, i, rep, 'baseline') + '.dat';
        const doEngine = (): SideResult => {
          try {
            return runEngineSide(spec, engineDir, opts.budget);
          } finally {
            fs.rmSync(engineDir, { recursive: true, force: true });
          }
        };
        const doBaseline = async (): Promise<SideResult> => {
          try {
            if (useFio) {
              try {
                return await runFioSide(spec, baseFile, opts.budget, opts.signal);
              } catch (e) {
                if (opts.signal?.aborted || choice === 'fio') throw e;
                useFio = false;
                notes.push(`fio failed, fell back to fs.writeSync: ${(e as Error).message}`);
                fs.rmSync(baseFile, { force: true });
              }
            }
            return runWriteSyncSide(spec, baseFile, opts.budget);
          } finally {
            fs.rmSync(baseFile, { force: true });
          }
        };
        try {
          let engine: SideResult;
          let baseline: SideResult;
          if (engineFirst) {
            engine = doEngine();
            baseline = await doBaseline();
          } else {
            baseline = await doBaseline();
            engine = doEngine();
          }
          reps.push({ order: engineFirst ? 'engine-first' : 'baseline-first', engine, baseline });
          ranSeconds += engine.seconds + baseline.seconds;
        } catch (e) {
          if (opts.signal?.aborted) break;
          error = (e as Error).message;
        }
      }
      if (opts.signal?.aborted && reps.length < opts.budget.reps) {
        if (reps.length > 0) {
          const row = rowSummary(spec, reps, [...notes, `interrupted after ${reps.length} of ${opts.budget.reps} repetitions`]);
          result.rows.push(row);
        }
        break;
      }
      const row = error !== null && reps.length === 0 ? errorRow(spec, error, notes) : rowSummary(spec, reps, error ? [...notes, `error: ${error}`] : notes);
      if (error === null && reps.length > 0 && checkBoundApplies(spec)) {
        try {
          const bound = measureCheckBound(spec, root, opts.budget.volumeBytes, reps.length);
          if (typeof bound === 'string') row.notes.push(bound);
          else row.checkBound = bound;
        } catch (e) {
          row.notes.push(`check bound: ${(e as Error).message}`);
        }
      }
      result.rows.push(row);
      progress(
        row.error
          ? `[${i + 1}/${specs.length}] ${label}: error: ${row.error}`
          : `[${i + 1}/${specs.length}] ${label}: engine ${row.engineMBps} MB/s, ${row.baseline} ${row.baselineMBps} MB/s, ratio ${row.ratio}, append p50 ${row.p50Us} µs`,
      );
      save();
    }
    if (opts.signal?.aborted) result.interrupted = typeof opts.signal.reason === 'string' ? opts.signal.reason : 'interrupted';
    result.complete = result.interrupted === null && result.rows.length === specs.length;
    result.endedAt = new Date().toISOString();
    save();
    return result;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
