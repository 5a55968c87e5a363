// Percentile curves for the "nines" chart, sampled from each cell's HdrHistogram the way
// HdrHistogram's own plotter does: x = 1/(1-p), so 90% sits at 10, 99% at 100, 99.9% at 1000.

import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import type { LatencySummary } from '../results/types.ts';

export interface NinesPoint {
  /** 1/(1-p); 1 is the minimum. */
  x: number;
  percentile: number;
  us: number;
}

export interface NinesCurve {
  points: NinesPoint[];
  count: number;
  /** 'histogram' when decoded, 'summary' when drawn from the stored p50..max (no usable histogram). */
  source: 'histogram' | 'summary';
  problem?: string;
}

/** Points per halving of (1-p): 10 gives smooth curves at ~170 points for 100k samples. */
const TICKS_PER_HALF = 10;
/** Past one in a million the curve says nothing a 1-in-a-million max does not. */
const MAX_X = 1e6;

export function ninesFromHistogram(base64: string, summary: LatencySummary): NinesCurve {
  if (!base64) return ninesFromSummary(summary, 'no histogram stored');
  let histogram;
  try {
    histogram = decodeFromCompressedBase64(base64);
  } catch (err) {
    return ninesFromSummary(summary, `histogram did not decode (${err instanceof Error ? err.message : String(err)})`);
  }
  try {
    const count = histogram.totalCount;
    if (count === 0) return ninesFromSummary(summary, 'histogram is empty');
    const points: NinesPoint[] = [];
    // Beyond x = count the percentile is finer than one sample: stop there and show the max.
    const lastX = Math.min(count, MAX_X);
    for (let i = 0; ; i++) {
      const x = 2 ** (i / TICKS_PER_HALF);
      if (x > lastX) break;
      const percentile = 100 * (1 - 1 / x);
      points.push({ x, percentile, us: histogram.getValueAtPercentile(percentile) });
    }
    const maxX = Math.max(2, points[points.length - 1].x * 2 ** (1 / TICKS_PER_HALF));
    // A decoded histogram knows the max only to its bucket; the stored summary has it exactly.
    const max = summary.count === count && summary.max > 0 ? summary.max : histogram.maxValue;
    points.push({ x: maxX, percentile: 100, us: max });
    return { points, count, source: 'histogram' };
  } finally {
    histogram.destroy();
  }
}

function ninesFromSummary(s: LatencySummary, problem: string): NinesCurve {
  const pairs: Array<[number, number]> = [
    [50, s.p50],
    [90, s.p90],
    [99, s.p99],
    [99.9, s.p999],
    [99.99, s.p9999],
  ];
  const points: NinesPoint[] = [];
  for (const [percentile, us] of pairs) {
    const x = 1 / (1 - percentile / 100);
    if (s.count > 0 && x > s.count) break;
    if (Number.isFinite(us)) points.push({ x, percentile, us });
  }
  if (Number.isFinite(s.max) && s.count > 0) {
    points.push({ x: Math.max(points.length ? points[points.length - 1].x * 2 : 2, 2), percentile: 100, us: s.max });
  }
  return { points, count: s.count, source: 'summary', problem };
}

/** Axis ticks at each nine, labelled as percentiles. */
export function ninesTicks(maxX: number): Array<{ x: number; label: string }> {
  const ticks = [
    { x: 1, label: '0%' },
    { x: 2, label: '50%' },
    { x: 10, label: '90%' },
    { x: 100, label: '99%' },
    { x: 1e3, label: '99.9%' },
    { x: 1e4, label: '99.99%' },
    { x: 1e5, label: '99.999%' },
    { x: 1e6, label: '99.9999%' },
  ];
  return ticks.filter((t) => t.x <= maxX * 1.0001);
}
