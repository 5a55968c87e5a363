// 1-second buckets of probe figures on the results time axis (t = whole seconds since
// originMs, normally the cell's load start). Rates come from the cumulative counters
// interpolated linearly at the bucket edges, so a bucket's figures are exactly what
// iostat would print for that second if the counters moved evenly between samples.

import type { TimePoint } from '../results/types.ts';
import type { DiskCounters } from './diskstats.ts';
import { interpolateCounters, iostatBetween } from './iostat.ts';
import type { ProbeSample, ProbeSeries } from './sampler.ts';
import type { VmstatReadCounters } from './vmstat.ts';

export type ProbePoint = Pick<
  TimePoint,
  | 't'
  | 'nrDirty'
  | 'nrWriteback'
  | 'writesPerSec'
  | 'writeKBPerSec'
  | 'flushesPerSec'
  | 'wAwaitMs'
  | 'fAwaitMs'
  | 'aquSz'
  | 'utilPct'
  | 'readsPerSec'
  | 'readKBPerSec'
  | 'rAwaitMs'
  | 'pgpginKBPerSec'
  | 'majorFaultsPerSec'
  | 'refaultsPerSec'
  | 'pagesScannedPerSec'
  | 'pagesStolenPerSec'
>;

export interface PerSecondOptions {
  /** Smallest share of a bucket the samples must cover for it to be emitted (default 0.5). */
  minCoverage?: number;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Index of the last sample at or before t (samples sorted by tMs, t within their span). */
function indexAtOrBefore(samples: ProbeSample[], t: number): number {
  let lo = 0;
  let hi = samples.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (samples[mid].tMs <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The read-side vmstat counters at t, interpolated between the samples around it (null where a sample lacks them). */
function readCountersAt(samples: ProbeSample[], t: number): VmstatReadCounters | null {
  const i = indexAtOrBefore(samples, t);
  const a = samples[i].vmstat.reads;
  if (!a) return null;
  if (samples[i].tMs === t || i === samples.length - 1) return a;
  const b = samples[i + 1].vmstat.reads;
  if (!b) return null;
  const w = (t - samples[i].tMs) / (samples[i + 1].tMs - samples[i].tMs);
  const at = (k: keyof VmstatReadCounters) => a[k] + (b[k] - a[k]) * w;
  return { pgpginKB: at('pgpginKB'), majorFaults: at('majorFaults'), refaultsFile: at('refaultsFile'), pagesScanned: at('pagesScanned'), pagesStolen: at('pagesStolen') };
}

/** The cumulative disk counters at t, interpolated between the samples around it. */
function countersAt(samples: ProbeSample[], t: number): DiskCounters | null {
  const i = indexAtOrBefore(samples, t);
  const a = samples[i].disk;
  if (!a) return null;
  if (samples[i].tMs === t || i === samples.length - 1) return { ...a, tMs: t };
  const b = samples[i + 1].disk;
  return b ? interpolateCounters(a, b, t) : null;
}

export function perSecond(series: ProbeSeries, originMs: number, opts: PerSecondOptions = {}): ProbePoint[] {
  const samples = series.samples;
  if (samples.length === 0) return [];
  const minCoverageMs = (opts.minCoverage ?? 0.5) * 1000;
  const first = samples[0].tMs;
  const last = samples[samples.length - 1].tMs;
  const kFirst = Math.max(0, Math.floor((first - originMs) / 1000));
  const kLast = Math.floor((last - originMs) / 1000);
  const out: ProbePoint[] = [];

  for (let k = kFirst; k <= kLast; k++) {
    const bStart = originMs + k * 1000;
    const bEnd = bStart + 1000;
    const cs = Math.max(bStart, first);
    const ce = Math.min(bEnd, last);
    if (ce - cs < minCoverageMs) continue;

    // Gauges: mean of the samples inside the bucket; the nearest one if a stalled event
    // loop left the bucket empty.
    let n = 0;
    let dirty = 0;
    let writeback = 0;
    for (let i = indexAtOrBefore(samples, cs); i < samples.length && samples[i].tMs <= ce; i++) {
      if (samples[i].tMs < cs) continue;
      n++;
      dirty += samples[i].vmstat.nrDirty;
      writeback += samples[i].vmstat.nrWriteback;
    }
    if (n === 0) {
      const mid = (cs + ce) / 2;
      const i = indexAtOrBefore(samples, mid);
      const s = i + 1 < samples.length && samples[i + 1].tMs - mid < mid - samples[i].tMs ? samples[i + 1] : samples[i];
      n = 1;
      dirty = s.vmstat.nrDirty;
      writeback = s.vmstat.nrWriteback;
    }
    const point: ProbePoint = { t: k, nrDirty: Math.round(dirty / n), nrWriteback: Math.round(writeback / n) };

    const a = series.device !== null ? countersAt(samples, cs) : null;
    const b = series.device !== null ? countersAt(samples, ce) : null;
    if (a && b) {
      const f = iostatBetween(a, b);
      point.writesPerSec = round(f.wPerSec, 2);
      point.writeKBPerSec = round(f.wkBPerSec, 2);
      if (f.fPerSec !== null) point.flushesPerSec = round(f.fPerSec, 2);
      point.wAwaitMs = round(f.wAwaitMs, 3);
      if (f.fAwaitMs !== null) point.fAwaitMs = round(f.fAwaitMs, 3);
      point.aquSz = round(f.aquSz, 3);
      point.utilPct = round(f.utilPct, 2);
      point.readsPerSec = round(f.rPerSec, 2);
      point.readKBPerSec = round(f.rkBPerSec, 2);
      point.rAwaitMs = round(f.rAwaitMs, 3);
    }
    const ra = readCountersAt(samples, cs);
    const rb = readCountersAt(samples, ce);
    if (ra && rb) {
      const sec = (ce - cs) / 1000;
      const rate = (k: keyof VmstatReadCounters) => round(Math.max(0, rb[k] - ra[k]) / sec, 2);
      point.pgpginKBPerSec = rate('pgpginKB');
      point.majorFaultsPerSec = rate('majorFaults');
      point.refaultsPerSec = rate('refaultsFile');
      point.pagesScannedPerSec = rate('pagesScanned');
      point.pagesStolenPerSec = rate('pagesStolen');
    }
    out.push(point);
  }
  return out;
}

/**
 * Flushes the device completed between two moments (/proc/diskstats field 18, interpolated at
 * both ends, the window clamped to the samples' span): the device's own count, to set beside a
 * broker's self-reported flush counter. null without samples or without flush counters.
 */
export function deviceFlushesBetween(series: ProbeSeries, fromMs: number, toMs: number): number | null {
  const samples = series.samples;
  if (samples.length === 0) return null;
  const from = Math.max(fromMs, samples[0].tMs);
  const to = Math.min(toMs, samples[samples.length - 1].tMs);
  if (!(to >= from)) return null;
  const a = countersAt(samples, from);
  const b = countersAt(samples, to);
  if (a?.flushesCompleted === undefined || b?.flushesCompleted === undefined) return null;
  return Math.max(0, Math.round(b.flushesCompleted - a.flushesCompleted));
}
