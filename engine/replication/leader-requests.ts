// What a leader answers: produce (append, then for acks=all a wait in the purgatory until the
// HW passes the batch), a follower's fetch (where the leader learns follower progress) and a
// consumer's fetch (up to the HW), with long polls parked in FetchWaiters. The HW itself is
// IsrState's; here it is advanced and what waits on it is completed.
import { StorageError, type Log, type ReadResult, type SliceResult } from '../storage/index.ts';
import { asBrokerError, BrokerError, brokerErrorFromStorage } from './errors.ts';
import { FetchWaiters } from './fetch-waiters.ts';
import type { IsrState } from './isr-state.ts';
import type { ConsumerFetchResult, ConsumerSliceResult, PartitionRole, ProduceResult, ReplicaFetchResult } from './partition-types.ts';
import { DelayedProducePurgatory } from './purgatory.ts';
import type { Acks } from './types.ts';

/** The partition a leader answers for (Partition implements it). */
export interface LeaderPartition {
  readonly topic: string;
  readonly partition: number;
  readonly role: PartitionRole;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly log: Log;
}

export class LeaderRequests {
  readonly purgatory = new DelayedProducePurgatory();
  readonly waiters: FetchWaiters;
  private readonly label: string;

  constructor(
    private readonly p: LeaderPartition,
    private readonly state: IsrState,
    private readonly minInsyncReplicas: number,
    private readonly now: () => number,
  ) {
    this.label = `${p.topic}-${p.partition}`;
    this.waiters = new FetchWaiters((offset, forReplica) => (forReplica ? p.log.logEndOffset > offset : state.hw > offset));
  }

  /** Appends as leader (the caller checked leadership); acks=all resolves once the HW passes the batch. */
  produce(batch: Buffer, opts: { acks: Acks; timeoutMs: number }): Promise<ProduceResult> | ProduceResult {
    if (opts.acks !== 0 && opts.acks !== 1 && opts.acks !== 'all') {
      throw new BrokerError('INVALID_REQUEST', `produce ${this.label}: acks must be 0, 1 or all, got ${JSON.stringify(opts.acks)}`);
    }
    const isr = this.state.isr;
    if (opts.acks === 'all' && isr.length < this.minInsyncReplicas) {
      throw new BrokerError(
        'NOT_ENOUGH_REPLICAS',
        `produce ${this.label}: ISR ${JSON.stringify(isr)} has ${isr.length} member(s), fewer than min.insync.replicas ${this.minInsyncReplicas}`,
        { isr: [...isr], minInsyncReplicas: this.minInsyncReplicas },
      );
    }
    let res;
    try {
      // The Log checks size, CRC, record framing and "exactly one batch" and refuses (mapped to
      // MESSAGE_TOO_LARGE / CORRUPT_MESSAGE) before writing anything.
      res = this.p.log.append(batch, { leaderEpoch: this.p.leaderEpoch, assignOffsets: true, nowMs: this.now() });
    } catch (e) {
      throw asBrokerError(e, `produce ${this.label}`);
    }
    this.waiters.wakeReplicas();
    this.maybeIncrementHw();
    const result = (): ProduceResult => ({
      baseOffset: res.baseOffset,
      lastOffset: res.lastOffset,
      logAppendTimeMs: res.logAppendTimeMs,
      hw: this.state.hw,
      recordCount: res.records,
      flushUs: res.flushUs,
      writeUs: res.writeUs,
    });
    if (opts.acks !== 'all') return result();
    const required = res.lastOffset + 1;
    if (this.state.hw >= required) {
      const err = this.enoughReplicasCheck();
      if (err) throw err;
      return result();
    }
    return this.purgatory.add(required, opts.timeoutMs, `produce ${this.label} offsets ${res.baseOffset}..${res.lastOffset}`).then(result);
  }

  /**
   * A follower's fetch (the caller checked leadership). Its fetch offset is its LEO, so this is
   * where the leader learns follower progress: caught-up time, ISR expansion, HW advance and
   * purgatory completion all follow from it.
   */
  replicaFetch(replicaId: number, fetchOffset: number, maxBytes: number, replicaLeaderEpoch: number): ReplicaFetchResult {
    const { log, leaderEpoch } = this.p;
    const what = `replica fetch ${this.label} from broker ${replicaId}`;
    if (replicaLeaderEpoch !== leaderEpoch) {
      throw new BrokerError('FENCED_LEADER_EPOCH', `${what}: its leader epoch ${replicaLeaderEpoch} is not the current ${leaderEpoch}`, {
        leader: this.p.leaderId,
        leaderEpoch,
      });
    }
    if (!this.state.isFollower(replicaId)) {
      throw new BrokerError('INVALID_REQUEST', `${what}: broker ${replicaId} is not a follower replica (replicas ${JSON.stringify(this.state.replicas)})`);
    }
    const leo = log.logEndOffset;
    const start = log.logStartOffset;
    if (!Number.isSafeInteger(fetchOffset) || fetchOffset < start || fetchOffset > leo) {
      throw new BrokerError('OFFSET_OUT_OF_RANGE', `${what}: offset ${fetchOffset} is outside [${start}, ${leo}]`, { logStartOffset: start, logEndOffset: leo });
    }
    this.state.recordFetch(replicaId, fetchOffset, leo);
    this.maybeIncrementHw();
    const r = this.readLog(fetchOffset, maxBytes);
    return { data: r.data, nextOffset: r.nextOffset, highWatermark: this.state.hw, leaderEpoch, logStartOffset: log.logStartOffset };
  }

