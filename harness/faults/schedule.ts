// When a fault fires: at a fixed second of the load, at a uniformly random second of a window
// (drawn per trial from a recorded seed, so a trial can be replayed), or once the ledger counts
// N acknowledged records. Cuts at a fixed second can keep landing on an ext4 journal commit;
// random times and ack counts spread them (notes/vm-power-cut.md).
import { seededRandom } from '../common/seeded-random.ts';
import type { Fault, FaultWhen } from '../model/scenario.ts';

export interface FaultPlan {
  fault: Fault;
  /** As the scenario wrote it, for run.json and the terminal. */
  whenText: string;
  /** Milliseconds since the load started; null for afterAcked. */
  atMs: number | null;
  afterAcked: number | null;
  /** The seed of the draw (between only). */
  seed?: number;
}

export function describeWhen(when: FaultWhen): string {
  if ('at' in when) return `at ${when.at} s`;
  if ('between' in when) return `between ${when.between[0]} and ${when.between[1]} s`;
  return `after ${when.afterAcked} acknowledged records`;
}

export function planFault(fault: Fault, seed: number): FaultPlan {
  const w = fault.when;
  const whenText = describeWhen(w);
  if ('at' in w) return { fault, whenText, atMs: Math.round(w.at * 1000), afterAcked: null };
  if ('between' in w) {
    const [from, to] = w.between;
    const r = seededRandom(seed)();
    return { fault, whenText, atMs: Math.round((from + r * (to - from)) * 1000), afterAcked: null, seed };
  }
  return { fault, whenText, atMs: null, afterAcked: w.afterAcked };
}

export type FaultMoment = 'fire' | 'load-ended' | 'aborted';

export interface WaitOptions {
  loadStartMs: number;
  /** Acknowledged records so far (the ledger's count). */
  ackedRecords: () => number;
  /** Settles when the load finished on its own. */
  loadDone: Promise<unknown>;
  signal: AbortSignal;
  /** Ledger polling period for afterAcked; default 20 ms. */
  pollMs?: number;
}

/** Resolves when the fault is due, or when the load ended first, or on abort. */
export function waitForFaultMoment(plan: FaultPlan, opts: WaitOptions): Promise<FaultMoment> {
  return new Promise<FaultMoment>((resolve) => {
    let timer: NodeJS.Timeout | null = null;
    let settled = false;
    const finish = (m: FaultMoment) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      resolve(m);
    };
    const onAbort = () => finish('aborted');
    if (opts.signal.aborted) return finish('aborted');
    opts.signal.addEventListener('abort', onAbort, { once: true });
    void opts.loadDone.then(
      () => finish('load-ended'),
      () => finish('load-ended'),
    );
    if (plan.atMs !== null) {
      const atMs = plan.atMs;
      timer = setTimeout(() => finish('fire'), Math.max(0, opts.loadStartMs + atMs - Date.now()));
      return;
    }
    const target = plan.afterAcked!;
    const poll = () => {
      if (settled) return;
      if (opts.ackedRecords() >= target) return finish('fire');
      timer = setTimeout(poll, opts.pollMs ?? 20);
    };
    poll();
  });
}
