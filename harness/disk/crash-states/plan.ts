// Crash states from one write log (dm-log-writes / CrashMonkey style), as pure data: which
// crash points, and for each which writes reach the disk. No I/O here (materialise.ts does it).
//
// Crash point p = the first p records of the log have completed; its time is the latest
// instant before record p completes (so every acknowledgement that could have been sent with
// this disk state counts). At that point:
// - durable: every WRITE / TRIM / WRITE_ZEROES that completed before the latest completed
//   FLUSH was submitted (a FLUSH covers what completed before it was sent), and every FUA write
//   once it completed; a FLUSH or FUA the disk acknowledged without persisting (write-log flag
//   notHonoured: vm.disk flush: ignored, a lying drive) is no durability point;
// - unflushed: the other completed writes; the onCut policy decides what of them persists:
//   drop-unflushed (none), random-subset (a seeded subset of their 4 KiB sector runs), reorder
//   (one earlier write dropped while every later one is kept), torn (writes kept in order up to
//   one that is kept only in part, at 512-byte sector granularity; the later ones are dropped).
import { seededRandom } from '../../faults/schedule.ts';
import { SECTOR_BYTES, type WriteLogRecord } from '../write-log.ts';

export const ON_CUT_POLICIES = ['drop-unflushed', 'random-subset', 'reorder', 'torn'] as const;
export type OnCutPolicy = (typeof ON_CUT_POLICIES)[number];

/** Sectors per run for random-subset (one 4 KiB page). */
export const RUN_SECTORS = 8;

export type PointKind = 'spread' | 'before-flush' | 'after-flush' | 'end';

export interface CrashPoint {
  /** Records [0, position) of the log have completed. */
  position: number;
  /** Host clock µs: the latest instant with this disk state (acks up to it must be served). */
  timeUs: number;
  kind: PointKind;
}

/** A part of one logged write that reaches the disk. `sectors` null = the whole write. */
export interface KeptPiece {
  record: number;
  /** Sector indexes within the write (0 = its first sector), or null for all of it. */
  sectors: number[] | null;
}

export interface CrashStatePlan {
  index: number;
  point: CrashPoint;
  /** Honoured FLUSHes completed before the point (states of one epoch share their flushed prefix). */
  epoch: number;
  /** Index in the log of the latest honoured FLUSH completed before the point (-1: none). */
  flushRecord: number;
  /** How many writes are durable. */
  durableWrites: number;
  /** Unflushed completed writes at the point (what the policy chose from). */
  unflushedWrites: number;
  /** What the policy kept of them, in log order (applied after the durable writes). */
  kept: KeptPiece[];
  /** Records durable at this point, in log order. */
  durable: number[];
  policy: OnCutPolicy;
  /** How a FLUSH covers earlier writes (see PlanOptions.flushCovers). */
  flushCovers: FlushCoverage;
  /** False when the policy had nothing to act on (e.g. reorder with fewer than 2 unflushed writes). */
  policyApplied: boolean;
}

const isWrite = (r: WriteLogRecord) => r.op === 'write' || r.op === 'trim' || r.op === 'write-zeroes';

/** A FLUSH the disk honoured: a lying drive's (notHonoured) makes nothing durable. */
export const isDurabilityFlush = (r: WriteLogRecord): boolean => r.op === 'flush' && !r.notHonoured;

/**
 * 'completed-before-submit': a FLUSH covers the writes that completed before it was sent (exact
 * timestamps, the NBD disk). 'earlier-in-log': it covers every write before it in the log (a
 * recorder that logs in submission order with observed times, QEMU blklogwrites; the guest sends
 * a FLUSH only once the writes it relies on completed).
 */
export type FlushCoverage = 'completed-before-submit' | 'earlier-in-log';

/** Whether write i is covered by the FLUSH at index f (i < f). */
export function coveredBy(records: readonly WriteLogRecord[], i: number, f: number, how: FlushCoverage): boolean {
  if (f < 0 || i >= f) return false;
  return how === 'earlier-in-log' || records[i]!.completeUs <= records[f]!.submitUs;
}

export interface PlanOptions {
  /** Default 'completed-before-submit'. */
  flushCovers?: FlushCoverage;
  states: number;
  policy: OnCutPolicy;
  seed: number;
  /** Host µs of the cut (the end point's time); default: the last record's completion. */
  endUs?: number;
}

/** The log time of point p: just before record p completes, or the end. */
export function pointTime(records: WriteLogRecord[], position: number, endUs: number): number {
  return position < records.length ? records[position]!.completeUs - 1 : endUs;
}

/**
 * Chooses crash points: the end, just before and just after FLUSHes (at most half the budget,
 * a seeded sample when there are more), the rest at seeded uniform instants over the log's time
 * span. A FLUSH or end point sits at the latest instant of its disk state; a spread point at its
 * own instant, so two of them may share a disk state (a log with few requests) and still differ
 * in what had been acknowledged by then. Points are distinct (position, time) pairs, sorted.
 */
