// The ISR on the load's timeline: every ~250 ms, each partition's leader and in-sync replicas
// as the cluster answers through the client driver (Kafka: Metadata; durolab: its /v1 metadata),
// kept as the changes (a new leader or ISR), so a 30 s trial stores a handful of rows. From
// them: how many records acks=all acknowledged while the ISR was smaller than the replication
// factor (the operator's "acks=all degraded to fewer copies" figure), and the ISR size per
// second beside the load's records/s and p99.
import type { ClusterClient } from '../drivers/types.ts';
import { ackedRecordsOf, type LedgerBatch } from '../history/ledger.ts';

/** A partition's leader and ISR from `atMs` (wall clock) until the next change of the same partition. */
export interface IsrChange {
  atMs: number;
  partition: number;
  /** null: no leader (offline). */
  leader: number | null;
  /** null: the reading failed (no broker answered); the ISR is unknown from here. */
  isr: number[] | null;
}

export const ISR_SAMPLE_INTERVAL_MS = 250;

type IsrSource = Pick<ClusterClient, 'leaderId' | 'inSyncReplicas' | 'highWatermarks'>;

/** A partition's high watermark from `atMs` until its next change; null: the reading failed or did not come within the round. */
export interface HwChange {
  atMs: number;
  partition: number;
  hw: number | null;
}

const same = (a: IsrChange, b: Omit<IsrChange, 'atMs'>) =>
  a.leader === b.leader && (a.isr === null ? b.isr === null : b.isr !== null && a.isr.length === b.isr.length && a.isr.every((x, i) => x === b.isr![i]));

/** Samples until stop(); one round at a time (a slow answer delays the next round, never overlaps it). */
export class IsrSampler {
  private readonly changes: IsrChange[] = [];
  private readonly last = new Map<number, IsrChange>();
  private readonly hw: HwChange[] = [];
  private readonly lastHw = new Map<number, HwChange>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;
  rounds = 0;

  constructor(
    private readonly client: IsrSource,
    private readonly topic: string,
    private readonly partitions: readonly number[],
    private readonly intervalMs = ISR_SAMPLE_INTERVAL_MS,
  ) {}

  start(): this {
    const tick = () => {
      if (this.stopped) return;
      this.round = this.sample().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    tick();
    return this;
  }

  private async sample(): Promise<void> {
    // The HW reading is bounded by the interval's double: a leader that does not answer (paused, cut) leaves it null, never stalls the ISR's round long.
    const hwRead = this.client.highWatermarks?.(this.topic, this.partitions, this.intervalMs * 2).catch(() => null) ?? null;
    const readings = await Promise.all(
      this.partitions.map(async (partition) => {
        const isr = await (this.client.inSyncReplicas?.(this.topic, partition) ?? Promise.resolve(null)).then(
          (r) => (r ? [...r].sort((a, b) => a - b) : null),
          () => null,
        );
        return { partition, leader: this.client.leaderId(this.topic, partition), isr };
      }),
    );
    const atMs = Date.now();
    this.rounds++;
    for (const r of readings) {
      const prev = this.last.get(r.partition);
      if (prev && same(prev, r)) continue;
      const change = { atMs, ...r };
      this.last.set(r.partition, change);
      this.changes.push(change);
    }
    if (hwRead) this.noteHw(atMs, await hwRead);
  }

  private noteHw(atMs: number, read: Map<number, number | { error: string }> | null): void {
    for (const partition of this.partitions) {
      const v = read?.get(partition);
      const hw = typeof v === 'number' ? v : null;
      if (this.lastHw.get(partition)?.hw === hw) continue;
      const change = { atMs, partition, hw };
      this.lastHw.set(partition, change);
      this.hw.push(change);
    }
  }

  /** Each partition's HW changes in time order; null where the driver reads no HW (see the header). */
  hwChanges(): HwChange[] | null {
    return this.client.highWatermarks ? [...this.hw] : null;
  }

  /** Stops sampling (after the round in flight) and returns every change, in time order. */
  async stop(): Promise<IsrChange[]> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
    return [...this.changes];
  }
}

/** The partition's ISR in force at `ms` (the last change at or before it); undefined before the first reading. */
export function isrAt(changes: readonly IsrChange[], partition: number, ms: number): IsrChange | undefined {
  let found: IsrChange | undefined;
  for (const c of changes) {
    if (c.partition !== partition) continue;
    if (c.atMs > ms) break;
    found = c;
  }
  return found;
}

/**
 * Records acknowledged while their partition's ISR held fewer than `replicationFactor` replicas
 * (acks=all then waits only for the ISR: fewer copies than the topic asks). A record whose ISR
 * was unknown at its acknowledgement is not counted; how many were is returned beside.
 */
export function ackedWhileIsrShrunk(batches: Iterable<LedgerBatch>, changes: readonly IsrChange[], replicationFactor: number): { records: number; unknown: number } {
  const byPartition = new Map<number, IsrChange[]>();
  for (const c of changes) {
    let list = byPartition.get(c.partition);
    if (!list) byPartition.set(c.partition, (list = []));
    list.push(c);
  }
  let records = 0;
  let unknown = 0;
  for (const b of batches) {
    if (b.status !== 'acked') continue;
    const at = isrAt(byPartition.get(b.partition) ?? [], b.partition, b.ackMs);
    const n = ackedRecordsOf(b);
    if (!at || at.isr === null) unknown += n;
    else if (at.isr.length < replicationFactor) records += n;
  }
  return { records, unknown };
}

/** The smallest ISR of any partition in each second since `startMs` (null: no reading that second), for the timeline. */
export function isrSizePerSecond(changes: readonly IsrChange[], startMs: number, seconds: number): Array<number | null> {
  const partitions = [...new Set(changes.map((c) => c.partition))];
  const out: Array<number | null> = [];
  for (let s = 0; s < seconds; s++) {
    const from = startMs + s * 1000;
    const to = from + 1000;
    let min: number | null = null;
    for (const p of partitions) {
      // In force at the second's start, and every change within it.
      const during = [isrAt(changes, p, from), ...changes.filter((c) => c.partition === p && c.atMs > from && c.atMs < to)];
      for (const c of during) if (c?.isr) min = min === null ? c.isr.length : Math.min(min, c.isr.length);
    }
    out.push(min);
  }
  return out;
}
