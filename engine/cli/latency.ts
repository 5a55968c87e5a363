// Per-operation latency for the engine CLI: a clock around the call (process.hrtime.bigint(),
// or performance.now() in the bench's hot loops, which allocates no BigInt), kept in an
// hdr-histogram-js histogram as integer microseconds (as the rest of the lab).
import * as hdr from 'hdr-histogram-js';

export interface LatencyUs {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  count: number;
}

export class LatencyHistogram {
  private readonly h = hdr.build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });

  /** One operation that took `ns` nanoseconds (a difference of process.hrtime.bigint() readings). */
  recordNs(ns: bigint): void {
    this.h.recordValue(Number((ns + 500n) / 1000n));
  }

  recordUs(us: number): void {
    this.h.recordValue(us < 0 ? 0 : Math.round(us));
  }

  summary(): LatencyUs {
    const h = this.h;
    if (h.totalCount === 0) return { p50: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0 };
    return {
      p50: h.getValueAtPercentile(50),
      p99: h.getValueAtPercentile(99),
      p999: h.getValueAtPercentile(99.9),
      max: h.maxValue,
      mean: Math.round(h.mean * 10) / 10,
      count: h.totalCount,
    };
  }
}
