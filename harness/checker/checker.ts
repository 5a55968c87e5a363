// The checker: what the ledger says was acknowledged versus what a log serves now.
// Identity of a record is (producerId, sequence) from its batch header, so a record that
// moved to another offset, appeared twice or vanished is told apart from one never acked.
import type { AckLedger, LedgerBatch } from '../workload/ledger.ts';
import type { LedgerSummary } from '../results/types.ts';

// Served batches are the client driver's (harness/drivers/types.ts): any driver's consumer yields them.
import type { ServedBatch, PartitionLog } from '../drivers/types.ts';
export type { ServedBatch, PartitionLog };

export interface LostBatch {
  partition: number;
  baseSequence: number;
  records: number;
  ackedOffset: number;
  ackMs: number;
}

export interface CheckReport extends LedgerSummary {
  ackedBatches: number;
  offsetChanged: number;
  lost: LostBatch[];
  /** cutMs - ack time of the oldest lost record, when a cut time is given. */
  lossWindowSec: number | null;
  perPartition: Array<{ partition: number; acked: number; ackedLost: number; served: number }>;
}

export function checkLedger(ledger: AckLedger, logs: PartitionLog[], opts: { cutMs?: number; lostSample?: number } = {}): CheckReport {
  const report: CheckReport = {
    acked: 0,
    ackedLost: 0,
    duplicates: 0,
    outOfOrder: 0,
    corrupt: 0,
    unackedPresent: 0,
    lostOffsetsSample: [],
    ackedBatches: 0,
    offsetChanged: 0,
    lost: [],
    lossWindowSec: null,
    perPartition: [],
  };
  const byPartition = new Map(logs.map((l) => [l.partition, l]));
  for (const partition of ledger.partitions()) {
    const log = byPartition.get(partition) ?? { partition, batches: [], corrupt: 0 };
    report.corrupt += log.corrupt;
    const producerId = ledger.producerIdOf(partition);
    // sequence -> offsets where that record is served
    const served = new Map<number, number[]>();
    let servedRecords = 0;
    for (const b of log.batches) {
      if (b.producerId !== producerId) continue;
      for (let i = 0; i < b.records; i++) {
        const seq = b.baseSequence + i;
        const at = served.get(seq);
        if (at) at.push(b.baseOffset + i);
        else served.set(seq, [b.baseOffset + i]);
        servedRecords++;
      }
    }
    let ackedHere = 0;
    let lostHere = 0;
    const found: Array<{ offset: number; sentMs: number; ackMs: number }> = [];
    for (const batch of ledger.batches(partition)) {
      const present = presentRecords(batch, served);
      // The workload never retries, so a record served twice is a broker bug whether or not
      // its answer arrived.
      report.duplicates += present.duplicates;
      if (batch.status !== 'acked') {
        report.unackedPresent! += present.count;
        continue;
      }
      report.ackedBatches++;
      report.acked += batch.records;
      ackedHere += batch.records;
      if (present.count < batch.records) {
        const missing = batch.records - present.count;
        report.ackedLost += missing;
        lostHere += missing;
        report.lost.push({ partition, baseSequence: batch.baseSequence, records: missing, ackedOffset: batch.baseOffset, ackMs: batch.ackMs });
      }
      if (present.firstOffset !== null) {
        if (present.firstOffset !== batch.baseOffset) report.offsetChanged++;
        found.push({ offset: present.firstOffset, sentMs: batch.sentMs, ackMs: batch.ackMs });
      }
    }
    report.outOfOrder += countRealTimeOrderViolations(found);
    report.perPartition.push({ partition, acked: ackedHere, ackedLost: lostHere, served: servedRecords });
  }
  const sample = opts.lostSample ?? 20;
  // Lowest offsets first: where the lost range of the log begins.
  report.lostOffsetsSample = [...report.lost].sort((a, b) => a.partition - b.partition || a.ackedOffset - b.ackedOffset).slice(0, sample).map((l) => l.ackedOffset);
  if (opts.cutMs !== undefined && report.lost.length > 0) {
    const oldest = Math.min(...report.lost.map((l) => l.ackMs));
    report.lossWindowSec = Math.max(0, (opts.cutMs - oldest) / 1000);
  }
  return report;
}

function presentRecords(batch: LedgerBatch, served: Map<number, number[]>): { count: number; duplicates: number; firstOffset: number | null } {
  let count = 0;
  let duplicates = 0;
  let firstOffset: number | null = null;
  for (let i = 0; i < batch.records; i++) {
    const at = served.get(batch.baseSequence + i);
    if (!at) continue;
    count++;
    duplicates += at.length - 1;
    if (i === 0) firstOffset = at[0];
  }
  return { count, duplicates, firstOffset };
}

/**
 * A batch acknowledged before another was even sent must sit at a lower offset
 * (real-time order). Counts batches that a later-offset batch overtook that way.
 */
export function countRealTimeOrderViolations(found: Array<{ offset: number; sentMs: number; ackMs: number }>): number {
  const sorted = [...found].sort((a, b) => b.offset - a.offset);
  let minAckAbove = Infinity;
  let violations = 0;
  for (const b of sorted) {
    if (minAckAbove < b.sentMs) violations++;
    minAckAbove = Math.min(minAckAbove, b.ackMs);
  }
  return violations;
}