  /** A consumer's fetch (the caller checked leadership): committed records only, up to the HW. */
  consumerFetch(offset: number, maxBytes: number): ConsumerFetchResult {
    const { hw, start } = this.consumerRange(offset);
    if (offset >= hw) return { data: Buffer.alloc(0), nextOffset: offset, highWatermark: hw, logStartOffset: start };
    const r = this.readLog(offset, maxBytes, hw);
    return { data: r.data, nextOffset: r.nextOffset, highWatermark: hw, logStartOffset: start };
  }

  /** consumerFetch's batches as file slices (the zero-copy fetch sends them with sendfile). */
  consumerSlice(offset: number, maxBytes: number): ConsumerSliceResult {
    const { hw, start } = this.consumerRange(offset);
    if (offset >= hw) return { slices: [], bytes: 0, nextOffset: offset, highWatermark: hw, logStartOffset: start };
    let r: SliceResult;
    try {
      r = this.p.log.slice(offset, maxBytes, hw);
    } catch (e) {
      throw e instanceof StorageError ? brokerErrorFromStorage(e) : e;
    }
    return { slices: r.slices, bytes: r.bytes, nextOffset: r.nextOffset, highWatermark: hw, logStartOffset: start };
  }

  /** The HW and log start a consumer fetch at `offset` is answered against; OFFSET_OUT_OF_RANGE outside the log. */
  private consumerRange(offset: number): { hw: number; start: number } {
    const leo = this.p.log.logEndOffset;
    const start = this.p.log.logStartOffset;
    const hw = this.state.hw;
    if (!Number.isSafeInteger(offset) || offset < start || offset > leo) {
      throw new BrokerError('OFFSET_OUT_OF_RANGE', `fetch ${this.label}: offset ${offset} is outside [${start}, ${leo}]`, {
        logStartOffset: start,
        logEndOffset: leo,
        highWatermark: hw,
      });
    }
    return { hw, start };
  }

  /**
   * Moves the HW forward when the ISR's LEOs allow; completes the purgatory up to it and wakes
   * consumer fetches. Not while the committed ISR is below min.insync.replicas (at most the
   * replication factor), as Kafka's Partition.maybeIncrementLeaderHW (isUnderMinIsr, KIP-966):
   * what a leader holds alone then (acks=1) is not committed, so an ELR member that left the ISR
   * at the minimum holds everything below the HW.
   */
  maybeIncrementHw(): void {
    if (this.p.role !== 'leader' || this.underMinIsr() || !this.state.advanceHw()) return;
    this.purgatory.complete(this.state.hw, () => this.enoughReplicasCheck());
    this.waiters.wakeConsumers();
  }

  /** After the committed ISR changed on the leader: the HW may move; below min.insync.replicas the waiting acks=all requests fail. */
  onIsrChanged(): void {
    this.maybeIncrementHw();
    const isr = this.state.isr;
    if (isr.length < this.minInsyncReplicas && this.purgatory.size > 0) {
      this.purgatory.failAll(
        () =>
          new BrokerError(
            'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
            `${this.label}: the ISR shrank to ${JSON.stringify(isr)} (${isr.length} < min.insync.replicas ${this.minInsyncReplicas}) while the request waited`,
            { isr: [...isr], minInsyncReplicas: this.minInsyncReplicas },
          ),
      );
    }
  }

  /** Waiting produce requests fail with `make()`'s error and every long poll returns (leadership lost, or shutdown). */
  abandon(make: () => BrokerError): void {
    this.purgatory.failAll(make);
    this.waiters.wakeAll();
  }

  private underMinIsr(): boolean {
    return this.state.isr.length < Math.min(this.minInsyncReplicas, this.state.replicas.length);
  }

  private enoughReplicasCheck(): BrokerError | null {
    const isr = this.state.isr;
    if (isr.length >= this.minInsyncReplicas) return null;
    return new BrokerError(
      'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
      `${this.label}: appended, but the ISR ${JSON.stringify(isr)} has fewer than min.insync.replicas ${this.minInsyncReplicas}`,
      { isr: [...isr], minInsyncReplicas: this.minInsyncReplicas },
    );
  }

  private readLog(offset: number, maxBytes: number, maxOffset?: number): ReadResult {
    return readLog(this.p.log, offset, maxBytes, maxOffset);
  }
}

/** log.read, with a storage error turned into the broker's answer. */
export function readLog(log: Log, offset: number, maxBytes: number, maxOffset?: number): ReadResult {
  try {
    return log.read(offset, maxBytes, maxOffset);
  } catch (e) {
    throw e instanceof StorageError ? brokerErrorFromStorage(e) : e;
  }
}
