// The HW figures' arithmetic on fixed changes (the sampler reads them from real clusters in
// harness/faults/network-faults.test.ts, where a partition holds the HW until the ISR shrinks).
import { describe, expect, it } from 'vitest';
import { hwAdvancedPerSecond, hwLongestStillMs } from './hw-figures.ts';
import type { HwChange } from './isr-sampler.ts';

const changes: HwChange[] = [
  { atMs: 100, partition: 0, hw: 0 },
  { atMs: 600, partition: 0, hw: 50 },
  { atMs: 1200, partition: 0, hw: 120 },
  { atMs: 1300, partition: 1, hw: 10 },
  // Partition 0 stands still from 1.2 s; a failed reading at 2.5 s does not end its stillness.
  { atMs: 2500, partition: 0, hw: null },
  { atMs: 3400, partition: 0, hw: 120 },
  { atMs: 3600, partition: 0, hw: 200 },
  { atMs: 3700, partition: 1, hw: 30 },
];

describe('HW figures from the sampled changes', () => {
  it('sums what the HW advanced per second, null where no partition had readings at both ends', () => {
    // s0: p0 0 -> 50 (p1 unread); s1: p0 50 -> 120; s2: p0 120 -> 120, p1 10 -> 10; s3: p0 120 -> 200, p1 10 -> 30.
    expect(hwAdvancedPerSecond(changes, 100, 4)).toEqual([50, 70, 0, 100]);
    expect(hwAdvancedPerSecond(changes, -2000, 2)).toEqual([null, null]);
  });
  it('finds the longest span some partition stood still, clipped to the window', () => {
    // p0: 1.2 s -> 3.6 s (2.4 s, through the failed reading); p1: 1.3 s -> 3.7 s (2.4 s).
    expect(hwLongestStillMs(changes, 0, 4000)).toBe(2400);
    // Clipped: from 3.0 s only; then p0 still from 3.6 s to the window's end at 5.0 s.
    expect(hwLongestStillMs(changes, 3000, 5000)).toBe(1400);
    expect(hwLongestStillMs([], 0, 1000)).toBeNull();
  });
});
