// Idempotent producers on the leader, as Kafka's ProducerStateManager keeps them: per producer
// id the current epoch and the sequence ranges and offsets of its last 5 batches. A retried
// batch (same epoch, same first and last sequence as one of those 5) is not appended again and
// is answered NONE with the offset it got the first time (as Kafka's UnifiedLog does); a batch whose
// first sequence does not follow the last one is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch
// is INVALID_PRODUCER_EPOCH. The table is rebuilt from the log whenever this broker sees a new
// leader epoch for the partition (so it follows leadership, and survives a restart because the
// batches carry producer id, epoch and sequences on disk). The rebuild reads about the last
// REBUILD_WINDOW_BYTES of the log, not all of it (Kafka reads a snapshot plus the tail): a
// producer silent for longer is forgotten and may start anew, as Kafka forgets producers after
// producer.id.expiration.ms; a failover on a multi-GiB log does not stall the broker.
import { iterateBatches, readBatchHeader, type BatchHeader } from '../../records/index.ts';
import type { Partition } from '../../replication/index.ts';

export const BATCHES_KEPT = 5;
const INT32_MAX = 0x7fffffff;
const REBUILD_READ_BYTES = 4 << 20;
export const REBUILD_WINDOW_BYTES = 64 << 20;

interface BatchMeta {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
  lastOffset: number;
}

interface ProducerEntry {
  epoch: number;
  batches: BatchMeta[];
}

export type SequenceVerdict =
  | { kind: 'append' }
  | { kind: 'duplicate'; baseOffset: number; lastOffset: number }
  | { kind: 'out-of-order'; message: string }
  | { kind: 'fenced'; message: string };

function lastSeqOf(h: BatchHeader): number {
  return (h.baseSequence + h.lastOffsetDelta) % (INT32_MAX + 1);
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

class ProducerTable {
  readonly producers = new Map<number, ProducerEntry>();
  constructor(readonly leaderEpoch: number) {}

  verdict(h: BatchHeader, where: string): SequenceVerdict {
    const e = this.producers.get(h.producerId);
    if (!e) return { kind: 'append' };
    if (h.producerEpoch < e.epoch) {
      return { kind: 'fenced', message: `${where}: producer ${h.producerId} epoch ${h.producerEpoch} is older than its current epoch ${e.epoch}` };
    }
    const lastSeq = lastSeqOf(h);
    if (h.producerEpoch === e.epoch) {
      const dup = e.batches.find((b) => b.firstSeq === h.baseSequence && b.lastSeq === lastSeq);
      if (dup) return { kind: 'duplicate', baseOffset: dup.baseOffset, lastOffset: dup.lastOffset };
      const last = e.batches[e.batches.length - 1];
      if (last && !inSequence(last.lastSeq, h.baseSequence)) {
        return { kind: 'out-of-order', message: `${where}: producer ${h.producerId} epoch ${h.producerEpoch} sent sequence ${h.baseSequence}, expected ${(last.lastSeq + 1) % (INT32_MAX + 1)}` };
      }
      return { kind: 'append' };
    }
    // A new epoch starts at sequence 0.
    if (h.baseSequence !== 0) {
      return { kind: 'out-of-order', message: `${where}: producer ${h.producerId} starts epoch ${h.producerEpoch} at sequence ${h.baseSequence}, expected 0` };
    }
    return { kind: 'append' };
  }

  record(h: BatchHeader, baseOffset: number, lastOffset: number): void {
    let e = this.producers.get(h.producerId);
    if (!e || h.producerEpoch > e.epoch) {
      e = { epoch: h.producerEpoch, batches: [] };
      this.producers.set(h.producerId, e);
    }
    e.batches.push({ firstSeq: h.baseSequence, lastSeq: lastSeqOf(h), baseOffset, lastOffset });
    if (e.batches.length > BATCHES_KEPT) e.batches.shift();
  }
}

/**
 * About REBUILD_WINDOW_BYTES before the log end: whole segments from the newest back, and within
 * the oldest one needed an offset interpolated from its size (the read starts at the batch
 * holding it).
 */
function rebuildStart(p: Partition, windowBytes: number): number {
  const segs = p.log.segmentInfos();
  let need = windowBytes;
  for (let i = segs.length - 1; i >= 0; i--) {
    const s = segs[i];
    if (s.sizeBytes < need) {
      need -= s.sizeBytes;
      continue;
    }
    const records = s.nextOffset - s.baseOffset;
    return Math.max(p.logStartOffset, s.nextOffset - Math.ceil((records * need) / Math.max(1, s.sizeBytes)));
  }
  return p.logStartOffset;
}

/** Producer tables of the partitions this broker leads. */
export class ProducerStates {
  private readonly tables = new WeakMap<Partition, ProducerTable>();
  rebuilds = 0;

  constructor(private readonly rebuildWindowBytes = REBUILD_WINDOW_BYTES) {}

  private table(p: Partition): ProducerTable {
    const t = this.tables.get(p);
    if (t && t.leaderEpoch === p.leaderEpoch) return t;
    const fresh = this.rebuild(p);
    this.tables.set(p, fresh);
    return fresh;
  }

  /** Reads every batch header of the log (Kafka reads its producer snapshot plus the tail). */
  private rebuild(p: Partition): ProducerTable {
    this.rebuilds++;
    const t = new ProducerTable(p.leaderEpoch);
    let offset = rebuildStart(p, this.rebuildWindowBytes);
    const end = p.logEndOffset;
    while (offset < end) {
      const r = p.log.read(offset, REBUILD_READ_BYTES, end);
      if (r.data.length === 0) break;
      for (const { header: h } of iterateBatches(r.data)) {
        if (h.producerId >= 0 && h.baseSequence >= 0) t.record(h, h.baseOffset, h.baseOffset + h.lastOffsetDelta);
      }
      if (r.nextOffset <= offset) break;
      offset = r.nextOffset;
    }
    return t;
  }

  /**
   * Appends through `append` unless the batch is a duplicate or out of sequence; batches without
   * a producer id (non-idempotent producers) always append.
   */
  check(p: Partition, batch: Buffer): { verdict: SequenceVerdict; header: BatchHeader | null } {
    let h: BatchHeader;
    try {
      h = readBatchHeader(batch, 0);
    } catch {
      return { verdict: { kind: 'append' }, header: null }; // the log rejects it with its own error
    }
    if (h.producerId < 0 || h.baseSequence < 0) return { verdict: { kind: 'append' }, header: null };
    return { verdict: this.table(p).verdict(h, `${p.topic}-${p.partition}`), header: h };
  }

  /** Called right after a synchronous append succeeded at [baseOffset, lastOffset]. */
  appended(p: Partition, h: BatchHeader, baseOffset: number, lastOffset: number): void {
    this.table(p).record(h, baseOffset, lastOffset);
  }
}
