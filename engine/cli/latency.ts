// Per-operation latency for the engine CLI: a clock around the call (process.hrtime.bigint(),
// or performance.now() in the bench's hot loops, which allocates no BigInt), kept in the same
// histogram as the storage layer (integer microseconds, as the rest of the lab), plus the mean.
import { LatencyRecorder, type LatencySummary } from '../storage/latency.ts';

export interface LatencyUs extends LatencySummary {
  mean: number;
}

export class LatencyHistogram extends LatencyRecorder {
  /** One operation that took `ns` nanoseconds (a difference of process.hrtime.bigint() readings). */
  recordNs(ns: bigint): void {
    this.record(Number((ns + 500n) / 1000n));
  }

  recordUs(us: number): void {
    this.record(us);
  }

  override summary(): LatencyUs {
    const { p50, p99, p999, max, count } = super.summary();
    // Keys in the order the engine CLI has always written them.
    return { p50, p99, p999, max, mean: count === 0 ? 0 : Math.round(this.h.mean * 10) / 10, count };
  }
}
