// Turns one cell's raw measurements (load, probes, checker, broker metrics) into the
// CellResult of run.json.
import * as hdr from 'hdr-histogram-js';
import { summarizeLatency } from '../../engine/common/latency.ts';
import type { BrokerSummary, CellResult, CellThroughput, LedgerSummary, TimePoint } from '../results/types.ts';
import { median } from '../../engine/common/stats.ts';
import type { ProbePoint } from '../probes/index.ts';
import type { SecondPoint } from '../drivers/types.ts';

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

/** Sets each point's isrSize from `sizes` (index = t, seconds of the measured window); a null second stays absent. */
export function withIsrSize(points: TimePoint[], sizes: ReadonlyArray<number | null>): TimePoint[] {
  for (const p of points) {
    const v = sizes[p.t];
    if (typeof v === 'number') p.isrSize = v;
  }
  return points;
}

/** Sets each point's hwAdvancedPerSec from `advanced` (index = t); a null second stays absent. */
export function withHwAdvanced(points: TimePoint[], advanced: ReadonlyArray<number | null>): TimePoint[] {
  for (const p of points) {
    const v = advanced[p.t];
    if (typeof v === 'number') p.hwAdvancedPerSec = v;
  }
  return points;
}

/** The cell's throughput from its repetitions' rates (medians); none when no repetition finished its load: not measured, never 0. */
export function mergedThroughput(rps: readonly number[], mbps: readonly number[], reqps: readonly number[]): { throughput?: CellThroughput } {
  const recordsPerSec = median(rps);
  const mbPerSec = median(mbps);
  const requestsPerSec = median(reqps);
  if (recordsPerSec === null || mbPerSec === null || requestsPerSec === null) return {};
  return { throughput: { recordsPerSec, mbPerSec, requestsPerSec } };
}

export function emptyLedger(): LedgerSummary {
  return { acked: 0, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, unackedPresent: 0 };
}

/** A cell that did not run: nothing measured, so no broker figure at all (not even the bytes: absent, never 0). */
function emptyBroker(): BrokerSummary {
  return {};
}

export function skippedCell(id: string, params: CellResult['params'], status: CellResult['status'], note: string): CellResult {
  const empty = hdr.build();
  return {
    id,
    params,
    status,
    note,
    // No load ran: no throughput (absent, not 0).
    latencyUs: summarizeLatency(empty),
    errors: {},
    ledger: emptyLedger(),
    broker: emptyBroker(),
    histograms: { latencyUs: encodeHistogram(empty) },
    timeseries: [],
  };
}
