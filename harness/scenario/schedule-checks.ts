// Checks of a scenario's fault schedule as a whole (fault-checks.ts checks each entry alone):
// a lasting entry that would heal after the load, a kind whose cell is its own trial among
// others, entries after one that stops the load (its brokers stay down until the check), entries
// written out of order, and two lasting entries of one kind on brokers they may share at once
// (the first heal would end the other early).
import { FAULTS } from '../faults/registry.ts';
import { describeWhen } from '../faults/schedule.ts';
import type { Fault, FaultVictims } from '../model/scenario.ts';

export interface ScheduleIssue {
  /** Under `faults:`. */
  path: Array<string | number>;
  expected: string;
  found: string;
}

/** Seconds from the load's start an entry starts at the earliest and latest; null for afterAcked (known only as the load runs). */
function startWindow(f: Fault): [number, number] | null {
  if ('at' in f.when) return [f.when.at, f.when.at];
  if ('between' in f.when) return f.when.between;
  return null;
}

function victimsText(t: FaultVictims): string {
  if (typeof t !== 'object') return t;
  return 'broker' in t ? `broker ${t.broker}` : `brokers ${t.brokers.join(', ')}`;
}

/** Whether two targets may name one broker at once (leader and followers never do). */
function mayShare(a: FaultVictims, b: FaultVictims): boolean {
  if (a === 'all' || b === 'all') return true;
  if (typeof a === 'object' && typeof b === 'object') {
    const of = (t: typeof a) => ('broker' in t ? [t.broker] : t.brokers);
    return of(a).some((x) => of(b).includes(x));
  }
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  return true; // leader or followers beside a broker index: it may be that broker
}

/** `items`: the entries that parsed (undefined: reported elsewhere); `loadSec`: warm-up + duration, when known. */
export function checkSchedule(items: ReadonlyArray<Fault | undefined>, loadSec: number | null): ScheduleIssue[] {
  const out: ScheduleIssue[] = [];
  const entries = items.flatMap((f, i) => (f ? [{ f, i }] : []));
  for (const { f, i } of entries) {
    const w = startWindow(f);
    if (loadSec !== null && w && f.duration !== undefined && w[1] + f.duration > loadSec) {
      out.push({
        path: [i, 'duration'],
        expected: `a ${f.kind} that heals within the load (warm-up + duration = ${loadSec} s; starting ${describeWhen(f.when)}, at most ${Math.max(0, loadSec - w[1])} s)`,
        found: `${f.duration} s`,
      });
    }
    if (FAULTS[f.kind].ownCell && items.length > 1) {
      out.push({ path: [i, 'kind'], expected: `a ${f.kind} fault alone in faults: (its cell is its own trial: one recorded run, then its states)`, found: `'${f.kind}' among ${items.length} entries` });
    }
  }
  const stopper = entries.find(({ f }) => !FAULTS[f.kind].loadRunsThrough);
  for (const { f, i } of entries) {
    if (stopper && i > stopper.i) {
      const s = stopper.f;
      out.push({
        path: [i, 'kind'],
        expected: `no fault after faults[${stopper.i}] (${s.kind} of ${victimsText(s.target)}): the load stops there and ${FAULTS[s.kind].restartsBrokers ? 'its brokers stay down until the check' : 'nothing runs after it'}, so a ${f.kind} of ${victimsText(f.target)} cannot apply; put it before`,
        found: `'${f.kind}'`,
      });
    }
  }
  for (let a = 0; a < entries.length; a++) {
    for (let b = a + 1; b < entries.length; b++) {
      const { f: first, i } = entries[a]!;
      const { f: later, i: j } = entries[b]!;
      const wi = startWindow(first);
      const wj = startWindow(later);
      if (!wi || !wj) continue;
      if (wj[1] < wi[0]) {
        out.push({ path: [j, 'when'], expected: `a moment at or after faults[${i}]'s (${describeWhen(first.when)}): entries apply in the order written`, found: describeWhen(later.when) });
        continue;
      }
      if (first.kind === later.kind && first.duration !== undefined && wj[0] < wi[1] + first.duration && mayShare(first.target, later.target)) {
        out.push({
          path: [j, 'when'],
          expected: `a start after faults[${i}] (${first.kind} of ${victimsText(first.target)} ${describeWhen(first.when)} for ${first.duration} s) has healed: the two may hit one broker at once, and the first heal would end the second early`,
          found: describeWhen(later.when),
        });
      }
    }
  }
  return out;
}
