// The seam between a trial and crash-state exploration: from the base image (the disk as the
// trial started) and the trial's write log, build N crash states and check each on the host
// (check-state.ts). States are materialised one after another (they share one running image,
// epoch by epoch) and checked `concurrency` at a time (e2fsck and debugfs are processes: two
// checks in flight use both cores here).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LogConfig } from '../../../engine/storage/index.ts';
import { median } from '../../../engine/common/stats.ts';
import type { CrashStatesResult, CrashStateRow } from '../../results/types.ts';
import type { AckLedger } from '../../history/ledger.ts';
import { sparseCopy } from '../../vm/disk.ts';
import { readWriteLog, requireComplete, type WriteLogRecord } from '../write-log.ts';
import { checkState, type CheckStateOptions, type StateCheck, type StoredBatchReader } from './check-state.ts';
import { RunningImage } from './materialise.ts';
import { planCrashStates, type CrashStatePlan, type OnCutPolicy } from './plan.ts';
import { seededRandom } from '../../common/seeded-random.ts';
import type { ResolvedSettings } from '../../model/settings.ts';

export interface CrashStatesOptions {
  /** The disk as it was when the trial started (never modified). */
  baseImage: string;
  /** The trial's write log (a file, or its records already read). */
  writeLog: string | WriteLogRecord[];
  ledger: AckLedger;
  /** The broker's data dir in the guest (e.g. /data/broker-1) and the topic. */
  guestDataDir: string;
  topic: string;
  logConfig: Partial<LogConfig>;
  states: number;
  policy: OnCutPolicy;
  seed: number;
  /** Host µs of the cut (the end point); default: the last record's completion. */
  endUs?: number;
  /** Host ms the load started: per-state times are reported relative to it. Default: the first record. */
  loadStartMs?: number;
  /** Scratch directory (state images, extracted files); made if missing, emptied afterwards except kept images. */
  workDir: string;
  /**
   * How uncertain the write log's timestamps are (blklogwrites.ts: stamped by a watcher): an
   * acknowledgement counts for a crash point only when it came at least this long before it.
   * Default 0 (the NBD disk stamps requests itself).
   */
  clockUncertaintyMs?: number;
  /**
   * The log's times are when a watcher saw each request (blklogwrites.ts), not when the disk
   * completed it: FLUSHes cover what is before them in the log, and a state is checked against
   * the acks made before its next record was certainly not yet written (its submitUs), not only
   * before the point.
   */
  observedStamps?: boolean;
  /** How the check reads stored batches as ledger batches (the trial's driver's identity; default the HTTP driver's). */
  servedFromStored?: StoredBatchReader;
  /** How a state is checked: the recovery of the system under test over the state's files (default: durolab's, check-state.ts). */
  checkState?: (o: CheckStateOptions) => Promise<StateCheck>;
  /** Checks in flight at once. Default 2. */
  concurrency?: number;
  /** States whose images are kept (for booting them in a VM): by state index. */
  keep?: (plan: CrashStatePlan) => boolean;
  onState?: (row: CrashStateRow) => void;
  /** Stops building states (Ctrl-C): what was checked so far is discarded, the scratch removed. */
  signal?: AbortSignal | undefined;
  /** Called once with the planned states, before any is built (e.g. to choose which to keep). */
  onPlans?: (plans: CrashStatePlan[]) => void;
}

export interface CrashStatesBreakdown {
  states: number;
  wallMs: number;
  statesPerMin: number;
  /** Summed over states (ms): where the time goes. */
  materialiseMs: number;
  journalMs: number;
  extractMs: number;
  recoverMs: number;
  checkMs: number;
}

