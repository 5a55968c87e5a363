import fs from 'node:fs';
import path from 'node:path';
import { Log } from '../storage/index.ts';
import { asBrokerError, BrokerError, brokerErrorFromStorage, type KafkaErrorName } from './errors.ts';
import { appendFetched, truncateReplica, truncationTarget } from './follower-append.ts';
import { HighWatermarkCheckpoint } from './hw-checkpoint.ts';
import { IsrState } from './isr-state.ts';
import { LeaderRequests } from './leader-requests.ts';
import { LeaderEpochCache, type EpochEndOffset } from './leader-epoch-cache.ts';
import { hashLogUpTo } from './log-hash.ts';
import type { ConsumerFetchResult, ConsumerSliceResult, PartitionMetrics, PartitionOptions, PartitionRole, ProduceResult, ReplicaFetchResult } from './partition-types.ts';
import type { Acks, PartitionAssignment } from './types.ts';

export type { Acks, AlterPartitionRequest, PartitionAssignment } from './types.ts';

const HW_CHECKPOINT_INTERVAL_MS = 1000;

/**
 * One replica of one partition on one broker: Kafka's Partition plus the parts of ReplicaManager
 * that concern it. As leader it appends produce requests, tracks every follower's LEO from its
 * fetches, moves the HW to the minimum LEO over the ISR and proposes ISR changes to the
 * controller (isr-state.ts), and answers produce and fetch requests, parking acks=all requests
 * in a purgatory until the HW passes them (leader-requests.ts). As follower it truncates by
 * leader epoch (KIP-101/KIP-279) and appends what it fetched with the leader's offsets
 * (follower-append.ts). This class holds the roles and epochs and delegates to those parts.
 * Single-threaded (Node's event loop): no locks; the only asynchronous parts are the
 * purgatory, long-poll waiters and ISR proposals.
 */
export class Partition {
  readonly topic: string;
  readonly partition: number;
  readonly brokerId: number;
  readonly log: Log;
  readonly dir: string;
  readonly epochCache: LeaderEpochCache;

  private readonly opts: PartitionOptions;
  private readonly now: () => number;
  private readonly hwCheckpoint: HighWatermarkCheckpoint;
  private readonly maxBatchBytes: number;
  private readonly state: IsrState;
  private readonly leader: LeaderRequests;

  private _role: PartitionRole = 'none';
  private _leaderId = -1;
  private _leaderEpoch = -1;
  private _partitionEpoch = -1;
  private _needsTruncation = false;
  private lastHwCheckpointMs = -Infinity;
  private closed = false;
  private counters = { truncations: 0, bytesTruncated: 0 };
  private errorCounts = new Map<string, number>();

  private constructor(opts: PartitionOptions, log: Log, dir: string) {
    this.opts = opts;
    this.topic = opts.topic;
    this.partition = opts.partition;
    this.brokerId = opts.brokerId;
    this.now = opts.now ?? Date.now;
    this.log = log;
    this.dir = dir;
    this.maxBatchBytes = log.config.maxBatchBytes;
    this.epochCache = LeaderEpochCache.open(dir, () => this.log.logEndOffset);
    // Recovery may have cut the log's tail: epochs that start past the end no longer exist.
    this.epochCache.truncateFromEnd(log.logEndOffset);
    if (log.logStartOffset > 0) this.epochCache.truncateFromStart(log.logStartOffset);
    this.hwCheckpoint = new HighWatermarkCheckpoint(dir, opts.topic, opts.partition);
    const hw = Math.min(this.hwCheckpoint.read() ?? 0, log.logEndOffset);
    this.state = new IsrState(this, { now: this.now, proposeIsr: (req) => opts.proposeIsr(req), isClosed: () => this.closed }, hw);
    this.leader = new LeaderRequests(this, this.state, opts.minInsyncReplicas, this.now);
  }

  /** Opens (and recovers) the log in dataDir/<topic>-<partition>, its epoch cache and HW checkpoint. */
  static open(opts: PartitionOptions): Partition {
    if (!Number.isInteger(opts.minInsyncReplicas) || opts.minInsyncReplicas < 1) {
      throw new Error(`partition ${opts.topic}-${opts.partition}: minInsyncReplicas must be an integer >= 1, got ${opts.minInsyncReplicas}`);
    }
    if (!(opts.replicaLagTimeMaxMs > 0)) {
      throw new Error(`partition ${opts.topic}-${opts.partition}: replicaLagTimeMaxMs must be > 0, got ${opts.replicaLagTimeMaxMs}`);
    }
    const dir = path.join(opts.dataDir, `${opts.topic}-${opts.partition}`);
    fs.mkdirSync(dir, { recursive: true });
    const onStorageError = opts.onStorageError;
    const log = Log.open(dir, opts.logConfig, { ...(opts.now ? { now: opts.now } : {}), ...(onStorageError ? { onOffline: (e) => onStorageError(brokerErrorFromStorage(e)) } : {}) });
    try {
      return new Partition(opts, log, dir);
    } catch (e) {
      // e.g. a malformed checkpoint file: do not leave the log's files open behind the error
      log.close();
      throw e;
    }
  }

