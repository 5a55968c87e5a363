import { describe, expect, it } from 'vitest';
import { planFault, waitForFaultMoment } from './schedule.ts';
import type { Fault } from '../model/scenario.ts';

const fault = (when: Fault['when']): Fault => ({ kind: 'process-kill', target: 'all', when });
const never = new Promise<void>(() => {});

describe('planFault', () => {
  it('draws between-times inside the window, the same for the same seed, spread over seeds', () => {
    const f = fault({ between: [3, 9] });
    const times = Array.from({ length: 200 }, (_, seed) => planFault(f, seed).atMs!);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(3000);
    expect(Math.max(...times)).toBeLessThanOrEqual(9000);
    // spread: both halves of the window are hit
    expect(times.filter((t) => t < 6000).length).toBeGreaterThan(60);
    expect(times.filter((t) => t >= 6000).length).toBeGreaterThan(60);
    expect(planFault(f, 42)).toEqual(planFault(f, 42));
    expect(planFault(f, 42).seed).toBe(42);
    expect(planFault(f, 42).whenText).toBe('between 3 and 9 s');
  });

  it('keeps at and afterAcked as written', () => {
    expect(planFault(fault({ at: 4.5 }), 1)).toMatchObject({ atMs: 4500, afterAcked: null, whenText: 'at 4.5 s' });
    expect(planFault(fault({ afterAcked: 5000 }), 1)).toMatchObject({ atMs: null, afterAcked: 5000, whenText: 'after 5000 acknowledged records' });
  });
});

describe('waitForFaultMoment', () => {
  it('fires at the planned time since the load started', async () => {
    const start = Date.now();
    const m = await waitForFaultMoment(planFault(fault({ at: 0.15 }), 1), { loadStartMs: start, ackedRecords: () => 0, loadDone: never, signal: new AbortController().signal });
    expect(m).toBe('fire');
    expect(Date.now() - start).toBeGreaterThanOrEqual(145);
    expect(Date.now() - start).toBeLessThan(400);
  });

  it('fires once the ledger counts N acknowledged records, polling every 20 ms', async () => {
    const start = Date.now();
    const acked = () => Math.floor((Date.now() - start) / 10) * 16; // 1,600 records/s
    const m = await waitForFaultMoment(planFault(fault({ afterAcked: 320 }), 1), { loadStartMs: start, ackedRecords: acked, loadDone: never, signal: new AbortController().signal });
    expect(m).toBe('fire');
    const at = Date.now() - start;
    expect(at).toBeGreaterThanOrEqual(195);
    expect(at).toBeLessThan(400);
  });

  it('reports a load that ended before the fault, and Ctrl-C', async () => {
    const ended = await waitForFaultMoment(planFault(fault({ afterAcked: 10 }), 1), {
      loadStartMs: Date.now(),
      ackedRecords: () => 0,
      loadDone: new Promise((r) => setTimeout(r, 50)),
      signal: new AbortController().signal,
    });
    expect(ended).toBe('load-ended');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const aborted = await waitForFaultMoment(planFault(fault({ at: 5 }), 1), { loadStartMs: Date.now(), ackedRecords: () => 0, loadDone: never, signal: ac.signal });
    expect(aborted).toBe('aborted');
  });
});
