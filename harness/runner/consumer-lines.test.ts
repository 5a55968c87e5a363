// A group's cache hit ratio: 1 - the device's reads / the bytes served, over the seconds it read;
// a group that caught up is judged over its catch-up only (its tailing afterwards reads memory).
import { describe, expect, it } from 'vitest';
import type { CellResult, RunResult } from '../results/types.ts';
import { measuredMedians, measuredRates, type ConsumerGroupResult } from '../results/consumer-groups.ts';
import { cacheHitRatio, consumerLine, consumerSummary } from './consumer-lines.ts';
import { consumersSection } from '../report/consumers-section.ts';

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

describe('consumer figures nothing measured', () => {
  const latency = (count: number, p50: number, p99: number) => ({ p50, p90: p99, p99, p999: p99, p9999: p99, max: p99, count });
  const measured = (over: Partial<ConsumerGroupResult>) =>
    ({
      name: 'late',
      start: 'earliest',
      membership: 'fetch',
      partitions: [0],
      startAtSec: 0,
      activeSec: 2,
      records: 1000,
      bytes: MB,
      recordsPerSec: 500,
      mbPerSec: 0.5,
      fetches: 10,
      fetchLatencyUs: latency(10, 800, 2000),
      endToEndUs: latency(1000, 3000, 9000),
      lag: { max: 400, end: 7 },
      perSecond: [],
      checks: { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 },
      offsetResets: 0,
      errors: [],
      catchUp: null,
      ...over,
    }) as ConsumerGroupResult;
  // A repetition whose group never got a fetch answered (its start came after the load ended).
  const idle = measured({ records: 0, bytes: 0, recordsPerSec: 0, mbPerSec: 0, fetches: 0, fetchLatencyUs: latency(0, 0, 0), endToEndUs: latency(0, 0, 0), lag: { max: 0, end: 0 } });

  it('takes medians over the repetitions that measured each figure, and shows a dash where none did', () => {
    expect(measuredMedians([measured({}), idle])).toEqual({ fetchP99Us: 2000, e2eP50Us: 3000, e2eP99Us: 9000, lagMax: 400, lagEnd: 7 });
    expect(measuredMedians([idle])).toEqual({ fetchP99Us: null, e2eP50Us: null, e2eP99Us: null, lagMax: null, lagEnd: null });
    expect(consumerLine(idle)).toContain('fetch p50/p99 -/- µs, end-to-end p50/p99 -/- µs; lag max -, at the end -');
    expect(consumerLine(measured({}))).toContain('fetch p50/p99 800/2,000 µs, end-to-end p50/p99 3,000/9,000 µs; lag max 400, at the end 7');
    const run = { cells: [{ id: 'c', consumers: [{ repetition: 0, groups: [idle] }] }] } as unknown as RunResult;
    const row = consumerSummary(run).split('\n').find((l) => l.startsWith('c '))!;
    expect(row.split(/\s{2,}/).slice(5, 10)).toEqual(['-', '-', '-', '-', '-']);
  });

  it("gives a group that never fetched no rates: '-' in the terminal and the report, and left out of the medians", () => {
    expect(measuredRates([measured({}), idle])).toEqual({ recordsPerSec: 500, mbPerSec: 0.5 });
    expect(measuredRates([idle])).toEqual({ recordsPerSec: null, mbPerSec: null });
    // A group that fetched and was served nothing measured a rate of 0.
    expect(measuredRates([measured({ records: 0, bytes: 0, recordsPerSec: 0, mbPerSec: 0 })])).toEqual({ recordsPerSec: 0, mbPerSec: 0 });
    expect(consumerLine(idle)).toContain('0 records (no fetch answered), - records/s, - MB/s over 2.0 s');
    expect(consumerLine(measured({}))).toContain('1,000 records, 500 records/s, 0.5 MB/s over 2.0 s');
    const only = { cells: [{ id: 'c', consumers: [{ repetition: 0, groups: [idle] }] }] } as unknown as RunResult;
    const row = consumerSummary(only).split('\n').find((l) => l.startsWith('c '))!;
    expect(row.split(/\s{2,}/).slice(3, 5)).toEqual(['-', '-']);
    // With a repetition that fetched, its rates alone: 500 records/s, not the median of 500 and 0.
    const mixed = { cells: [{ id: 'c', consumers: [{ repetition: 0, groups: [measured({})] }, { repetition: 1, groups: [idle] }] }] } as unknown as RunResult;
    expect(consumerSummary(mixed).split('\n').find((l) => l.startsWith('c '))!.split(/\s{2,}/).slice(3, 5)).toEqual(['500', '0.5']);
    const html = consumersSection(only);
    // records/s and MB/s after the cell, group and start cells.
    const tds = html.slice(html.indexOf('<tr><th scope="row"')).split('<td').slice(3, 5);
    expect(tds.map((td) => />([^<]*)</.exec(td)?.[1])).toEqual(['—', '—']);
    expect(consumersSection(mixed)).toContain('<td class="num" data-v="500">500</td><td class="num" data-v="0.5">0.5</td>');
  });
});
