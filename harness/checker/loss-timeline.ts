// Acknowledged and lost records binned by acknowledgement time relative to the cut: the
// report's loss-window chart. Bounded size whatever the load: the bin widens so a trial never
// has more than MAX_BINS bins.
import { ackedRecordsOf, type AckLedger } from '../history/ledger.ts';
import type { LostBatch } from './checker.ts';

const MAX_BINS = 300;

export interface LossTimeline {
  binMs: number;
  bins: Array<{ t: number; acked: number; lost: number }>;
}

export function lossTimeline(ledger: AckLedger, lost: LostBatch[], cutMs: number, binMs = 100): LossTimeline {
  let first = Infinity;
  let last = -Infinity;
  for (const p of ledger.partitions()) {
    for (const b of ledger.batches(p)) {
      if (b.status !== 'acked') continue;
      first = Math.min(first, b.ackMs);
      last = Math.max(last, b.ackMs);
    }
  }
  if (first === Infinity) return { binMs, bins: [] };
  while ((Math.max(last, cutMs) - first) / binMs > MAX_BINS) binMs *= 2;
  const bin = (ackMs: number) => Math.floor((ackMs - cutMs) / binMs) * binMs;
  const bins = new Map<number, { t: number; acked: number; lost: number }>();
  const at = (t: number) => {
    let b = bins.get(t);
    if (!b) bins.set(t, (b = { t, acked: 0, lost: 0 }));
    return b;
  };
  for (const p of ledger.partitions()) {
    for (const b of ledger.batches(p)) if (b.status === 'acked') at(bin(b.ackMs)).acked += ackedRecordsOf(b);
  }
  for (const l of lost) at(bin(l.ackMs)).lost += l.records;
  return { binMs, bins: [...bins.values()].sort((a, b) => a.t - b.t) };
}
