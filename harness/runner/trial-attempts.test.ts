// The attempt bookkeeping of a cell (trial-attempts.ts); the runner end to end with a fault that
// never fires is in harness/cli/bench-command.test.ts.
import { describe, expect, it } from 'vitest';
import type { RepetitionFigures, Trial } from '../results/types.ts';
import { TrialAttempts, markReplacedFigures } from './trial-attempts.ts';

const ledger = { acked: 100, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0 };
const judged = (index: number): Trial => ({ index, ledger, fault: { kind: 'process-kill', targets: [0], atMs: 1000, ackedBeforeCut: 50, recovery: [] } });
const unfired = (index: number): Trial => ({ index, ledger, suspect: true, note: 'the fault (at 9 s) never fired: the load ended first' });
const suspect = (index: number): Trial => ({ ...judged(index), suspect: true, note: 'no acknowledgement in the last 1.4 s' });

/** Runs attempts whose outcomes are `outcomes` in turn until the bookkeeping wants no more. */
function run(attempts: TrialAttempts, outcomes: Array<(i: number) => Trial>, stopAt = Infinity): { trials: Trial[]; lines: string[] } {
  const trials: Trial[] = [];
  const lines: string[] = [];
  for (let i = 0; attempts.wanted; i++) {
    if (i >= outcomes.length) throw new Error(`attempt ${i} was not expected`);
    const t = outcomes[i]!(i);
    trials.push(t);
    const line = attempts.settle(i, t, i >= stopAt);
    if (line) lines.push(line);
  }
  return { trials, lines };
}

describe('a cell\'s attempts', () => {
  it('replaces unjudged trials within the cell\'s budget, then keeps the rest unjudged', () => {
    const attempts = new TrialAttempts(3, 2, true);
    const { trials, lines } = run(attempts, [judged, unfired, suspect, unfired, judged]);
    expect(trials.map((t) => [t.index, t.replacedBy, t.replaces])).toEqual([
      [0, undefined, undefined],
      [1, 2, undefined],
      [2, 3, 1],
      [3, undefined, 2],
      [4, undefined, undefined],
    ]);
    expect(lines).toEqual([
      'rep 2 cannot be judged (the fault (at 9 s) never fired: the load ended first): running it again (extra attempt 1 of 2 for this cell); it stays in run.json, replaced by rep 3',
      'rep 3 cannot be judged (suspect (no acknowledgement in the last 1.4 s)): running it again (extra attempt 2 of 2 for this cell); it stays in run.json, replaced by rep 4',
      'rep 4 cannot be judged (the fault (at 9 s) never fired: the load ended first) and no extra attempt is left (workload.extraTrials 2): an expectation it does not break is NOT EVALUATED',
    ]);
  });

  it('labels an extra attempt with the one it replaces', () => {
    const attempts = new TrialAttempts(1, 2, true);
    expect(attempts.label(0)).toBe('rep 1/1');
    attempts.settle(0, unfired(0), false);
    expect(attempts.label(1)).toBe('rep 2 (extra attempt 1 of 2, in place of rep 1)');
    attempts.settle(1, judged(1), false);
    expect(attempts.wanted).toBe(false);
  });

  it('runs nothing more with extraTrials 0, after Ctrl-C, or for an attempt that left no trial', () => {
    expect(run(new TrialAttempts(2, 0, true), [unfired, unfired]).trials.map((t) => t.replacedBy)).toEqual([undefined, undefined]);
    const stopped = run(new TrialAttempts(2, 2, true), [unfired, unfired], 0);
    expect(stopped.trials.map((t) => t.replacedBy)).toEqual([undefined, undefined]);
    expect(stopped.lines).toEqual([]);
    const none = new TrialAttempts(1, 2, true);
    expect(none.settle(0, null, false)).toBeNull();
    expect(none.wanted).toBe(false);
  });

  it('a trial without a fault is judged in a cell without one (measure: throughput, no faults:)', () => {
    const { trials } = run(new TrialAttempts(2, 2, false), [(i) => ({ index: i, ledger }), (i) => ({ index: i, ledger })]);
    expect(trials.map((t) => t.replacedBy)).toEqual([undefined, undefined]);
    const rerun = run(new TrialAttempts(1, 1, true), [(i) => ({ index: i, ledger }), judged]);
    expect(rerun.trials.map((t) => t.replacedBy)).toEqual([1, undefined]);
  });

  it('marks a replaced attempt\'s figures and keeps the others for the medians', () => {
    const figures = (trial: number, recordsPerSec: number): RepetitionFigures => ({ trial, recordsPerSec, mbPerSec: 1, p50Us: 1, p99Us: 2, p999Us: 3 });
    const reps = [figures(0, 10), figures(1, 500), figures(2, 30)];
    const keep = markReplacedFigures([judged(0), { ...unfired(1), replacedBy: 2 }, { ...judged(2), replaces: 1 }], reps);
    expect(reps.map((r) => r.replaced)).toEqual([undefined, true, undefined]);
    expect(keep([10, 500, 30])).toEqual([10, 30]);
    expect(keep(reps).map((r) => r.trial)).toEqual([0, 2]);
  });
});