export interface CrashStatesOutcome {
  result: CrashStatesResult;
  breakdown: CrashStatesBreakdown;
  /** Kept images by state index (the caller removes them). */
  kept: Map<number, string>;
  plans: CrashStatePlan[];
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** At most this many FLUSH times are kept for the report's timeline marks. */
const MAX_FLUSH_MARKS = 2000;

export function summariseCrashStates(rows: CrashStateRow[], extra: Pick<CrashStatesResult, 'policy' | 'seed' | 'writeLog' | 'flushMarksMs'>): CrashStatesResult {
  const lost = rows.map((r) => r.lostAcked).sort((a, b) => a - b);
  const losing = rows.filter((r) => r.lostAcked > 0);
  const earliest = losing.length ? losing.reduce((a, r) => (r.timeUs < a.timeUs ? r : a)) : null;
  return {
    states: rows.length,
    lostMin: lost[0] ?? 0,
    lostMedian: median(lost) ?? 0,
    lostP99: percentile(lost, 99),
    lostMax: lost[lost.length - 1] ?? 0,
    fractionLosing: rows.length ? losing.length / rows.length : 0,
    earliestLosingPointUs: earliest ? earliest.timeUs : null,
    earliestLosingAtMs: earliest ? earliest.atMs : null,
    corruptStates: rows.filter((r) => r.corrupt > 0).length,
    ...extra,
    perState: [...rows].sort((a, b) => a.state - b.state),
  };
}

export async function buildAndCheckCrashStates(o: CrashStatesOptions): Promise<CrashStatesOutcome> {
  const t0 = performance.now();
  const records = typeof o.writeLog === 'string' ? requireComplete(readWriteLog(o.writeLog)) : o.writeLog;
  const plans = planCrashStates(records, {
    states: o.states,
    policy: o.policy,
    seed: o.seed,
    flushCovers: o.observedStamps ? 'earlier-in-log' : 'completed-before-submit',
    ...(o.endUs !== undefined ? { endUs: o.endUs } : {}),
  });
  o.onPlans?.(plans);
  await fs.mkdir(o.workDir, { recursive: true });
  const originUs = o.loadStartMs !== undefined ? o.loadStartMs * 1000 : (records[0]?.completeUs ?? 0);
  const running = await RunningImage.create(o.baseImage, path.join(o.workDir, 'running.img'), records);
  const rows: CrashStateRow[] = [];
  const kept = new Map<number, string>();
  const sums = { materialiseMs: 0, journalMs: 0, extractMs: 0, recoverMs: 0, checkMs: 0 };
  const concurrency = Math.max(1, o.concurrency ?? 2);
  // With observed stamps, the state lasts at least until its next record was last seen absent.
  const ackCutUs = (plan: CrashStatePlan) =>
    o.observedStamps && plan.point.position < records.length ? Math.min(plan.point.timeUs, records[plan.point.position]!.submitUs) : plan.point.timeUs;
  const inFlight = new Set<Promise<void>>();
  let failure: unknown = null;
  try {
    for (const plan of plans) {
      if (o.signal?.aborted) failure ??= new Error('crash states: interrupted');
      if (failure) break;
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      const dir = path.join(o.workDir, `state-${plan.index}`);
      await fs.mkdir(dir, { recursive: true });
      const image = path.join(dir, 'disk.img');
      const tm = performance.now();
      const fig = await running.materialise(plan, image);
      sums.materialiseMs += performance.now() - tm;
      if (o.keep?.(plan)) {
        // Kept as the power cut left it (the check below replays the journal of its own copy).
        const keptPath = path.join(o.workDir, `kept-state-${plan.index}.img`);
        await sparseCopy(image, keptPath);
        kept.set(plan.index, keptPath);
      }
      const job = (async () => {
        try {
          const cutMs = ackCutUs(plan) / 1000 - (o.clockUncertaintyMs ?? 0);
          const c = await (o.checkState ?? checkState)({
            image,
            scratch: dir,
            guestDataDir: o.guestDataDir,
            topic: o.topic,
            ledger: o.ledger,
            cutMs,
            logConfig: o.logConfig,
            ...(o.servedFromStored ? { servedFromStored: o.servedFromStored } : {}),
          });
          sums.journalMs += c.timings.journalMs;
          sums.extractMs += c.timings.extractMs;
          sums.recoverMs += c.timings.recoverMs;
          sums.checkMs += c.timings.checkMs;
          const row: CrashStateRow = {
            state: plan.index,
            position: plan.point.position,
            kind: plan.point.kind,
            timeUs: plan.point.timeUs,
            atMs: Math.round((plan.point.timeUs - originUs) / 100) / 10,
            ackCutMs: cutMs,
            epoch: plan.epoch,
            durableWrites: plan.durableWrites,
            unflushedWrites: plan.unflushedWrites,
            keptUnflushedWrites: plan.kept.length,
            deltaBytes: fig.deltaBytes,
            ackedBefore: c.report.acked,
            lostAcked: c.report.ackedLost,
            corrupt: c.report.corrupt,
            inconsistentOffsets: c.report.inconsistentOffsets,
            duplicates: c.report.duplicates,
            outOfOrder: c.report.outOfOrder,
            offsetChanged: c.report.offsetChanged,
            served: c.report.perPartition.reduce((a, p) => a + p.served, 0),
            ...reportedSum('recoveryBytesTruncated', c.recoveries.map((r) => r.bytesTruncated)),
            ...reportedSum('recoveryBatchesTruncated', c.recoveries.map((r) => r.batchesTruncated)),
            noDataDir: c.noDataDir,
          };
          rows.push(row);
          o.onState?.(row);
        } catch (err) {
          failure ??= new Error(`crash state ${plan.index} (log position ${plan.point.position}, ${plan.point.kind}): ${(err as Error).message}`);
        } finally {
          await fs.rm(dir, { recursive: true, force: true });
        }
      })();
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    }
    await Promise.all(inFlight);
  } finally {
    running.close();
    await fs.rm(running.path, { force: true });
  }
  if (failure) throw failure;
  const flushes = records.filter((r) => r.op === 'flush');
  const step = Math.max(1, Math.ceil(flushes.length / MAX_FLUSH_MARKS));
  const result = summariseCrashStates(rows, {
    policy: o.policy,
    seed: o.seed,
    writeLog: { records: records.length, writes: records.filter((r) => r.op === 'write').length, flushes: flushes.length, fua: records.filter((r) => r.fua).length },
    flushMarksMs: flushes.filter((_, i) => i % step === 0).map((r) => Math.round((r.completeUs - originUs) / 100) / 10),
  });
  const wallMs = performance.now() - t0;
  const round = (x: number) => Math.round(x);
  return {
    result,
    breakdown: {
      states: rows.length,
      wallMs: round(wallMs),
      statesPerMin: Math.round((rows.length / wallMs) * 60_000),
      materialiseMs: round(sums.materialiseMs),
      journalMs: round(sums.journalMs),
      extractMs: round(sums.extractMs),
      recoverMs: round(sums.recoverMs),
      checkMs: round(sums.checkMs),
    },
    kept,
    plans,
  };
}

/**
 * Boots every kept state with `boot` (the real broker on the state's image), puts its answer on
 * the state's row and sets the result's verification; a disagreement is named with the state.
 * Stops at an abort. The kept images are the caller's to remove.
 */
export async function verifyBootedStates(
  outcome: CrashStatesOutcome,
  boot: (image: string, row: CrashStateRow) => Promise<NonNullable<CrashStateRow['booted']>>,
  signal?: AbortSignal,
): Promise<{ booted: CrashStateRow[]; disagreements: string[] }> {
  const booted: CrashStateRow[] = [];
  const disagreements: string[] = [];
  for (const [index, image] of outcome.kept) {
    if (signal?.aborted) break;
    const row = outcome.result.perState.find((r) => r.state === index)!;
    const b = await boot(image, row);
    row.booted = b;
    booted.push(row);
    if (!b.agrees) disagreements.push(`state ${index} (${row.kind} at ${row.atMs} ms): ${b.detail}`);
  }
  outcome.result.verification = { booted: booted.length, agreed: booted.filter((r) => r.booted!.agrees).length };
  return { booted, disagreements };
}

/** The broker's log settings, as it opens its partitions. */
export function logConfigOf(s: ResolvedSettings): Partial<LogConfig> {
  return {
    io: s.io,
    flush: s.flush,
    sync: s.sync,
    segmentBytes: s.segmentBytes,
    segmentMs: s.segmentMs,
    segmentIndexBytes: s.segmentIndexBytes,
    indexIntervalBytes: s.indexIntervalBytes,
    maxBatchBytes: s.maxBatchBytes,
  };
}

/** Which states to boot: the end point, and seeded picks among the others (flush-adjacent first). */
export function chooseBooted(plans: CrashStatePlan[], n: number, seed: number): Set<number> {
  const out = new Set<number>();
  const end = plans.find((p) => p.point.kind === 'end');
  if (end && n > 0) out.add(end.index);
  const rand = seededRandom(seed ^ 0xb007);
  const pools = [plans.filter((p) => p.point.kind === 'before-flush' || p.point.kind === 'after-flush'), plans.filter((p) => p.point.kind === 'spread')];
  for (const pool of pools) {
    while (out.size < n && pool.some((p) => !out.has(p.index))) {
      const left = pool.filter((p) => !out.has(p.index));
      out.add(left[Math.floor(rand() * left.length)]!.index);
      if (pool === pools[0] && out.size >= Math.ceil(n / 2) + 1) break;
    }
  }
  return out;
}

/** `{ [key]: sum }` over the partitions whose recovery reported the figure; {} when none did (a booted state, Kafka's batch count): not measured, not 0. */
function reportedSum<K extends string>(key: K, values: ReadonlyArray<number | undefined>): Partial<Record<K, number>> {
  const reported = values.filter((v): v is number => v !== undefined);
  return reported.length ? ({ [key]: reported.reduce((a, v) => a + v, 0) } as Partial<Record<K, number>>) : {};
}
