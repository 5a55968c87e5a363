// Latency percentiles in integer microseconds (hdr-histogram-js, as the rest of the lab).
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  count: number;
}

/**
 * Values below this many µs are first counted in a plain array: an increment, where hdr's
 * recordValue costs 100-200 ns here (several % of a 4 KiB append, which records one or two
 * latencies). They are folded into the histogram (recordValueWithCount) whenever it is read;
 * hdr keeps integers below 2048 exactly at 3 significant digits, so nothing changes but the cost.
 */
const DIRECT_US = 1024;
/** Fold before any array count could pass what hdr's 32-bit counts (and Uint32Array) hold. */
const FOLD_EVERY = 2 ** 30;

export class LatencyRecorder {
  private readonly hist = hdr.build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });
  private readonly direct = new Uint32Array(DIRECT_US);
  private pending = 0;

  record(us: number): void {
    const v = us < 0 ? 0 : Math.round(us);
    if (v < DIRECT_US) {
      this.direct[v]++;
      if (++this.pending >= FOLD_EVERY) this.fold();
    } else {
      this.hist.recordValue(v);
    }
  }

  /** The histogram with every recorded value in it. */
  protected get h(): hdr.Histogram {
    if (this.pending > 0) this.fold();
    return this.hist;
  }

  private fold(): void {
    const d = this.direct;
    for (let v = 0; v < DIRECT_US; v++) {
      if (d[v] !== 0) {
        this.hist.recordValueWithCount(v, d[v]);
        d[v] = 0;
      }
    }
    this.pending = 0;
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
