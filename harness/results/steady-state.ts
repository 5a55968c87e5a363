// Is a performance cell's measured window a steady state, or a ramp? From the load's records
// per second, second by second (after the warm-up): the mean of the first third of the window
// against the mean of the last third, relative to the window's median, beside the window's own
// second-to-second noise (the median absolute change from one second to the next, which a smooth
// ramp barely raises). A change beyond both STEADY_MAX_CHANGE and twice the noise is a ramp: the
// cell's headline figure then averages a transition, and the summary, the report and run.json
// say so ("not steady") rather than rank it beside steady cells.
import { median } from '../../engine/common/stats.ts';
import type { Steadiness } from './types.ts';

/** Fewer measured seconds than this: no verdict. */
export const STEADY_MIN_SECONDS = 4;
/** A first-to-last change of the window's throughput within this fraction of its median is steady whatever the noise. */
export const STEADY_MAX_CHANGE = 0.15;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Callers pass at least one value. */
const medianOf = (xs: readonly number[]): number => median(xs) ?? 0;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${Math.round(x * 100)} %`;
const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** One repetition's window: `perSecond` are its records/s, second by second. */
export function judgeSteadiness(perSecond: readonly number[]): Steadiness {
  const n = perSecond.length;
  const base = { seconds: n, firstRps: 0, lastRps: 0, change: 0, noise: 0 };
  if (n < STEADY_MIN_SECONDS) return { ...base, state: 'unknown', reason: `${n} measured second(s): too few to tell a ramp from a steady state (at least ${STEADY_MIN_SECONDS})` };
  const k = Math.max(1, Math.floor(n / 3));
  const firstRps = mean(perSecond.slice(0, k));
  const lastRps = mean(perSecond.slice(n - k));
  const med = medianOf(perSecond);
  if (med <= 0) return { ...base, firstRps, lastRps, state: 'unknown', reason: 'no records acknowledged in most seconds of the window' };
  const steps = perSecond.slice(1).map((x, i) => Math.abs(x - perSecond[i]!));
  const change = (lastRps - firstRps) / med;
  const noise = medianOf(steps) / med;
  const figures = { seconds: n, firstRps: Math.round(firstRps), lastRps: Math.round(lastRps), change: Math.round(change * 1000) / 1000, noise: Math.round(noise * 1000) / 1000 };
  const went = `records/s went from ${int(firstRps)} (first ${k} s) to ${int(lastRps)} (last ${k} s), ${pct(change)} of the window's median`;
  if (Math.abs(change) > Math.max(STEADY_MAX_CHANGE, 2 * noise)) {
    return { ...figures, state: 'ramping', reason: `${went}, against a second-to-second noise of ${Math.round(noise * 100)} %: the window measures a ${change > 0 ? 'ramp up' : 'decline'}, not a steady state (a longer warm-up or duration would tell)` };
  }
  return { ...figures, state: 'steady', reason: `${went}; noise ${Math.round(noise * 100)} %` };
}

/** A cell's verdict over its repetitions: ramping when any was, steady when all were, else unknown. */
export function cellSteadiness(reps: ReadonlyArray<Steadiness | undefined>): Steadiness | undefined {
  const judged = reps.filter((s): s is Steadiness => s !== undefined);
  if (judged.length === 0) return undefined;
  const ramping = judged.map((s, i) => ({ s, i })).filter((x) => x.s.state === 'ramping');
  if (ramping.length) {
    const worst = ramping.reduce((a, b) => (Math.abs(b.s.change) > Math.abs(a.s.change) ? b : a));
    return { ...worst.s, reason: `${ramping.length} of ${judged.length} repetition(s) not steady; repetition ${worst.i + 1}: ${worst.s.reason}` };
  }
  if (judged.every((s) => s.state === 'steady')) {
    const widest = judged.reduce((a, b) => (Math.abs(b.change) > Math.abs(a.change) ? b : a));
    return { ...widest, reason: `every repetition steady; the widest change: ${widest.reason}` };
  }
  return judged.find((s) => s.state === 'unknown')!;
}
