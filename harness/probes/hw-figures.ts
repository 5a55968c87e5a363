// What the high watermarks sampled beside the ISR (harness/probes/isr-sampler.ts) say on the
// load's timeline: how many records the HW committed each second (beside the acknowledged
// records/s: acks=1 acknowledges what the HW has not committed yet, and a follower that falls
// behind holds the HW while acks=all waits), and the longest the HW of some partition stood
// still while the load ran.
import type { HwChange } from './isr-sampler.ts';

/** The last numeric HW of `partition` at or before `ms`; undefined before its first reading. */
function hwAt(changes: readonly HwChange[], partition: number, ms: number): number | undefined {
  let found: number | undefined;
  for (const c of changes) {
    if (c.atMs > ms) break;
    if (c.partition === partition && c.hw !== null) found = c.hw;
  }
  return found;
}

/**
 * The records the HW advanced in each second since `startMs`, summed over partitions (null: no
 * partition had a reading at both ends of that second). An HW that went back counts as 0 here;
 * going back is the checker's finding (ledger.hwWentBack), not a rate.
 */
export function hwAdvancedPerSecond(changes: readonly HwChange[], startMs: number, seconds: number): Array<number | null> {
  const partitions = [...new Set(changes.map((c) => c.partition))];
  const out: Array<number | null> = [];
  for (let s = 0; s < seconds; s++) {
    const from = startMs + s * 1000;
    let sum: number | null = null;
    for (const p of partitions) {
      const a = hwAt(changes, p, from);
      const b = hwAt(changes, p, from + 1000);
      if (a === undefined || b === undefined) continue;
      sum = (sum ?? 0) + Math.max(0, b - a);
    }
    out.push(sum);
  }
  return out;
}

/**
 * The longest span within [fromMs, toMs] over which some partition's HW did not advance (a reading
 * that failed in between counts as not advanced: the HW was at best where it stood). Null when no
 * partition had a reading in the window.
 */
export function hwLongestStillMs(changes: readonly HwChange[], fromMs: number, toMs: number): number | null {
  let longest: number | null = null;
  for (const p of new Set(changes.map((c) => c.partition))) {
    const readings = changes.filter((c) => c.partition === p && c.hw !== null);
    let since: number | null = null;
    let value: number | undefined;
    for (const c of readings) {
      if (c.atMs > toMs) break;
      if (value === undefined || c.hw! > value) {
        if (since !== null && c.atMs > fromMs) longest = Math.max(longest ?? 0, c.atMs - Math.max(since, fromMs));
        since = c.atMs;
      }
      value = value === undefined ? c.hw! : Math.max(value, c.hw!);
    }
    if (since !== null) longest = Math.max(longest ?? 0, toMs - Math.max(since, fromMs));
  }
  return longest;
}
