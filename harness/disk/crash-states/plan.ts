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
// - unflushed: the other completed writes; the onCut policy decides what of them persists,
//   with the live NBD disk's meaning (../on-cut.ts, chooseAtCut, one implementation for both):
//   drop-unflushed (none), random-subset (each run of a write within a 4 KiB-aligned block with
//   p = 1/2), reorder (a non-empty suffix of the writes kept, the non-empty run before it
//   dropped), torn (writes kept in order up to one that keeps a proper prefix of its 512-byte
//   sectors; the later ones are dropped). The policy sees each unflushed write with the sectors
//   it still holds at the point, as the disk's cache would: a sector a later write (before the
//   point) overwrote is the later write's.
// Seeding: state i draws with cutSeedOf(seed, i) (state 0: the seed itself), recorded in the
// plan as cutSeed; VolatileCacheStore.cut(cutSeed) after the same writes keeps the same sectors.
import { seededRandom } from '../../common/seeded-random.ts';
import { SECTOR_BYTES, type WriteLogRecord } from '../write-log.ts';
import { chooseAtCut, ON_CUT_POLICIES, RUN_SECTORS, type CutChoice, type OnCutPolicy, type UnflushedWrite } from '../on-cut.ts';

// Defined in ../on-cut.ts; re-exported for the crash-state modules that import them from here.
export { ON_CUT_POLICIES, RUN_SECTORS, type OnCutPolicy };

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
  /** Unflushed completed writes at the point (the policy chose from those still holding a sector). */
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
  /** The seed of this state's onCut draw (cutSeedOf(seed, index)): the live disk's cut(cutSeed) keeps the same sectors. */
  cutSeed: number;
}

/** The onCut draw seed of state `index` of a plan seeded `seed`: state 0 draws with the seed itself. */
export function cutSeedOf(seed: number, index: number): number {
  return (seed + Math.imul(index, 0x9e3779b1)) >>> 0;
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
  const held = opts.policy === 'drop-unflushed' ? null : new HeldSectors(records);
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
    const cutSeed = cutSeedOf(opts.seed, index);
    const { kept, applied } = held ? keptAtCut(opts.policy, unflushed, records, held, point.position, cutSeed) : { kept: [], applied: unflushed.length > 0 };
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
      cutSeed,
    });
  });
  return plans;
}

function sectorsOf(r: WriteLogRecord): number {
  return Math.ceil(r.length / SECTOR_BYTES);
}

/**
 * Which sectors of each write are still its own at a log position: for every sector of every
 * write (WRITE / TRIM / WRITE_ZEROES), the index of the next write in the log that covers it.
 * A sector of write i is held at position p when no write in (i, p) covers it. Built once per
 * log (one pass backwards); writes no later write overlaps take the fast path.
 */
class HeldSectors {
  /** Per record: the earliest later write covering any of its sectors (Infinity: none). */
  private readonly firstOverwrite: Float64Array;
  /** Per record with an overwritten sector: the next covering write of each of its sectors (-1: none). */
  private readonly next = new Map<number, Int32Array>();

  constructor(private readonly records: readonly WriteLogRecord[]) {
    this.firstOverwrite = new Float64Array(records.length).fill(Infinity);
    const lastWriter = new Map<number, number>();
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i]!;
      if (!isWrite(r)) continue;
      const first = Math.floor(r.offset / SECTOR_BYTES);
      const n = sectorsOf(r);
      let per: Int32Array | null = null;
      for (let k = 0; k < n; k++) {
        const later = lastWriter.get(first + k);
        if (later !== undefined) {
          per ??= new Int32Array(n).fill(-1);
          per[k] = later;
          if (later < this.firstOverwrite[i]!) this.firstOverwrite[i] = later;
        }
        lastWriter.set(first + k, i);
      }
      if (per) this.next.set(i, per);
    }
  }

  /** The absolute sectors write i still holds when records [0, position) have completed, ascending. */
  at(i: number, position: number): number[] {
    const r = this.records[i]!;
    const first = Math.floor(r.offset / SECTOR_BYTES);
    const n = sectorsOf(r);
    const out: number[] = [];
    if (this.firstOverwrite[i]! >= position) {
      for (let k = 0; k < n; k++) out.push(first + k);
      return out;
    }
    const per = this.next.get(i)!;
    for (let k = 0; k < n; k++) if (per[k]! < 0 || per[k]! >= position) out.push(first + k);
    return out;
  }
}

/** The policy's choice (on-cut.ts) over the unflushed writes at a point, as pieces of logged writes. */
function keptAtCut(policy: OnCutPolicy, unflushed: number[], records: WriteLogRecord[], held: HeldSectors, position: number, cutSeed: number): { kept: KeptPiece[]; applied: boolean } {
  const writes: UnflushedWrite[] = [];
  const recordOf: number[] = [];
  for (const i of unflushed) {
    const sectors = held.at(i, position);
    if (sectors.length === 0) continue;
    writes.push({ sectors });
    recordOf.push(i);
  }
  const choice: CutChoice = chooseAtCut(policy, writes, cutSeed);
  const kept: KeptPiece[] = [];
  choice.kept.forEach((sectors, w) => {
    if (sectors.length === 0) return;
    const record = recordOf[w]!;
    const r = records[record]!;
    const first = Math.floor(r.offset / SECTOR_BYTES);
    kept.push({ record, sectors: sectors.length === sectorsOf(r) ? null : sectors.map((s) => s - first) });
  });
  return { kept, applied: choice.applied };
}
