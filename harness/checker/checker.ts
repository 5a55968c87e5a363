// The checker: what the ledger says was acknowledged versus what a log serves now, in the
// terms of Jepsen's Kafka checker. Inputs are the served batches per partition (from one read
// or several: the same batch read twice is one observation), so it does not care how they
// were consumed. Identity of a record is (producerId, sequence) from its batch header, and an
// offset -> identity map is built from every served batch, so it tells apart:
//
// - lost: acknowledged, never served below the HW (ackedLost);
// - inconsistent offsets: an acknowledged offset that now holds another record, or one offset
//   served with two different records (inconsistentOffsets);
// - duplicates: one record served at several offsets;
// - out of order: per producer, a record acknowledged before another was sent sits above it;
// - unacknowledged present: served but never acknowledged (allowed, counted);
// - acknowledged without an offset: a delivery report with no offset (librdkafka's answer to a
//   retry the broker found a duplicate of) still acknowledges the record: it must be served
//   and is found by its identity; the offset checks skip it (counted, ackedWithoutOffset);
// - corrupt served: batches failing their CRC or framing;
// - offsetChanged: acknowledged records served, but not at the offset acknowledged.
// HW went back and replica divergence need the brokers, not only the served batches: they
// are computed in after-fault.ts and replicas.ts and land in the same LedgerSummary.
import { ackedOffsetOf, recordAcked, type AckLedger, type LedgerBatch } from '../history/ledger.ts';
import type { LedgerSummary } from '../results/types.ts';

// Served batches are the client driver's (harness/drivers/types.ts): any driver's consumer yields them.
import type { ServedBatch, PartitionLog } from '../drivers/types.ts';
export type { ServedBatch, PartitionLog };

export interface LostBatch {
  partition: number;
  baseSequence: number;
  records: number;
  /** The first acknowledged offset of the batch; -1 when its reports carried none. */
  ackedOffset: number;
  ackMs: number;
}

export interface CheckReport extends LedgerSummary {
  ackedBatches: number;
  /** Acknowledged records served, but none of them at the offset acknowledged. */
  offsetChanged: number;
  /** Offsets that held two different records, or an acknowledged offset holding another record. */
  inconsistentOffsets: number;
  /** The lowest few inconsistent offsets per partition, for the report. */
  inconsistentOffsetsSample: Array<{ partition: number; offset: number }>;
  lost: LostBatch[];
  /** cutMs - ack time of the oldest lost record, when a cut time is given. */
  lossWindowSec: number | null;
  perPartition: Array<{ partition: number; acked: number; ackedLost: number; served: number; inconsistentOffsets: number }>;
}

/** What one partition serves: offset -> record identity, and our producer's sequence -> offsets. */
interface ServedIndex {
  /** offset -> identity key of the first record seen there. */
  byOffset: Map<number, number>;
  /** Offsets seen with two different identities. */
  conflicting: Set<number>;
  /** Our producer's sequence -> distinct offsets it is served at. */
  bySequence: Map<number, number[]>;
}

const SEQ_SPAN = 2 ** 32;

function indexServed(log: PartitionLog, producerId: number): ServedIndex {
  const producerIndex = new Map<number, number>([[producerId, 0]]);
  const key = (pid: number, seq: number) => {
    let i = producerIndex.get(pid);
    if (i === undefined) producerIndex.set(pid, (i = producerIndex.size));
    return i * SEQ_SPAN + (seq >>> 0);
  };
  const hw = log.highWatermark ?? Infinity;
  const index: ServedIndex = { byOffset: new Map(), conflicting: new Set(), bySequence: new Map() };
  for (const b of log.batches) {
    for (let i = 0; i < b.records; i++) {
      const offset = b.baseOffset + i;
      if (offset >= hw) break;
      const seq = b.baseSequence + i;
      const id = key(b.producerId, seq);
      const seen = index.byOffset.get(offset);
      if (seen === undefined) index.byOffset.set(offset, id);
      else if (seen !== id) index.conflicting.add(offset);
      if (seen === id || b.producerId !== producerId) continue; // the same record read again, or not ours
      const at = index.bySequence.get(seq);
      if (!at) index.bySequence.set(seq, [offset]);
      else if (!at.includes(offset)) at.push(offset);
    }
  }
  return index;
}

