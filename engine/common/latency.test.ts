// The latency recorder's cheap front array must not change a single figure: same summary as
// recording every value straight into hdr-histogram-js.
import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { LatencyRecorder, summarizeLatency, warmLatencySummaries } from './latency.ts';

function plainSummary(values: number[]) {
  const h = hdr.build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });
  for (const v of values) h.recordValue(v < 0 ? 0 : Math.round(v));
  return summarizeLatency(h);
}

describe('LatencyRecorder', () => {
  it('summarises exactly as hdr-histogram-js fed every value, below and above the front array', () => {
    // A seeded mix: mostly small (the front array), a tail up to seconds, negatives and fractions.
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const values: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const r = rand();
      values.push(r < 0.9 ? rand() * 1100 : r < 0.99 ? rand() * 50_000 : r < 0.995 ? -rand() * 3 : rand() * 3_000_000);
    }
    const rec = new LatencyRecorder();
    for (const v of values) rec.record(v);
    const want = plainSummary(values);
    expect(rec.summary()).toEqual(want);
    // Reading folds the front array; recording more after a read keeps counting.
    rec.record(5);
    expect(rec.summary().count).toBe(values.length + 1);
  });

  it('reports zeros when nothing was recorded', () => {
    expect(new LatencyRecorder().summary()).toEqual({ p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, mean: 0, count: 0 });
  });

  it('warms the summary code on a populated histogram (an empty one returns before the percentile code)', () => {
    // Both sides of the front array: 100 µs folds from it, 5,000 µs goes straight to the histogram.
    expect(warmLatencySummaries()).toEqual(plainSummary([100, 5000]));
    expect(warmLatencySummaries().count).toBe(2);
  });
});

describe('LatencyRecorder allocation', () => {
  it('allocates nothing until the first record, also when summarized before (10,000 idle partitions)', () => {
    const r = new LatencyRecorder();
    const fields = r as unknown as { hist: unknown; direct: Uint32Array | null };
    expect(r.summary().count).toBe(0);
    expect([fields.hist, fields.direct]).toEqual([null, null]);
    r.record(250);
    r.record(5000);
    const s = r.summary();
    expect(s.count).toBe(2);
    expect(s.max).toBeGreaterThanOrEqual(4995);
    expect(fields.hist).not.toBeNull();
  });

  it('summarizes values below 1,024 µs from its front array alone, as hdr-histogram-js would, sized to the largest', () => {
    let seed = 777;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const top of [40, 300, 1023]) {
      const r = new LatencyRecorder();
      const fields = r as unknown as { hist: unknown; direct: Uint32Array | null };
      const values = Array.from({ length: 20_000 }, (_, i) => (i === 0 ? top : rand() * top));
      for (const v of values) r.record(v);
      expect(r.summary()).toEqual(plainSummary(values));
      // No histogram for a recorder that only saw small values (a flush, a cheap append).
      expect(fields.hist).toBeNull();
      expect(fields.direct!.length).toBe(top < 64 ? 64 : top < 512 ? 512 : 1024);
      // Reading changes nothing: more values after a read still summarize exactly.
      r.record(3);
      values.push(3);
      expect(r.summary()).toEqual(plainSummary(values));
    }
  });
});