export function chooseCrashPoints(records: WriteLogRecord[], opts: { states: number; seed: number; endUs?: number }): CrashPoint[] {
  if (!Number.isInteger(opts.states) || opts.states < 1) throw new Error(`crash states: states must be an integer >= 1, got ${opts.states}`);
  const n = records.length;
  const endUs = opts.endUs ?? (n ? records[n - 1]!.completeUs : 0);
  const rand = seededRandom(opts.seed ^ 0x5bd1e995);
  const chosen = new Map<string, CrashPoint>();
  const add = (position: number, timeUs: number, kind: PointKind) => {
    const key = `${position}:${timeUs}`;
    if (chosen.size < opts.states && !chosen.has(key)) chosen.set(key, { position, timeUs, kind });
  };
  add(n, pointTime(records, n, endUs), 'end');
  const flushAdjacent: Array<[number, PointKind]> = [];
  records.forEach((r, i) => {
    if (r.op !== 'flush') return;
    flushAdjacent.push([i, 'before-flush'], [i + 1, 'after-flush']);
  });
  const flushBudget = Math.floor(opts.states / 2);
  // Seeded Fisher-Yates prefix: which flush-adjacent points fit in the budget.
  for (let i = 0; i < flushAdjacent.length && i < flushBudget; i++) {
    const j = i + Math.floor(rand() * (flushAdjacent.length - i));
    [flushAdjacent[i], flushAdjacent[j]] = [flushAdjacent[j]!, flushAdjacent[i]!];
  }
  for (const [p, kind] of flushAdjacent.slice(0, flushBudget)) add(p, pointTime(records, p, endUs), kind);
  if (n > 0) {
    const t0 = records[0]!.completeUs;
    const t1 = Math.max(endUs, t0 + 1);
    const times = records.map((r) => r.completeUs);
    for (let tries = 0; chosen.size < opts.states && tries < opts.states * 50; tries++) {
      const t = Math.floor(t0 + rand() * (t1 - t0));
      let lo = 0;
      let hi = n; // records completed by t: [0, lo)
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (times[mid]! <= t) lo = mid + 1;
        else hi = mid;
      }
      add(lo, t, 'spread');
    }
  }
  return [...chosen.values()].sort((a, b) => a.position - b.position || a.timeUs - b.timeUs);
}

/** Plans every state: durable set per point and what the policy keeps of the rest. */
export function planCrashStates(records: WriteLogRecord[], opts: PlanOptions): CrashStatePlan[] {
  return planAtPoints(records, chooseCrashPoints(records, opts), opts);
}

/** Plans the states of the given points (sorted by position). */
export function planAtPoints(records: WriteLogRecord[], points: CrashPoint[], opts: { policy: OnCutPolicy; seed: number; flushCovers?: FlushCoverage }): CrashStatePlan[] {
  const how = opts.flushCovers ?? 'completed-before-submit';
  const plans: CrashStatePlan[] = [];
  let flushRecord = -1;
  let epoch = 0;
  let cursor = 0;
  points.forEach((point, index) => {
    while (cursor < point.position) {
      if (isDurabilityFlush(records[cursor]!)) {
        flushRecord = cursor;
        epoch++;
      }
      cursor++;
    }
    const durable: number[] = [];
    const unflushed: number[] = [];
    for (let i = 0; i < point.position; i++) {
      const r = records[i]!;
      if (!isWrite(r)) continue;
      if ((r.fua && !r.notHonoured) || coveredBy(records, i, flushRecord, how)) durable.push(i);
      else unflushed.push(i);
    }
    const rand = seededRandom((opts.seed + Math.imul(index + 1, 0x9e3779b1)) >>> 0);
    const { kept, applied } = applyPolicy(opts.policy, unflushed, records, rand);
    plans.push({
      index,
      point,
      epoch,
      flushRecord,
      durableWrites: durable.length,
      unflushedWrites: unflushed.length,
      kept,
      durable,
      policy: opts.policy,
      flushCovers: how,
      policyApplied: applied,
    });
  });
  return plans;
}

function sectorsOf(r: WriteLogRecord): number {
  return Math.ceil(r.length / SECTOR_BYTES);
}

function applyPolicy(policy: OnCutPolicy, unflushed: number[], records: WriteLogRecord[], rand: () => number): { kept: KeptPiece[]; applied: boolean } {
  switch (policy) {
    case 'drop-unflushed':
      return { kept: [], applied: unflushed.length > 0 };
    case 'random-subset': {
      const kept: KeptPiece[] = [];
      for (const i of unflushed) {
        const n = sectorsOf(records[i]!);
        const sectors: number[] = [];
        for (let run = 0; run < n; run += RUN_SECTORS) {
          if (rand() < 0.5) for (let s = run; s < Math.min(n, run + RUN_SECTORS); s++) sectors.push(s);
        }
        if (sectors.length === n) kept.push({ record: i, sectors: null });
        else if (sectors.length > 0) kept.push({ record: i, sectors });
      }
      return { kept, applied: unflushed.length > 0 };
    }
    case 'reorder': {
      if (unflushed.length < 2) return { kept: [], applied: false };
      // Drop one write that has a later one, keep every later one.
      const drop = Math.floor(rand() * (unflushed.length - 1));
      return { kept: unflushed.slice(drop + 1).map((record) => ({ record, sectors: null })), applied: true };
    }
    case 'torn': {
      const multi = unflushed.filter((i) => sectorsOf(records[i]!) > 1);
      if (multi.length === 0) return { kept: [], applied: false };
      const tornRecord = multi[Math.floor(rand() * multi.length)]!;
      const n = sectorsOf(records[tornRecord]!);
      // A non-empty proper subset of its sectors.
      let sectors: number[] = [];
      while (sectors.length === 0 || sectors.length === n) {
        sectors = [];
        for (let s = 0; s < n; s++) if (rand() < 0.5) sectors.push(s);
      }
      const before = unflushed.filter((i) => i < tornRecord).map((record) => ({ record, sectors: null }));
      return { kept: [...before, { record: tornRecord, sectors }], applied: true };
    }
  }
}
