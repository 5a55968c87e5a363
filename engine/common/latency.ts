// Latency in integer microseconds, kept in HdrHistogram (hdr-histogram-js) across the lab: the
// storage layer's write and flush times, the engine CLI's benches, the broker bench and the
// harness's per-request latency all summarise into one LatencySummary.
// The builder alone, not the package index: the index also loads HistogramLogWriter, which
// makes an Intl.NumberFormat at import, and ICU's first start cost a broker in a TCG guest ~2 s
// of its ~13 s start (a CPU profile in the guest).
import { build } from 'hdr-histogram-js/dist/HistogramBuilder.js';
import type * as hdr from 'hdr-histogram-js';

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
  return build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3 });
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

/**
 * Values below this many µs are first counted in a plain array: an increment, where hdr's
 * recordValue costs 100-200 ns here (several % of a 4 KiB append, which records one or two
 * latencies). hdr keeps integers below 2048 exactly at 3 significant digits, so the array is
 * the same histogram for them: while nothing larger was recorded, a summary is computed from the
 * array alone, as hdr would (no histogram is made); once a larger value came, the array is folded
 * into the histogram (recordValueWithCount) whenever it is read.
 */
const DIRECT_US = 1024;
/** The front array starts this long and doubles up to DIRECT_US as larger values come (a flush of ~200 µs needs 256). */
const DIRECT_MIN = 64;
/** Fold before any array count could pass what hdr's 32-bit counts (and Uint32Array) hold. */
const FOLD_EVERY = 2 ** 30;

/** hdr-histogram-js's ulp (dist/ulp.js): its percentile rounding, reproduced for the front array. */
const ulp = (x: number): number => 2 ** (Math.floor(Math.log2(x)) - 52);

/**
 * Records operation times and summarises them. Memory is what a broker pays per partition (it
 * keeps several recorders per log): nothing until the first record, then a front array of
 * 256 B-4 KiB, and a histogram (~20-40 KiB) only once an operation took 1,024 µs or more.
 */
export class LatencyRecorder {
  private hist: hdr.Histogram | null = null;
  private direct: Uint32Array | null = null;
  /** Values in the front array not yet folded into the histogram. */
  private pending = 0;

  /** One operation of `us` microseconds (rounded; negative clock steps count as 0). */
  record(us: number): void {
    const v = us < 0 ? 0 : Math.round(us);
    if (v < DIRECT_US) {
      const d = this.direct !== null && v < this.direct.length ? this.direct : this.grow(v);
      d[v]++;
      if (++this.pending >= FOLD_EVERY) this.fold();
    } else {
      (this.hist ??= newLatencyHistogram()).recordValue(v);
    }
  }

  private grow(v: number): Uint32Array {
    let len = this.direct?.length ?? DIRECT_MIN;
    while (len <= v) len *= 2;
    const d = new Uint32Array(Math.min(len, DIRECT_US));
    if (this.direct) d.set(this.direct);
    return (this.direct = d);
  }

  private fold(): void {
    const d = this.direct!;
    this.hist ??= newLatencyHistogram();
    for (let v = 0; v < d.length; v++) {
      if (d[v] !== 0) {
        this.hist.recordValueWithCount(v, d[v]);
        d[v] = 0;
      }
    }
    this.pending = 0;
  }

  /** One operation of `ns` nanoseconds (a difference of process.hrtime.bigint() readings). */
  recordNs(ns: bigint): void {
    this.record(Number((ns + 500n) / 1000n));
  }

  summary(): LatencySummary {
    // A recorder that never recorded has nothing to summarize, and one that recorded only small
    // values is summarized from its array: no histogram is made for either (a metrics read of
    // 10,000 partitions allocated one per recorder, ~20 KiB each, before this).
    if (this.hist === null) return this.pending === 0 ? { ...EMPTY_LATENCY } : summarizeFront(this.direct!, this.pending);
    if (this.pending > 0) this.fold();
    return summarizeLatency(this.hist);
  }
}

/** What summarizeLatency gives for a histogram holding exactly these counts of values 0..n-1 (unit buckets: hdr's value is the index). */
function summarizeFront(counts: Uint32Array, total: number): LatencySummary {
  // hdr's rank of a percentile: ceil(p% of the count) with its ulp guard, at least 1.
  const rank = (percentile: number): number => {
    const fp = (percentile / 100) * total;
    return Math.max(Math.ceil(fp - ulp(fp)), 1);
  };
  const percentiles = [50, 90, 99, 99.9, 99.99];
  const ranks = percentiles.map(rank);
  const at = percentiles.map(() => 0);
  // One walk: each percentile is the first value whose running count reaches its rank.
  let next = 0;
  let sum = 0;
  let max = 0;
  let weighted = 0;
  for (let v = 0; v < counts.length; v++) {
    const n = counts[v]!;
    if (n === 0) continue;
    sum += n;
    max = v;
    weighted += v * n;
    while (next < ranks.length && sum >= ranks[next]!) at[next++] = v;
  }
  return { p50: at[0]!, p90: at[1]!, p99: at[2]!, p999: at[3]!, p9999: at[4]!, max, mean: Math.round((weighted / total) * 10) / 10, count: total };
}

/** Elapsed µs since t0 (a performance.now() reading), as an integer. */
export function usSince(t0: number): number {
  return Math.round((performance.now() - t0) * 1000);
}

/**
 * Summarises a small populated histogram once, so the code of a first non-empty summary is
 * compiled now rather than in the middle of a load (an empty one returns before it). A broker
 * calls it once it serves: in a TCG guest the first /v1/metrics read during a load held the
 * broker's event loop 2.0 s, the next ones 0.13-0.33 s (on the host: 16 ms cold, 4 ms, then 0.4 ms).
 */
export function warmLatencySummaries(): LatencySummary {
  const front = new LatencyRecorder();
  front.record(100);
  front.summary();
  const r = new LatencyRecorder();
  r.record(100);
  r.record(5000);
  return r.summary();
}
