// A group's cache hit ratio: 1 - the device's reads / the bytes served, over the seconds it read;
// a group that caught up is judged over its catch-up only (its tailing afterwards reads memory).
import { describe, expect, it } from 'vitest';
import type { CellResult } from '../results/types.ts';
import type { ConsumerGroupResult } from '../workload/consumers.ts';
import { cacheHitRatio } from './consumer-lines.ts';

const MB = 1e6;
// Measured seconds 0..9 (after a 2 s warm-up): the device read 30 MB in second 5, nothing else.
const timeseries = Array.from({ length: 10 }, (_, t) => ({ t, recordsPerSec: 100, p99Us: 1000, readKBPerSec: t === 5 ? (30 * MB) / 1024 : 0 })) as CellResult['timeseries'];
const group = (over: Partial<ConsumerGroupResult>) => ({ startAtSec: 7, bytes: 60 * MB, catchUp: null, ...over }) as ConsumerGroupResult;

describe('cache hit ratio', () => {
  it('judges a late group over its catch-up: a 30 MB backlog read from the device is a 0 % hit, whatever it tailed afterwards', () => {
    const caught = group({ catchUp: { sec: 0.2, bytes: 30 * MB, mbPerSec: 150, brokerCpuMs: null, brokerCpuMsPerGB: null, clientCpuPct: 50 } });
    expect(cacheHitRatio(caught, timeseries, 2)).toBe(0);
    // Over the whole read (60 MB served, 30 MB of it from the device) the same group would read 50 %.
    expect(cacheHitRatio(group({}), timeseries, 2)).toBe(0.5);
  });

  it('counts the seconds from the group start on, and gives null without read probes or bytes', () => {
    // A group starting after the device read: everything from memory.
    expect(cacheHitRatio(group({ startAtSec: 9 }), timeseries, 2)).toBe(1);
    expect(cacheHitRatio(group({ bytes: 0 }), timeseries, 2)).toBeNull();
    const noProbes = timeseries.map(({ t, recordsPerSec, p99Us }) => ({ t, recordsPerSec, p99Us })) as CellResult['timeseries'];
    expect(cacheHitRatio(group({}), noProbes, 2)).toBeNull();
  });
});
