// The ack ledger: every batch the workload sent, keyed by (partition, producer sequence), with
// what the broker said about it. It lives on the host, outside any fault's blast radius, and
// is the checker's ground truth.

/**
 * pending: written to a connected socket, no answer (yet): its outcome is unknown (Jepsen's
 * :info). never-sent: built, but its connection never connected (refused or reset during a
 * cut), so no byte of it left the host: it cannot be in any log and is not an unknown outcome.
 */
export type BatchStatus = 'pending' | 'acked' | 'failed' | 'unconfirmed' | 'never-sent';

export interface LedgerBatch {
  partition: number;
  producerId: number;
  baseSequence: number;
  records: number;
  sentMs: number;
  status: BatchStatus;
  baseOffset: number;
  ackMs: number;
  error: string | null;
  /** The client stream (kafka driver: producer connection) that sent it, when the driver says; its sends are ordered. */
  stream?: number;
  /**
   * Each record's acknowledged offset, when they are not consecutive (a client library split the
   * batch and other records landed between the parts), or when some record's report carried no
   * offset (ACKED_WITHOUT_OFFSET) or failed while others were acknowledged (RECORD_NOT_ACKED);
   * otherwise record i is at baseOffset + i. Read them with recordAcked / ackedOffsetOf.
   */
  recordOffsets?: number[];
}

/**
 * A recordOffsets entry: the record was acknowledged (acks >= 1) but its delivery report carried
 * no offset: librdkafka reports a retry the broker recognised as a duplicate of a batch it
 * already holds (DUPLICATE_SEQUENCE_NUMBER) that way. It is acknowledged and must survive; the
 * checker finds it by its identity, not by an offset.
 */
export const ACKED_WITHOUT_OFFSET = -1;
/** A recordOffsets entry: this record failed (the batch's `error` says why) while others of its batch were acknowledged. */
export const RECORD_NOT_ACKED = -2;

/** Whether record i of a batch is acknowledged (a batch acknowledged in part keeps each record's own outcome). */
export function recordAcked(b: Pick<LedgerBatch, 'status' | 'recordOffsets'>, i: number): boolean {
  return b.status === 'acked' && b.recordOffsets?.[i] !== RECORD_NOT_ACKED;
}

/** The acknowledged records of a batch (0 unless acked). */
export function ackedRecordsOf(b: Pick<LedgerBatch, 'status' | 'records' | 'recordOffsets'>): number {
  if (b.status !== 'acked') return 0;
  if (!b.recordOffsets) return b.records;
  let n = 0;
  for (let i = 0; i < b.records; i++) if (b.recordOffsets[i] !== RECORD_NOT_ACKED) n++;
  return n;
}

/** The offset record i of an acknowledged batch was acknowledged at; null when its report carried none (or it is not acknowledged). */
export function ackedOffsetOf(b: Pick<LedgerBatch, 'status' | 'baseOffset' | 'recordOffsets'>, i: number): number | null {
  if (b.status !== 'acked') return null;
  if (b.recordOffsets) {
    const o = b.recordOffsets[i]!;
    return o >= 0 ? o : null;
  }
  return b.baseOffset >= 0 ? b.baseOffset + i : null;
}

export interface LedgerCounts {
  sent: number;
  acked: number;
  failed: number;
  pending: number;
  unconfirmed: number;
  neverSent: number;
  ackedRecords: number;
}

/** Columnar per partition: a power-cut run can send millions of batches. */
class PartitionColumns {
  sentMs: number[] = [];
  ackMs: number[] = [];
  baseOffset: number[] = [];
  records: number[] = [];
  /** Sending stream per batch (-1: not recorded). */
  stream: number[] = [];
  status: Uint8Array = new Uint8Array(1024);
  errors = new Map<number, string>();
  /** Acknowledged at non-consecutive offsets: batch index -> each record's offset (rare). */
  recordOffsets = new Map<number, number[]>();
  count = 0;
  /** Highest high watermark a produce answer or a reading before the fault reported (-1: none yet). */
  maxHw = -1;
  /** Why the high watermark before the fault could not be read (null: it was, or nobody tried). */
  hwUnread: string | null = null;

