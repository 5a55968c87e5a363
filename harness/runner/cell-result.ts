// Turns one cell's raw measurements (load, probes, checker, broker metrics) into the
// CellResult of run.json.
import * as hdr from 'hdr-histogram-js';
import type { BrokerSummary, CellResult, LatencySummaryUs, LedgerSummary, TimePoint } from '../results/types.ts';
import type { ProbePoint } from '../probes/index.ts';
import type { SecondPoint } from '../drivers/types.ts';

export function latencySummary(h: hdr.Histogram): LatencySummaryUs {
  if (h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, count: 0 };
  return {
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    p9999: h.getValueAtPercentile(99.99),
    max: h.maxValue,
    count: h.totalCount,
  };
}

export function encodeHistogram(h: hdr.Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Load seconds and probe seconds on one axis: t = seconds since the measured window began. */
export function mergeTimeseries(load: SecondPoint[], probes: ProbePoint[]): TimePoint[] {
  const byT = new Map<number, TimePoint>();
  for (const p of load) byT.set(p.t, { t: p.t, recordsPerSec: p.recordsPerSec, p99Us: p.p99Us });
  for (const p of probes) {
    const cur = byT.get(p.t) ?? { t: p.t, recordsPerSec: 0, p99Us: null };
    byT.set(p.t, { ...cur, ...p, t: p.t, recordsPerSec: cur.recordsPerSec, p99Us: cur.p99Us });
  }
  return [...byT.values()].sort((a, b) => a.t - b.t);
}

export function emptyLedger(): LedgerSummary {
  return { acked: 0, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, unackedPresent: 0 };
}

export function emptyBroker(): BrokerSummary {
  return { flushes: 0, flushTimeUs: { p50: 0, p99: 0, p999: 0, max: 0 }, segments: 0, indexFiles: 0, bytes: 0, rolls: 0 };
}

export function skippedCell(id: string, params: CellResult['params'], status: CellResult['status'], note: string): CellResult {
  const empty = hdr.build();
  return {
    id,
    params,
    status,
    note,
    throughput: { recordsPerSec: 0, mbPerSec: 0, requestsPerSec: 0 },
    latencyUs: latencySummary(empty),
    errors: {},
    ledger: emptyLedger(),
    broker: emptyBroker(),
    histograms: { latencyUs: encodeHistogram(empty) },
    timeseries: [],
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
