// Latency percentiles in integer microseconds (hdr-histogram-js, as the rest of the lab).
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  count: number;
}

export class LatencyRecorder {
  protected readonly h = hdr.build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });

  record(us: number): void {
    this.h.recordValue(us < 0 ? 0 : Math.round(us));
  }

  summary(): LatencySummary {
    const h = this.h;
    const count = h.totalCount;
    if (count === 0) return { p50: 0, p99: 0, p999: 0, max: 0, count: 0 };
    return {
      p50: h.getValueAtPercentile(50),
      p99: h.getValueAtPercentile(99),
      p999: h.getValueAtPercentile(99.9),
      max: h.maxValue,
      count,
    };
  }
}

/** Elapsed µs since t0 (a performance.now() reading), as an integer. */
export function usSince(t0: number): number {
  return Math.round((performance.now() - t0) * 1000);
}