export function checkLedger(ledger: AckLedger, logs: PartitionLog[], opts: { cutMs?: number; lostSample?: number } = {}): CheckReport {
  const report: CheckReport = {
    acked: 0,
    ackedLost: 0,
    duplicates: 0,
    outOfOrder: 0,
    corrupt: 0,
    unackedPresent: 0,
    ackedWithoutOffset: 0,
    lostOffsetsSample: [],
    ackedBatches: 0,
    offsetChanged: 0,
    inconsistentOffsets: 0,
    inconsistentOffsetsSample: [],
    lost: [],
    lossWindowSec: null,
    perPartition: [],
  };
  const sample = opts.lostSample ?? 20;
  const byPartition = new Map(logs.map((l) => [l.partition, l]));
  for (const partition of ledger.partitions()) {
    const log = byPartition.get(partition) ?? { partition, batches: [], corrupt: 0 };
    report.corrupt += log.corrupt;
    const producerId = ledger.producerIdOf(partition);
    const served = indexServed(log, producerId);
    const ownKey = (seq: number) => seq >>> 0; // our producer is index 0 in indexServed
    const inconsistent = new Set(served.conflicting);
    let ackedHere = 0;
    let lostHere = 0;
    const found: Array<{ offset: number; sentMs: number; ackMs: number; stream?: number }> = [];
    for (const batch of ledger.batches(partition)) {
      // Duplicates are by identity: one record served at several offsets. A client that retries
      // (the kafka driver's producers do: `retries`, 3 by default) can write a record twice when
      // an answer is lost, and an idempotent producer must not; the http driver never retries.
      // Counted whatever the record's answer said; expectations judge them.
      const present = presentRecords(batch, served.bySequence);
      report.duplicates += present.duplicates;
      if (batch.status !== 'acked') {
        report.unackedPresent! += present.count;
        continue;
      }
      report.ackedBatches++;
      let missing = 0;
      let firstAckedOffset = -1;
      for (let i = 0; i < batch.records; i++) {
        const seq = batch.baseSequence + i;
        const at = served.bySequence.get(seq);
        // A batch acknowledged in part: each record keeps its own outcome.
        if (!recordAcked(batch, i)) {
          if (at) report.unackedPresent!++;
          continue;
        }
        report.acked++;
        ackedHere++;
        if (!at) missing++;
        const ackedOffset = ackedOffsetOf(batch, i);
        if (ackedOffset === null) {
          report.ackedWithoutOffset!++;
          continue;
        }
        if (firstAckedOffset < 0) firstAckedOffset = ackedOffset;
        const there = served.byOffset.get(ackedOffset);
        if (there !== undefined && there !== ownKey(seq)) inconsistent.add(ackedOffset);
        if (at && !at.includes(ackedOffset)) report.offsetChanged++;
      }
      if (missing > 0) {
        report.ackedLost += missing;
        lostHere += missing;
        report.lost.push({ partition, baseSequence: batch.baseSequence, records: missing, ackedOffset: firstAckedOffset, ackMs: batch.ackMs });
      }
      if (present.firstOffset !== null) found.push({ offset: present.firstOffset, sentMs: batch.sentMs, ackMs: batch.ackMs, ...(batch.stream !== undefined ? { stream: batch.stream } : {}) });
    }
    // One producer per partition: real-time order is checked per producer.
    report.outOfOrder += countRealTimeOrderViolations(found) + countStreamOrderViolations(found);
    report.inconsistentOffsets += inconsistent.size;
    report.inconsistentOffsetsSample.push(...[...inconsistent].sort((a, b) => a - b).slice(0, sample).map((offset) => ({ partition, offset })));
    report.perPartition.push({ partition, acked: ackedHere, ackedLost: lostHere, served: served.byOffset.size, inconsistentOffsets: inconsistent.size });
  }
  // Lowest offsets first: where the lost range of the log begins.
  report.lostOffsetsSample = report.lost
    .filter((l) => l.ackedOffset >= 0)
    .sort((a, b) => a.partition - b.partition || a.ackedOffset - b.ackedOffset)
    .slice(0, sample)
    .map((l) => l.ackedOffset);
  report.inconsistentOffsetsSample = report.inconsistentOffsetsSample.slice(0, sample);
  if (opts.cutMs !== undefined && report.lost.length > 0) {
    const oldest = Math.min(...report.lost.map((l) => l.ackMs));
    report.lossWindowSec = Math.max(0, (opts.cutMs - oldest) / 1000);
  }
  return report;
}

/** The checker's figures as run.json's trial ledger holds them (replica and HW figures are added by who measures them). */
export function ledgerSummaryOfReport(r: CheckReport): LedgerSummary {
  return {
    acked: r.acked,
    ackedLost: r.ackedLost,
    duplicates: r.duplicates,
    outOfOrder: r.outOfOrder,
    corrupt: r.corrupt,
    unackedPresent: r.unackedPresent,
    ackedWithoutOffset: r.ackedWithoutOffset,
    lostOffsetsSample: r.lostOffsetsSample,
    offsetChanged: r.offsetChanged,
    inconsistentOffsets: r.inconsistentOffsets,
  };
}

/** How many of a batch's records are served, how many extra times, and where its first served record sits. */
function presentRecords(batch: LedgerBatch, served: Map<number, number[]>): { count: number; duplicates: number; firstOffset: number | null } {
  let count = 0;
  let duplicates = 0;
  let firstOffset: number | null = null;
  for (let i = 0; i < batch.records; i++) {
    const at = served.get(batch.baseSequence + i);
    if (!at) continue;
    count++;
    duplicates += at.length - 1;
    if (firstOffset === null) firstOffset = Math.min(...at) - i;
  }
  return { count, duplicates, firstOffset };
}

/**
 * Batches of one client stream (a Kafka producer connection) must sit in the log in the order
 * the stream sent them (found is in send order: ledger sequence). Counts acknowledged batches
 * served below a batch their stream sent earlier: what a retry behind later in-flight sends
 * does (max.in.flight > 1 without idempotence). Batches without a stream are not judged.
 */
export function countStreamOrderViolations(found: ReadonlyArray<{ offset: number; stream?: number }>): number {
  const highest = new Map<number, number>();
  let violations = 0;
  for (const b of found) {
    if (b.stream === undefined) continue;
    const top = highest.get(b.stream);
    if (top !== undefined && b.offset < top) violations++;
    else highest.set(b.stream, b.offset);
  }
  return violations;
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
