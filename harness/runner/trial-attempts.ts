// A cell's attempts (run-cell.ts): `repetitions` judged trials wanted, and a budget of
// `extraTrials` more attempts for the whole cell in place of trials that cannot be judged (the
// fault did not fire, suspect: scenario/trial-judgement.ts). A replaced attempt stays in the
// cell's trials, marked replacedBy (and its successor replaces), so a violation in it still
// fails an expectation; once the budget is spent, an unjudged trial stays and its expectation is
// NOT EVALUATED.
import type { RepetitionFigures, Trial } from '../results/types.ts';
import { whyUnjudged } from '../scenario/trial-judgement.ts';

export class TrialAttempts {
  private slotsLeft: number;
  private extraLeft: number;
  private replacing: number | undefined;

  constructor(
    private readonly repetitions: number,
    private readonly extraTrials: number,
    private readonly hasFault: boolean,
  ) {
    this.slotsLeft = repetitions;
    this.extraLeft = extraTrials;
  }

  /** The attempt the running one replaces (an extra attempt), if it does. */
  get replacingIndex(): number | undefined {
    return this.replacing;
  }

  /** Whether another attempt is wanted. */
  get wanted(): boolean {
    return this.slotsLeft > 0;
  }

  /** The attempt's place in the log: "rep 2/3", or "rep 4 (extra attempt 1 of 2, in place of rep 2)". */
  label(index: number): string {
    if (this.replacing === undefined) return `rep ${index + 1}/${this.repetitions}`;
    return `rep ${index + 1} (extra attempt ${this.extraTrials - this.extraLeft} of ${this.extraTrials}, in place of rep ${this.replacing + 1})`;
  }

  /**
   * After attempt `index` ended: marks its trial (null: the attempt left none) replaced when it
   * cannot be judged and the budget allows another attempt; returns the log line saying so, or
   * null. `stopping` (Ctrl-C) runs nothing more.
   */
  settle(index: number, trial: Trial | null, stopping: boolean): string | null {
    const replacing = this.replacing;
    this.replacing = undefined;
    if (trial && replacing !== undefined) trial.replaces = replacing;
    const why = trial ? whyUnjudged(trial, this.hasFault) : null;
    if (trial === null || why === null || this.extraLeft === 0 || stopping) {
      this.slotsLeft--;
      return why === null || stopping ? null : `rep ${index + 1} cannot be judged (${why}) and no extra attempt is left (workload.extraTrials ${this.extraTrials}): an expectation it does not break is NOT EVALUATED`;
    }
    this.extraLeft--;
    this.replacing = index;
    trial.replacedBy = index + 1;
    return `rep ${index + 1} cannot be judged (${why}): running it again (extra attempt ${this.extraTrials - this.extraLeft} of ${this.extraTrials} for this cell); it stays in run.json, replaced by rep ${index + 2}`;
  }
}

/**
 * Marks the figures (one entry per attempt that ran the load, in order) of replaced attempts, and
 * returns a filter that keeps, of any list aligned with them, the entries of attempts not replaced.
 */
export function markReplacedFigures(trials: readonly Trial[], figures: RepetitionFigures[]): <T>(xs: readonly T[]) => T[] {
  const replaced = new Set(trials.filter((t) => t.replacedBy !== undefined).map((t) => t.index));
  for (const f of figures) if (f.trial !== undefined && replaced.has(f.trial)) f.replaced = true;
  return (xs) => xs.filter((_, i) => !figures[i]?.replaced);
}
