// The onCut policies: what of a volatile write cache reaches the media when the power goes.
// The one definition of the words (`vm.disk.onCut`, the crash-states fault's `onCut`) and the
// one implementation of their meaning, used by the live NBD disk (volatile-cache.ts,
// VolatileCacheStore.cut) and by the crash-state builder (crash-states/plan.ts), so the same
// YAML word builds the same disk in both.
//
// Input: the unflushed writes at the cut, in arrival order, each with the 512-byte sectors it
// still holds in the cache (absolute sector numbers, ascending; a sector a later write
// overwrote belongs to the later write: a cache keeps one copy of a sector, the newest). A
// write that holds no sector any more is not passed. Output: per write, the sectors that
// persist. Every draw comes from `seededRandom(seed)`, consumed in a fixed order (below), so
// the same writes and the same seed always keep the same sectors, wherever they are computed.
//
// Semantics, one per word (decided here; engine/settings/registry.ts documents them):
//   drop-unflushed  nothing unflushed persists. The guarantee a FLUSH gives and nothing more.
//   torn            the writes persist in arrival order up to one drawn write, which keeps only
//                   a non-empty proper PREFIX of its sectors (in sector order); every later write
//                   is lost. A prefix, not a random subset: a torn write is a transfer the power
//                   interrupted, and a drive writes a request's sectors front to back; 512 bytes
//                   is the atomic unit. The drawn write is uniform among those holding >= 2
//                   sectors (a one-sector write cannot tear); when none does, among all, and it
//                   keeps nothing (the power went just before it: an in-order prefix survives).
//   random-subset   each unflushed write's runs persist independently with p = 1/2. A run is a
//                   maximal contiguous range of the write's sectors within one 4 KiB-aligned
//                   block of the disk (8 sectors, sector numbers 8k .. 8k+7). Not the whole
//                   contiguous extent of the write (that would keep or drop a 1 MiB write as
//                   one piece, which no drive promises), not single sectors (a 512e drive's
//                   physical sector, ext4's block and a flash page are 4 KiB: what a drive
//                   destages and writes atomically). Aligned to the disk, not to the write's
//                   start, because that is where the physical 4 KiB sectors are.
//   reorder         a non-empty suffix of the unflushed writes persists (whole), the non-empty
//                   run of writes before it is lost: later writes reached the media, an earlier
//                   one did not (e.g. a journal commit block without its journal data). The
//                   split is uniform among the n-1 places between writes. It never keeps
//                   nothing and never keeps everything: either state is one an ordered drive
//                   produces too (drop-unflushed, a clean flush), so it would show no reordering.
//                   With fewer than two writes there is no order to break: nothing persists and
//                   the policy is reported not applied.
// Draw order: random-subset one draw per run (writes in order, runs ascending); reorder one
// draw (the split); torn one draw for the write, then one for the prefix length when it tears.
import { seededRandom } from '../common/seeded-random.ts';

import { ON_CUT_POLICIES, type OnCutPolicy } from '../model/kinds.ts';
export { ON_CUT_POLICIES, type OnCutPolicy };

/** Sectors of one random-subset block (4 KiB of 512-byte sectors, aligned on the disk). */
export const RUN_SECTORS = 8;

/** One unflushed write at the cut: the sectors it still holds (absolute 512-byte sector numbers, strictly ascending, at least one). */
export interface UnflushedWrite {
  sectors: readonly number[];
}

export interface CutChoice {
  policy: OnCutPolicy;
  /** Per input write (same order): the sectors of it that persist, ascending ([] = lost). */
  kept: number[][];
  /** False when the policy had nothing to act on (no writes; reorder with fewer than two). */
  applied: boolean;
  /** torn: the write (index into the input) that persisted in part. Absent when no write could tear. */
  torn?: { write: number; keptSectors: number; ofSectors: number };
}

/** Which sectors of which unflushed writes persist at a cut under `policy`, drawn from `seed`. */
export function chooseAtCut(policy: OnCutPolicy, writes: readonly UnflushedWrite[], seed: number): CutChoice {
  writes.forEach((w, i) => {
    if (w.sectors.length === 0) throw new Error(`onCut: unflushed write ${i} holds no sector (pass only writes that still hold one)`);
    for (let k = 1; k < w.sectors.length; k++) {
      if (!(w.sectors[k]! > w.sectors[k - 1]!)) throw new Error(`onCut: the sectors of unflushed write ${i} must be strictly ascending (${w.sectors[k - 1]} then ${w.sectors[k]})`);
    }
  });
  const rand = seededRandom(seed);
  const kept: number[][] = writes.map(() => []);
  const n = writes.length;
  switch (policy) {
    case 'drop-unflushed':
      return { policy, kept, applied: n > 0 };
    case 'random-subset':
      writes.forEach((w, i) => {
        for (const run of blockRunsOf(w.sectors)) if (rand() < 0.5) kept[i]!.push(...run);
      });
      return { policy, kept, applied: n > 0 };
    case 'reorder': {
      if (n < 2) return { policy, kept, applied: false };
      const from = 1 + Math.floor(rand() * (n - 1)); // 1 .. n-1
      for (let i = from; i < n; i++) kept[i] = [...writes[i]!.sectors];
      return { policy, kept, applied: true };
    }
    case 'torn': {
      if (n === 0) return { policy, kept, applied: false };
      const tearable = writes.flatMap((w, i) => (w.sectors.length > 1 ? [i] : []));
      const pool = tearable.length > 0 ? tearable : writes.map((_, i) => i);
      const t = pool[Math.floor(rand() * pool.length)]!;
      for (let i = 0; i < t; i++) kept[i] = [...writes[i]!.sectors];
      const of = writes[t]!.sectors;
      if (of.length < 2) return { policy, kept, applied: true };
      const prefix = 1 + Math.floor(rand() * (of.length - 1)); // 1 .. len-1
      kept[t] = of.slice(0, prefix);
      return { policy, kept, applied: true, torn: { write: t, keptSectors: prefix, ofSectors: of.length } };
    }
  }
}

/** Maximal contiguous runs of sorted sector numbers. */
export function runsOf(sorted: readonly number[]): number[][] {
  const out: number[][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && last[last.length - 1] === s - 1) last.push(s);
    else out.push([s]);
  }
  return out;
}

/** random-subset's runs: maximal contiguous runs of sorted sector numbers, split at 4 KiB-aligned block boundaries. */
export function blockRunsOf(sorted: readonly number[]): number[][] {
  const out: number[][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev === s - 1 && Math.floor(prev / RUN_SECTORS) === Math.floor(s / RUN_SECTORS)) last.push(s);
    else out.push([s]);
  }
  return out;
}
