// The seconds of a lasting fault and the figures read from them, on fixed points (the real runs:
// harness/faults/pause.test.ts and network-faults.test.ts print them from brokers).
import { describe, expect, it } from 'vitest';
import { p99DuringFault, secondsDuringFault, utilDuringFault } from './fault-p99.ts';
import type { ScheduleEntryOutcome } from '../results/types.ts';

const entry = (startMs: number | null, healMs: number | null | undefined): ScheduleEntryOutcome =>
  ({ entry: 0, kind: 'pause', when: 'at 2 s', startMs, healMs, targets: [1] }) as unknown as ScheduleEntryOutcome;

// The load started at 10,000 ms (wall clock) and measured from 11,000 ms (1 s warm-up); the pause lasted 3-5 s of the load.
const window = { measureStartMs: 11_000, loadStartMs: 10_000, schedule: [entry(3000, 5000)] };
const points = [0, 1, 2, 3, 4, 5, 6].map((t) => ({ t, p99Us: t === 3 ? 900_000 : 1000 * (t + 1), recordsPerSec: 1, requestsPerSec: 1, utilPct: t >= 2 && t <= 5 ? 10 : 80 }));

describe('figures while a lasting fault was in force', () => {
  it('takes the seconds from its start to a second after its heal', () => {
    // From 13,000 to 16,000 ms wall: measured seconds 2 (13-14 s), 3, 4 (15-16 s).
    expect(secondsDuringFault(points, window)!.map((p) => p.t)).toEqual([2, 3, 4]);
    expect(p99DuringFault({ ...window, series: points })).toBe(900_000);
    expect(utilDuringFault({ ...window, points })).toBe(10);
  });
  it('has no figure without a lasting entry that started and healed, or without samples', () => {
    expect(p99DuringFault({ ...window, schedule: [entry(3000, undefined)], series: points })).toBeUndefined();
    expect(p99DuringFault({ ...window, schedule: [entry(null, null)], series: points })).toBeUndefined();
    expect(utilDuringFault({ ...window, points: points.map(({ t }) => ({ t })) })).toBeUndefined();
  });
});
