// Latency in integer microseconds, kept in HdrHistogram (hdr-histogram-js) across the lab: the
// storage layer's write and flush times, the engine CLI's benches, the broker bench and the
// harness's per-request latency all summarise into one LatencySummary.
import * as hdr from 'hdr-histogram-js';

/**
 * Percentiles and max in integer µs, count of operations, mean in µs with one decimal; all 0
 * when nothing was recorded. `mean` is absent in run.json files written before it was kept.
 */
export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
  mean?: number;
  count: number;
}

/** The short form reports and broker figures carry (p50, p99, p99.9, max). */
export type LatencyBrief = Pick<LatencySummary, 'p50' | 'p99' | 'p999' | 'max'>;

const EMPTY_LATENCY: Readonly<LatencySummary> = Object.freeze({ p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, mean: 0, count: 0 });

/** A histogram of µs values with 3 significant digits (values up to 2^32 µs). */
export function newLatencyHistogram(): hdr.Histogram {
  return hdr.build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });
}

export function summarizeLatency(h: hdr.Histogram): LatencySummary {
  const count = h.totalCount;
  if (count === 0) return { ...EMPTY_LATENCY };
  return {
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    p9999: h.getValueAtPercentile(99.99),
    max: h.maxValue,
    mean: Math.round(h.mean * 10) / 10,
    count,
  };
}

/** Records operation times and summarises them. */
export class LatencyRecorder {
  protected readonly h = newLatencyHistogram();

  /** One operation of `us` microseconds (rounded; negative clock steps count as 0). */
  record(us: number): void {
    this.h.recordValue(us < 0 ? 0 : Math.round(us));
  }

  /** One operation of `ns` nanoseconds (a difference of process.hrtime.bigint() readings). */
  recordNs(ns: bigint): void {
    this.record(Number((ns + 500n) / 1000n));
  }

  summary(): LatencySummary {
    return summarizeLatency(this.h);
  }
}

/** Elapsed µs since t0 (a performance.now() reading), as an integer. */
export function usSince(t0: number): number {
  return Math.round((performance.now() - t0) * 1000);
}
