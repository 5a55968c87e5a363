// Times a trial step by step (harness/results/trial-steps.ts): each lap gives the time since
// the previous lap to a step, so the steps cover the trial's wall time without gaps or overlap.
import os from 'node:os';
import type { TrialStepDetail, TrialStepKey, TrialTiming } from '../results/trial-steps.ts';
import { TRIAL_STEP_KEYS } from '../results/trial-steps.ts';

export class TrialClock {
  private readonly t0 = performance.now();
  private last = this.t0;
  private readonly ms: Partial<Record<TrialStepKey, number>> = {};
  readonly detail: TrialStepDetail = {};
  /** VM starts that booted instead of resuming a saved guest, with the reason (TrialTiming.notResumed). */
  readonly notResumed: string[] = [];

  /** The time since the last lap goes to `step` (added to what it already has). */
  lap(step: TrialStepKey, now = performance.now()): void {
    this.add(step, now - this.last);
    this.last = now;
  }

  /**
   * The time since the last lap, split: `parts` (measured by the target inside that stretch)
   * first, in order, each capped by what is left; the remainder goes to `rest`.
   */
  lapSplit(parts: Partial<Record<TrialStepKey, number>>, rest: TrialStepKey, now = performance.now()): void {
    let left = now - this.last;
    for (const key of TRIAL_STEP_KEYS) {
      const v = parts[key];
      if (v === undefined || !(v >= 0)) continue;
      const take = Math.min(v, left);
      this.add(key, take);
      left -= take;
    }
    this.add(rest, left);
    this.last = now;
  }

  /** Steps in ms (rounded), whatever is left over as `other`, and the host's load average now. */
  finish(now = performance.now()): TrialTiming {
    const totalMs = Math.round(now - this.t0);
    const steps: Partial<Record<TrialStepKey, number>> = {};
    let sum = 0;
    for (const key of TRIAL_STEP_KEYS) {
      const v = this.ms[key];
      if (v === undefined || key === 'other') continue;
      steps[key] = Math.round(v);
      sum += steps[key]!;
    }
    const other = Math.max(0, totalMs - sum);
    if (other > 0 || this.ms.other !== undefined) steps.other = other;
    const detail = Object.fromEntries(Object.entries(this.detail).filter(([, v]) => typeof v === 'number').map(([k, v]) => [k, Math.round(v as number)]));
    return {
      steps,
      totalMs,
      ...(Object.keys(detail).length ? { detail } : {}),
      ...(this.notResumed.length ? { notResumed: [...this.notResumed] } : {}),
      loadAvg1: Math.round(os.loadavg()[0]! * 100) / 100,
      cores: os.cpus().length,
    };
  }

  private add(step: TrialStepKey, ms: number): void {
    this.ms[step] = (this.ms[step] ?? 0) + Math.max(0, ms);
  }
}