  push(records: number, sentMs: number, stream = -1): number {
    const i = this.count++;
    if (i >= this.status.length) {
      const grown = new Uint8Array(this.status.length * 2);
      grown.set(this.status);
      this.status = grown;
    }
    this.sentMs.push(sentMs);
    this.ackMs.push(-1);
    this.baseOffset.push(-1);
    this.records.push(records);
    this.stream.push(stream);
    this.status[i] = STATUS_CODE.pending;
    return i;
  }
}

const STATUS_CODE: Record<BatchStatus, number> = { pending: 0, acked: 1, failed: 2, unconfirmed: 3, 'never-sent': 4 };
const STATUS_NAME: BatchStatus[] = ['pending', 'acked', 'failed', 'unconfirmed', 'never-sent'];

export class AckLedger {
  readonly recordsPerBatch: number;
  private readonly parts = new Map<number, PartitionColumns>();
  private readonly producerIds = new Map<number, number>();

  constructor(opts: { recordsPerBatch: number; producerIdBase: number; partitions: number[] }) {
    this.recordsPerBatch = opts.recordsPerBatch;
    for (const p of opts.partitions) {
      this.parts.set(p, new PartitionColumns());
      this.producerIds.set(p, opts.producerIdBase + p);
    }
  }

  partitions(): number[] {
    return [...this.parts.keys()].sort((a, b) => a - b);
  }

  producerIdOf(partition: number): number {
    const id = this.producerIds.get(partition);
    if (id === undefined) throw new Error(`ledger: partition ${partition} is not part of this workload`);
    return id;
  }

  /**
   * Registers a batch about to be sent; returns its base sequence (index * recordsPerBatch).
   * `stream`: the client stream sending it (a producer connection), whose batches the checker
   * expects in the log in the order they were sent.
   */
  send(partition: number, sentMs: number, stream?: number): number {
    const cols = this.columns(partition);
    return cols.push(this.recordsPerBatch, sentMs, stream ?? -1) * this.recordsPerBatch;
  }

  /**
   * The batch was acknowledged. `baseOffset` < 0: no record's report carried an offset
   * (ACKED_WITHOUT_OFFSET for every record). `recordOffsets`: each record's own outcome when the
   * client reported them apart: an offset, ACKED_WITHOUT_OFFSET, or RECORD_NOT_ACKED (then
   * `error` names why those failed); kept when not simply consecutive from baseOffset.
   */
  ack(partition: number, baseSequence: number, baseOffset: number, ackMs: number, recordOffsets?: readonly number[], error?: string): void {
    const cols = this.columns(partition);
    const i = this.indexOf(cols, partition, baseSequence);
    if (recordOffsets && recordOffsets.length !== cols.records[i]) {
      throw new Error(`ledger: partition ${partition} batch ${baseSequence} has ${cols.records[i]} records, acknowledged with ${recordOffsets.length} offsets`);
    }
    if (recordOffsets?.every((o) => o === RECORD_NOT_ACKED)) {
      throw new Error(`ledger: partition ${partition} batch ${baseSequence}: acknowledged with no record acknowledged (a failed batch is ledger.fail)`);
    }
    cols.status[i] = STATUS_CODE.acked;
    cols.baseOffset[i] = baseOffset;
    cols.ackMs[i] = ackMs;
    if (recordOffsets && recordOffsets.some((o, k) => o < 0 || o !== baseOffset + k)) cols.recordOffsets.set(i, [...recordOffsets]);
    else cols.recordOffsets.delete(i);
    if (error !== undefined && recordOffsets?.includes(RECORD_NOT_ACKED)) cols.errors.set(i, error);
    else cols.errors.delete(i);
  }

  /** The produce answer's `hw`: a broker's HW must never be seen to go back after a fault. */
  noteHw(partition: number, hw: number): void {
    const cols = this.columns(partition);
    if (hw > cols.maxHw) cols.maxHw = hw;
  }

  /** Highest HW any produce answer (or reading before the fault) of this partition reported, or -1. */
  maxHw(partition: number): number {
    return this.columns(partition).maxHw;
  }

  /** The reading of this partition's HW just before the fault failed: its going back is not measured. */
  hwNotRead(partition: number, why: string): void {
    this.columns(partition).hwUnread = why;
  }