  get role(): PartitionRole {
    return this._role;
  }
  get leaderId(): number {
    return this._leaderId;
  }
  get leaderEpoch(): number {
    return this._leaderEpoch;
  }
  get partitionEpoch(): number {
    return this._partitionEpoch;
  }
  get replicas(): readonly number[] {
    return this.state.replicas;
  }
  get isr(): readonly number[] {
    return this.state.isr;
  }
  get highWatermark(): number {
    return this.state.hw;
  }
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }
  get logStartOffset(): number {
    return this.log.logStartOffset;
  }
  /** A follower must truncate by leader epoch (ask the leader, call truncateByLeaderEpoch) before it fetches. */
  get needsTruncation(): boolean {
    return this._needsTruncation;
  }
  /**
   * The epoch a follower puts in its OffsetsForLeaderEpoch request: the latest epoch of its own
   * log (UNDEFINED_EPOCH = -1 when it has none), not the current leader epoch.
   */
  get latestLogEpoch(): number {
    return this.epochCache.latestEpoch;
  }

  // ---------------------------------------------------------------- assignment / roles

  /**
   * Applies the controller's state. Older (leaderEpoch, partitionEpoch) than what this replica
   * has seen is 'stale' and ignored. A new leader epoch with this broker as leader makes it
   * leader; any other new leader epoch makes it a follower that must truncate first. Same leader
   * epoch, newer partition epoch: an ISR change ('updated').
   */
  applyAssignment(a: PartitionAssignment): 'became-leader' | 'became-follower' | 'updated' | 'stale' {
    if (a.topic !== this.topic || a.partition !== this.partition) {
      throw new Error(`partition ${this.topic}-${this.partition}: assignment is for ${a.topic}-${a.partition}`);
    }
    if (this.closed) return 'stale';
    if (a.leaderEpoch < this._leaderEpoch) return 'stale';
    if (a.leaderEpoch === this._leaderEpoch && a.partitionEpoch <= this._partitionEpoch) return 'stale';
    const newLeaderEpoch = a.leaderEpoch !== this._leaderEpoch;
    this._partitionEpoch = a.partitionEpoch;
    this.state.replicas = [...a.replicas];
    this.state.pending = null;
    if (newLeaderEpoch) {
      this._leaderEpoch = a.leaderEpoch;
      this._leaderId = a.leader;
      if (a.leader === this.brokerId) {
        this.becomeLeader(a);
        return 'became-leader';
      }
      this.state.isr = [...a.isr];
      this.state.clearFollowers();
      const follower = a.leader >= 0 && a.replicas.includes(this.brokerId);
      // The role changes before the waiters wake, so a woken long poll sees it.
      this._role = follower ? 'follower' : 'none';
      this._needsTruncation = follower;
      this.leader.abandon(
        () =>
          new BrokerError(
            'NOT_LEADER_OR_FOLLOWER',
            `${this.topic}-${this.partition}: broker ${this.brokerId} is no longer the leader (leader ${a.leader}, epoch ${a.leaderEpoch})`,
            { leader: a.leader, leaderEpoch: a.leaderEpoch },
          ),
      );
      return follower ? 'became-follower' : 'updated';
    }
    // Same leader epoch: only the ISR (or the replica list) changed.
    this.state.isr = [...a.isr];
    if (this._role === 'leader') this.leader.onIsrChanged();
    return 'updated';
  }

  private becomeLeader(a: PartitionAssignment): void {
    const leo = this.log.logEndOffset;
    this._role = 'leader';
    this.state.isr = [...a.isr];
    this._needsTruncation = false;
    this.epochCache.assign(a.leaderEpoch, leo);
    this.state.leaderEpochStartOffset = leo;
    this.state.resetFollowers(a, this.now());
    this.leader.maybeIncrementHw();
    this.leader.onIsrChanged();
    this.leader.waiters.wakeAll();
  }

  // ---------------------------------------------------------------- leader: produce

  async appendAsLeader(batch: Buffer, opts: { acks: Acks; timeoutMs: number }): Promise<ProduceResult> {
    try {
      this.requireLeader('produce');
      return await this.leader.produce(batch, opts);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  // ---------------------------------------------------------------- leader: fetch

  /** A follower's fetch: see LeaderRequests.replicaFetch. */
  readForReplica(replicaId: number, fetchOffset: number, maxBytes: number, replicaLeaderEpoch: number): ReplicaFetchResult {
    try {
      this.requireLeader('replica fetch');
      return this.leader.replicaFetch(replicaId, fetchOffset, maxBytes, replicaLeaderEpoch);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  /** A consumer's fetch: committed records only, up to the HW. */
  readForConsumer(offset: number, maxBytes: number): ConsumerFetchResult {
    try {
      this.requireLeader('fetch');
      return this.leader.consumerFetch(offset, maxBytes);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  /** readForConsumer's batches as file slices, for a zero-copy answer. */
  sliceForConsumer(offset: number, maxBytes: number): ConsumerSliceResult {
    try {
      this.requireLeader('fetch');
      return this.leader.consumerSlice(offset, maxBytes);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  /**
   * Long poll: resolves once the LEO (replica fetch) or the HW (consumer fetch) is past `offset`,
   * at maxWaitMs, on a role change or on close. Never rejects; the caller reads afterwards.
   */
  waitForData(offset: number, maxWaitMs: number, forReplica: boolean): Promise<void> {
    if (this.closed || this._role !== 'leader') return Promise.resolve();
    return this.leader.waiters.wait(offset, maxWaitMs, forReplica);
  }

  // ---------------------------------------------------------------- epochs and truncation

  /** OffsetsForLeaderEpoch, answered by the leader (KIP-101 / KIP-279). */
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    try {
      this.requireLeader('OffsetsForLeaderEpoch');
      return this.epochCache.endOffsetFor(epoch);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  /**
   * The follower side of KIP-101/KIP-279, with the leader's answer to
   * endOffsetForEpoch(this.latestLogEpoch): truncates where truncationTarget says and stays in
   * needsTruncation while it says the answer was for an epoch this replica does not have.
   * Afterwards HW = min(HW, LEO).
   */
  truncateByLeaderEpoch(leaderAnswer: EpochEndOffset): { truncatedTo: number; bytesTruncated: number } {
    if (this._role !== 'follower') {
      throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `truncate ${this.topic}-${this.partition}: broker ${this.brokerId} is ${this._role}, not a follower`, {
        leader: this._leaderId,
      });
    }
    const { target, done } = truncationTarget(leaderAnswer, {
      hw: this.state.hw,
      logStartOffset: this.log.logStartOffset,
      logEndOffset: this.log.logEndOffset,
      epochCache: this.epochCache,
    });
    const bytesTruncated = this.truncateTo(target);
    if (done || this.epochCache.isEmpty) this._needsTruncation = false;
    return { truncatedTo: target, bytesTruncated };
  }

  private truncateTo(offset: number): number {
    const longer = offset < this.log.logEndOffset;
    const bytes = truncateReplica(this.log, this.epochCache, offset, `${this.topic}-${this.partition}`);
    if (longer) {
      this.counters.truncations++;
      this.counters.bytesTruncated += bytes;
    }
    if (this.state.hw > this.log.logEndOffset) this.state.hw = this.log.logEndOffset;
    return bytes;
  }

  // ---------------------------------------------------------------- follower: append

  /**
   * Appends what the follower fetched: whole batches with the leader's offsets and epochs (the
   * epoch cache learns each new epoch from the batches), then HW = min(leader HW, LEO).
   */
  appendAsFollower(data: Buffer, leaderHw: number): { batches: number; records: number } {
    try {
      if (this._role !== 'follower') {
        throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `replicate ${this.topic}-${this.partition}: broker ${this.brokerId} is ${this._role}, not a follower`, {
          leader: this._leaderId,
        });
      }
      if (this._needsTruncation) {
        throw new BrokerError(
          'INVALID_REQUEST',
          `replicate ${this.topic}-${this.partition}: truncate by leader epoch first (needsTruncation); appending now could keep a divergent tail`,
        );
      }
      const appended = appendFetched(this.log, this.epochCache, data, {
        label: `replicate ${this.topic}-${this.partition}`,
        maxBatchBytes: this.maxBatchBytes,
        nowMs: this.now(),
      });
      const hw = Math.min(leaderHw, this.log.logEndOffset);
      if (hw > this.state.hw) this.state.hw = hw;
      return appended;
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  // ---------------------------------------------------------------- housekeeping

  /**
   * Every ~100 ms: the leader shrinks the ISR of lagging followers; the HW is checkpointed at
   * most once a second, off the event loop. The promise settles when that checkpoint write is
   * done (never rejects: a failure is counted); the broker does not wait for it, tests do.
   */
  tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this._role === 'leader') this.state.maybeShrink(this.opts.replicaLagTimeMaxMs);
    const now = this.now();
    if (now - this.lastHwCheckpointMs < HW_CHECKPOINT_INTERVAL_MS) return Promise.resolve();
    this.lastHwCheckpointMs = now;
    // A synchronous fsync here stalled every answer for 20-35 ms once a second under load;
    // close() still writes the final HW synchronously.
    return this.hwCheckpoint.writeInBackground(this.state.hw).then(
      () => undefined,
      (e: unknown) => {
        if (!this.closed) this.countError(asBrokerError(e, `high watermark checkpoint ${this.topic}-${this.partition}`));
      },
    );
  }

  private checkpointHw(): void {
    try {
      this.hwCheckpoint.write(this.state.hw);
    } catch (e) {
      this.countError(asBrokerError(e, `high watermark checkpoint ${this.topic}-${this.partition}`));
    }
  }

  /** sha256 of the stored bytes of every batch with lastOffset < upTo (default: the HW). */
  logHash(upTo?: number): { hash: string; upTo: number; hw: number; leo: number } {
    const limit = upTo ?? this.state.hw;
    const hash = hashLogUpTo(this.log, limit, this.maxBatchBytes, `${this.topic}-${this.partition}`);
    return { hash, upTo: limit, hw: this.state.hw, leo: this.log.logEndOffset };
  }

  metrics(): PartitionMetrics {
    const s = this.log.stats();
    return {
      topic: this.topic,
      partition: this.partition,
      role: this._role,
      leader: this._leaderId,
      leaderEpoch: this._leaderEpoch,
      partitionEpoch: this._partitionEpoch,
      isr: [...this.state.isr],
      maximalIsr: [...this.state.maximal],
      hw: this.state.hw,
      leo: this.log.logEndOffset,
      logStartOffset: this.log.logStartOffset,
      purgatorySize: this.leader.purgatory.size,
      purgatoryCompleted: this.leader.purgatory.completed,
      purgatoryExpired: this.leader.purgatory.expired,
      longPolls: this.leader.waiters.size,
      appends: s.appends,
      records: s.records,
      bytes: s.bytes,
      flushes: s.flushes,
      flushTimeUs: s.flushTimeUs,
      writeTimeUs: s.writeTimeUs,
      // Segment files of this replica, from the broker itself: the figure a host cannot count
      // where the data dir is inside a VM.
      segments: s.segments,
      rolls: s.rolls,
      rollTimeUs: s.rollTimeUs,
      followers: this.state.followerMetrics(),
      ...this.state.counters,
      ...this.counters,
      errors: Object.fromEntries(this.errorCounts),
    };
  }

  /** Clean shutdown: waiting produce requests fail NOT_LEADER_OR_FOLLOWER, HW checkpointed, log closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this._role = 'none';
    this.leader.abandon(
      () => new BrokerError('NOT_LEADER_OR_FOLLOWER', `${this.topic}-${this.partition}: broker ${this.brokerId} is shutting down`, { leader: -1 }),
    );
    this.checkpointHw();
    this.log.close();
  }

  // ---------------------------------------------------------------- helpers

  private requireLeader(what: string): void {
    if (this.closed || this._role !== 'leader') {
      throw new BrokerError(
        'NOT_LEADER_OR_FOLLOWER',
        `${what} ${this.topic}-${this.partition}: broker ${this.brokerId} is not the leader (leader ${this._leaderId}, epoch ${this._leaderEpoch})`,
        { leader: this._leaderId, leaderEpoch: this._leaderEpoch },
      );
    }
  }

  private countError(e: unknown): void {
    const name: KafkaErrorName | 'UNKNOWN' = e instanceof BrokerError ? e.code : 'UNKNOWN';
    this.errorCounts.set(name, (this.errorCounts.get(name) ?? 0) + 1);
    if (name === 'KAFKA_STORAGE_ERROR') this.opts.onStorageError?.(e as BrokerError);
  }
}