  /** Why this partition's HW before the fault is not known, or null when a reading or produce answer gave it. */
  hwUnknownWhy(partition: number): string | null {
    const cols = this.columns(partition);
    return cols.hwUnread ?? (cols.maxHw < 0 ? 'no produce answer or reading gave its high watermark before the fault' : null);
  }

  /** acks=0: the broker answered before appending, so nothing is promised. */
  unconfirmed(partition: number, baseSequence: number, ackMs: number): void {
    const cols = this.columns(partition);
    const i = this.indexOf(cols, partition, baseSequence);
    cols.status[i] = STATUS_CODE.unconfirmed;
    cols.ackMs[i] = ackMs;
  }

  /** The batch's connection closed without ever connecting: none of it reached a socket. Only a pending batch changes. */
  neverSent(partition: number, baseSequence: number, atMs: number): void {
    const cols = this.columns(partition);
    const i = this.indexOf(cols, partition, baseSequence);
    if (cols.status[i] !== STATUS_CODE.pending) return;
    cols.status[i] = STATUS_CODE['never-sent'];
    cols.ackMs[i] = atMs;
  }

  fail(partition: number, baseSequence: number, error: string, atMs: number): void {
    const cols = this.columns(partition);
    const i = this.indexOf(cols, partition, baseSequence);
    cols.status[i] = STATUS_CODE.failed;
    cols.ackMs[i] = atMs;
    cols.errors.set(i, error);
  }

  *batches(partition: number): Generator<LedgerBatch> {
    const cols = this.columns(partition);
    const producerId = this.producerIdOf(partition);
    for (let i = 0; i < cols.count; i++) {
      yield {
        partition,
        producerId,
        baseSequence: i * this.recordsPerBatch,
        records: cols.records[i],
        sentMs: cols.sentMs[i],
        status: STATUS_NAME[cols.status[i]],
        baseOffset: cols.baseOffset[i],
        ackMs: cols.ackMs[i],
        error: cols.errors.get(i) ?? null,
        ...(cols.stream[i]! >= 0 ? { stream: cols.stream[i]! } : {}),
        ...(cols.recordOffsets.has(i) ? { recordOffsets: cols.recordOffsets.get(i)! } : {}),
      };
    }
  }

  /** Batches by state; `sent` counts every batch built, `neverSent` those that never reached a socket. */
  counts(): LedgerCounts {
    const c: LedgerCounts = { sent: 0, acked: 0, failed: 0, pending: 0, unconfirmed: 0, neverSent: 0, ackedRecords: 0 };
    for (const cols of this.parts.values()) {
      for (let i = 0; i < cols.count; i++) {
        c.sent++;
        const s = STATUS_NAME[cols.status[i]];
        c[s === 'never-sent' ? 'neverSent' : s]++;
        if (s === 'acked') c.ackedRecords += ackedRecordsOf({ status: s, records: cols.records[i]!, recordOffsets: cols.recordOffsets.get(i) });
      }
    }
    return c;
  }

  /** The batch holding one of this ledger's sequences: when it was sent, whether it is acknowledged now; undefined if never sent. */
  sentOf(partition: number, sequence: number): { sentMs: number; acked: boolean } | undefined {
    const cols = this.parts.get(partition);
    if (!cols || sequence < 0) return undefined;
    const i = Math.floor(sequence / this.recordsPerBatch);
    if (i >= cols.count) return undefined;
    return { sentMs: cols.sentMs[i]!, acked: recordAcked({ status: STATUS_NAME[cols.status[i]!]!, recordOffsets: cols.recordOffsets.get(i) }, sequence % this.recordsPerBatch) };
  }

  /** Newline-delimited JSON, one batch a line: kept with the run for later re-checking. */
  *toNdjson(): Generator<string> {
    for (const p of this.partitions()) for (const b of this.batches(p)) yield JSON.stringify(b) + '\n';
  }

  private columns(partition: number): PartitionColumns {
    const cols = this.parts.get(partition);
    if (!cols) throw new Error(`ledger: partition ${partition} is not part of this workload`);
    return cols;
  }

  private indexOf(cols: PartitionColumns, partition: number, baseSequence: number): number {
    const i = baseSequence / this.recordsPerBatch;
    if (!Number.isInteger(i) || i < 0 || i >= cols.count) {
      throw new Error(`ledger: partition ${partition} never sent a batch with base sequence ${baseSequence}`);
    }
    return i;
  }
}
