import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CorruptBatchError, LOG_OVERHEAD, readBatchHeader, type BatchHeader } from '../records/index.ts';
import { Log, StorageError } from '../storage/index.ts';
import type { LatencySummary } from '../common/latency.ts';
import type { LogConfig, ReadResult } from '../storage/types.ts';
import { BrokerError, brokerErrorFromStorage, type KafkaErrorName } from './errors.ts';
import { HighWatermarkCheckpoint } from './hw-checkpoint.ts';
import { LeaderEpochCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, type EpochEndOffset } from './leader-epoch-cache.ts';
import { DelayedProducePurgatory } from './purgatory.ts';
import type { Acks, AlterPartitionRequest, PartitionAssignment } from './types.ts';

export type { Acks, AlterPartitionRequest, PartitionAssignment } from './types.ts';

export type PartitionRole = 'leader' | 'follower' | 'none';

export interface ProduceResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTimeMs: number;
  /** The HW when the answer was made (for acks=all: > lastOffset). */
  hw: number;
  recordCount: number;
  flushUs: number;
  writeUs: number;
}

export interface PartitionOptions {
  topic: string;
  partition: number;
  brokerId: number;
  /** Broker data dir; the log lives in dataDir/<topic>-<partition>. */
  dataDir: string;
  logConfig: Partial<LogConfig>;
  /** min.insync.replicas (acks=all only). */
  minInsyncReplicas: number;
  /** replica.lag.time.max.ms: a follower not caught up for longer leaves the ISR. */
  replicaLagTimeMaxMs: number;
  now?: () => number;
  /** AlterPartition: resolves with the controller's accepted state or rejects (fenced). */
  proposeIsr: (req: AlterPartitionRequest) => Promise<PartitionAssignment>;
}

export interface ReplicaFetchResult {
  data: Buffer;
  nextOffset: number;
  highWatermark: number;
  leaderEpoch: number;
  logStartOffset: number;
}

export interface ConsumerFetchResult {
  data: Buffer;
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

export interface FollowerMetrics {
  id: number;
  /** -1 until the follower fetched from this leader. */
  leo: number;
  lastCaughtUpTimeMs: number;
  inIsr: boolean;
}

export interface PartitionMetrics {
  topic: string;
  partition: number;
  role: PartitionRole;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
  /** The ISR used for the HW while an AlterPartition is in flight (= isr otherwise). */
  maximalIsr: number[];
  hw: number;
  leo: number;
  logStartOffset: number;
  purgatorySize: number;
  purgatoryCompleted: number;
  purgatoryExpired: number;
  /** Long-poll fetches waiting in waitForData. */
  longPolls: number;
  appends: number;
  records: number;
  bytes: number;
  flushes: number;
  flushTimeUs: LatencySummary;
  writeTimeUs: LatencySummary;
  followers: FollowerMetrics[];
  isrShrinks: number;
  isrExpands: number;
  isrProposalsRejected: number;
  truncations: number;
  bytesTruncated: number;
  errors: Record<string, number>;
}

interface FollowerState {
  id: number;
  leo: number;
  lastCaughtUpTimeMs: number;
  /** Leader LEO when this follower last fetched, and when: Kafka's lastFetchLeaderLogEndOffset / lastFetchTimeMs. */
  lastFetchLeaderLeo: number;
  lastFetchTimeMs: number;
}

interface DataWaiter {
  offset: number;
  forReplica: boolean;
  resolve: () => void;
  timer: NodeJS.Timeout | null;
}

const HW_CHECKPOINT_INTERVAL_MS = 1000;

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/**
 * One replica of one partition on one broker: Kafka's Partition plus the parts of ReplicaManager
 * that concern it. As leader it appends produce requests, tracks every follower's LEO from its
 * fetches, moves the HW to the minimum LEO over the ISR, parks acks=all requests in a purgatory
 * until the HW passes them and proposes ISR changes to the controller. As follower it truncates
 * by leader epoch (KIP-101/KIP-279) and appends what it fetched with the leader's offsets.
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
  private readonly purgatory = new DelayedProducePurgatory();
  private waiters = new Set<DataWaiter>();

  private _role: PartitionRole = 'none';
  private _leaderId = -1;
  private _leaderEpoch = -1;
  private _partitionEpoch = -1;
  private _replicas: number[] = [];
  private _isr: number[] = [];
  private pendingIsr: { proposed: number[]; maximal: number[] } | null = null;
  private _hw: number;
  private _needsTruncation = false;
  /** LEO when this replica became leader: a follower must reach it to join the ISR. */
  private leaderEpochStartOffset = -1;
  private followers = new Map<number, FollowerState>();
  private lastHwCheckpointMs = -Infinity;
  private closed = false;
  private counters = { isrShrinks: 0, isrExpands: 0, isrProposalsRejected: 0, truncations: 0, bytesTruncated: 0 };
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
    this._hw = Math.min(this.hwCheckpoint.read() ?? 0, log.logEndOffset);
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
    const log = Log.open(dir, opts.logConfig, { now: opts.now });
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
    return this._replicas;
  }
  get isr(): readonly number[] {
    return this._isr;
  }
  get highWatermark(): number {
    return this._hw;
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

  private get maximalIsr(): number[] {
    if (!this.pendingIsr) return this._isr;
    return this.pendingIsr.maximal;
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
    this._replicas = [...a.replicas];
    this.pendingIsr = null;
    if (newLeaderEpoch) {
      this._leaderEpoch = a.leaderEpoch;
      this._leaderId = a.leader;
      if (a.leader === this.brokerId) {
        this.becomeLeader(a);
        return 'became-leader';
      }
      this._isr = [...a.isr];
      this.followers.clear();
      this.purgatory.failAll(
        () =>
          new BrokerError(
            'NOT_LEADER_OR_FOLLOWER',
            `${this.topic}-${this.partition}: broker ${this.brokerId} is no longer the leader (leader ${a.leader}, epoch ${a.leaderEpoch})`,
            { leader: a.leader, leaderEpoch: a.leaderEpoch },
          ),
      );
      if (a.leader >= 0 && a.replicas.includes(this.brokerId)) {
        this._role = 'follower';
        this._needsTruncation = true;
        this.wakeAll();
        return 'became-follower';
      }
      this._role = 'none';
      this._needsTruncation = false;
      this.wakeAll();
      return 'updated';
    }
    // Same leader epoch: only the ISR (or the replica list) changed.
    this._isr = [...a.isr];
    if (this._role === 'leader') this.onIsrChanged();
    return 'updated';
  }

  private becomeLeader(a: PartitionAssignment): void {
    const now = this.now();
    const leo = this.log.logEndOffset;
    this._role = 'leader';
    this._isr = [...a.isr];
    this._needsTruncation = false;
    this.epochCache.assign(a.leaderEpoch, leo);
    this.leaderEpochStartOffset = leo;
    // Kafka resets follower state on a leader change: LEO unknown until they fetch; members of
    // the ISR count as caught up now so they get a full lag period to show up.
    this.followers.clear();
    for (const id of a.replicas) {
      if (id === this.brokerId) continue;
      this.followers.set(id, {
        id,
        leo: -1,
        lastCaughtUpTimeMs: a.isr.includes(id) ? now : 0,
        lastFetchLeaderLeo: -1,
        lastFetchTimeMs: 0,
      });
    }
    this.maybeIncrementHw();
    this.onIsrChanged();
    this.wakeAll();
  }

  /** After the committed ISR changed on the leader. */
  private onIsrChanged(): void {
    this.maybeIncrementHw();
    if (this._isr.length < this.opts.minInsyncReplicas && this.purgatory.size > 0) {
      this.purgatory.failAll(
        () =>
          new BrokerError(
            'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
            `${this.topic}-${this.partition}: the ISR shrank to ${JSON.stringify(this._isr)} (${this._isr.length} < min.insync.replicas ${this.opts.minInsyncReplicas}) while the request waited`,
            { isr: [...this._isr], minInsyncReplicas: this.opts.minInsyncReplicas },
          ),
      );
    }
  }

  // ---------------------------------------------------------------- leader: produce

  async appendAsLeader(batch: Buffer, opts: { acks: Acks; timeoutMs: number }): Promise<ProduceResult> {
    try {
      return await this.appendAsLeaderInner(batch, opts);
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  private appendAsLeaderInner(batch: Buffer, opts: { acks: Acks; timeoutMs: number }): Promise<ProduceResult> | ProduceResult {
    this.requireLeader('produce');
    if (opts.acks !== 0 && opts.acks !== 1 && opts.acks !== 'all') {
      throw new BrokerError('INVALID_REQUEST', `produce ${this.topic}-${this.partition}: acks must be 0, 1 or all, got ${JSON.stringify(opts.acks)}`);
    }
    if (opts.acks === 'all' && this._isr.length < this.opts.minInsyncReplicas) {
      throw new BrokerError(
        'NOT_ENOUGH_REPLICAS',
        `produce ${this.topic}-${this.partition}: ISR ${JSON.stringify(this._isr)} has ${this._isr.length} member(s), fewer than min.insync.replicas ${this.opts.minInsyncReplicas}`,
        { isr: [...this._isr], minInsyncReplicas: this.opts.minInsyncReplicas },
      );
    }
    let res;
    try {
      // The Log checks size, CRC, record framing and "exactly one batch" and answers with
      // MESSAGE_TOO_LARGE / CORRUPT_MESSAGE before writing anything.
      res = this.log.append(batch, { leaderEpoch: this._leaderEpoch, assignOffsets: true, nowMs: this.now() });
    } catch (e) {
      throw this.storageError(e, 'produce');
    }
    this.wakeReplicas();
    this.maybeIncrementHw();
    const result = (): ProduceResult => ({
      baseOffset: res.baseOffset,
      lastOffset: res.lastOffset,
      logAppendTimeMs: res.logAppendTimeMs,
      hw: this._hw,
      recordCount: res.records,
      flushUs: res.flushUs,
      writeUs: res.writeUs,
    });
    if (opts.acks !== 'all') return result();
    const required = res.lastOffset + 1;
    if (this._hw >= required) {
      const err = this.enoughReplicasCheck();
      if (err) throw err;
      return result();
    }
    return this.purgatory
      .add(required, opts.timeoutMs, `produce ${this.topic}-${this.partition} offsets ${res.baseOffset}..${res.lastOffset}`)
      .then(result);
  }

  private enoughReplicasCheck(): BrokerError | null {
    if (this._isr.length >= this.opts.minInsyncReplicas) return null;
    return new BrokerError(
      'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
      `${this.topic}-${this.partition}: appended, but the ISR ${JSON.stringify(this._isr)} has fewer than min.insync.replicas ${this.opts.minInsyncReplicas}`,
      { isr: [...this._isr], minInsyncReplicas: this.opts.minInsyncReplicas },
    );
  }

  // ---------------------------------------------------------------- leader: fetch

  /**
   * A follower's fetch. Its fetch offset is its LEO, so this is where the leader learns follower
   * progress: caught-up time, ISR expansion, HW advance and purgatory completion all follow from it.
   */
  readForReplica(replicaId: number, fetchOffset: number, maxBytes: number, replicaLeaderEpoch: number): ReplicaFetchResult {
    try {
      this.requireLeader('replica fetch');
      const what = `replica fetch ${this.topic}-${this.partition} from broker ${replicaId}`;
      if (replicaLeaderEpoch !== this._leaderEpoch) {
        throw new BrokerError('FENCED_LEADER_EPOCH', `${what}: its leader epoch ${replicaLeaderEpoch} is not the current ${this._leaderEpoch}`, {
          leader: this._leaderId,
          leaderEpoch: this._leaderEpoch,
        });
      }
      const f = this.followers.get(replicaId);
      if (!f) throw new BrokerError('INVALID_REQUEST', `${what}: broker ${replicaId} is not a follower replica (replicas ${JSON.stringify(this._replicas)})`);
      const leo = this.log.logEndOffset;
      const start = this.log.logStartOffset;
      if (!Number.isSafeInteger(fetchOffset) || fetchOffset < start || fetchOffset > leo) {
        throw new BrokerError('OFFSET_OUT_OF_RANGE', `${what}: offset ${fetchOffset} is outside [${start}, ${leo}]`, {
          logStartOffset: start,
          logEndOffset: leo,
        });
      }
      this.updateFollowerFetchState(f, fetchOffset, leo);
      this.maybeExpandIsr(f);
      this.maybeIncrementHw();
      const r = this.readLog(fetchOffset, maxBytes);
      return { data: r.data, nextOffset: r.nextOffset, highWatermark: this._hw, leaderEpoch: this._leaderEpoch, logStartOffset: this.log.logStartOffset };
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  private updateFollowerFetchState(f: FollowerState, fetchOffset: number, leaderLeo: number): void {
    const now = this.now();
    // Kafka's rule: caught up now if the fetch reaches the leader's current LEO; caught up as of
    // the previous fetch if it reaches the LEO the leader had then. The second case keeps a
    // follower in the ISR under a steady stream of small produces that it can never fully reach.
    if (fetchOffset >= leaderLeo) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, now);
    else if (f.lastFetchLeaderLeo >= 0 && fetchOffset >= f.lastFetchLeaderLeo) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.leo = fetchOffset;
    f.lastFetchLeaderLeo = leaderLeo;
    f.lastFetchTimeMs = now;
  }

  private maybeExpandIsr(f: FollowerState): void {
    if (this.pendingIsr || this._isr.includes(f.id)) return;
    // Kafka's isFollowerInSync: at least the HW, and past the start of this leader's epoch, so
    // a replica with a divergent old-epoch tail is never counted.
    if (f.leo >= this._hw && f.leo >= this.leaderEpochStartOffset) {
      this.proposeIsrChange([...this._isr, f.id], 'expand');
    }
  }

  /** Followers whose lastCaughtUpTime is older than replica.lag.time.max.ms and who are not at the LEO. */
  private outOfSyncFollowers(): number[] {
    const now = this.now();
    const leo = this.log.logEndOffset;
    const out: number[] = [];
    for (const id of this._isr) {
      if (id === this.brokerId) continue;
      const f = this.followers.get(id);
      if (!f) continue;
      if (f.leo !== leo && now - f.lastCaughtUpTimeMs > this.opts.replicaLagTimeMaxMs) out.push(id);
    }
    return out;
  }

  private proposeIsrChange(isr: number[], kind: 'expand' | 'shrink'): void {
    const ordered = this._replicas.filter((id) => isr.includes(id));
    const pending = { proposed: ordered, maximal: [...new Set([...this._isr, ...ordered])] };
    this.pendingIsr = pending;
    const req: AlterPartitionRequest = {
      topic: this.topic,
      partition: this.partition,
      brokerId: this.brokerId,
      leaderEpoch: this._leaderEpoch,
      partitionEpoch: this._partitionEpoch,
      isr: ordered,
    };
    let p: Promise<PartitionAssignment>;
    try {
      p = this.opts.proposeIsr(req);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (a) => {
        if (this.pendingIsr === pending) this.pendingIsr = null;
        if (this.closed) return;
        const r = this.applyAssignment(a);
        if (r !== 'stale' && sameMembers(a.isr, ordered)) {
          if (kind === 'shrink') this.counters.isrShrinks++;
          else this.counters.isrExpands++;
        }
      },
      () => {
        // Fenced or stale: the controller's state reaches this broker by heartbeat; propose
        // again from there (tick / next fetch) if still needed.
        if (this.pendingIsr === pending) this.pendingIsr = null;
        this.counters.isrProposalsRejected++;
      },
    );
  }

  /** HW = min LEO over the (maximal) ISR, only ever forward; completes the purgatory and wakes consumers. */
  private maybeIncrementHw(): void {
    if (this._role !== 'leader') return;
    let min = this.log.logEndOffset;
    for (const id of this.maximalIsr) {
      if (id === this.brokerId) continue;
      const f = this.followers.get(id);
      const leo = f ? f.leo : -1;
      if (leo < min) min = leo;
    }
    if (min <= this._hw) return;
    this._hw = min;
    this.purgatory.complete(min, () => this.enoughReplicasCheck());
    this.wakeConsumers();
  }

  readForConsumer(offset: number, maxBytes: number): ConsumerFetchResult {
    try {
      this.requireLeader('fetch');
      const leo = this.log.logEndOffset;
      const start = this.log.logStartOffset;
      if (!Number.isSafeInteger(offset) || offset < start || offset > leo) {
        throw new BrokerError('OFFSET_OUT_OF_RANGE', `fetch ${this.topic}-${this.partition}: offset ${offset} is outside [${start}, ${leo}]`, {
          logStartOffset: start,
          logEndOffset: leo,
          highWatermark: this._hw,
        });
      }
      const hw = this._hw;
      if (offset >= hw) return { data: Buffer.alloc(0), nextOffset: offset, highWatermark: hw, logStartOffset: start };
      const r = this.readLog(offset, maxBytes, hw);
      return { data: r.data, nextOffset: r.nextOffset, highWatermark: hw, logStartOffset: start };
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
    if (this.closed || this._role !== 'leader' || maxWaitMs <= 0 || this.dataReady(offset, forReplica)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const w: DataWaiter = { offset, forReplica, resolve, timer: null };
      w.timer = setTimeout(() => this.release(w), maxWaitMs);
      this.waiters.add(w);
    });
  }

  private dataReady(offset: number, forReplica: boolean): boolean {
    return forReplica ? this.log.logEndOffset > offset : this._hw > offset;
  }

  private release(w: DataWaiter): void {
    if (!this.waiters.delete(w)) return;
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    w.resolve();
  }

  private wakeReplicas(): void {
    for (const w of this.waiters) if (w.forReplica && this.dataReady(w.offset, true)) this.release(w);
  }

  private wakeConsumers(): void {
    for (const w of this.waiters) if (!w.forReplica && this.dataReady(w.offset, false)) this.release(w);
  }

  private wakeAll(): void {
    for (const w of [...this.waiters]) this.release(w);
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
   * endOffsetForEpoch(this.latestLogEpoch):
   * - the leader cannot answer (-1 end offset): fall back to the HW (pre-KIP-101 behaviour);
   * - it answered an epoch this replica also has: truncate to the smaller of both end offsets;
   * - it answered an epoch this replica does not have: truncate to the end of this replica's
   *   largest epoch below it and stay in needsTruncation, so the fetcher asks again with the
   *   (now smaller) latest epoch. Every round lowers the epoch asked, so the loop ends.
   * Afterwards HW = min(HW, LEO).
   */
  truncateByLeaderEpoch(leaderAnswer: EpochEndOffset): { truncatedTo: number; bytesTruncated: number } {
    if (this._role !== 'follower') {
      throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `truncate ${this.topic}-${this.partition}: broker ${this.brokerId} is ${this._role}, not a follower`, {
        leader: this._leaderId,
      });
    }
    const leo = this.log.logEndOffset;
    let target: number;
    let done = true;
    if (leaderAnswer.endOffset === UNDEFINED_EPOCH_OFFSET) {
      target = Math.min(this._hw, leo);
    } else if (leaderAnswer.leaderEpoch === UNDEFINED_EPOCH) {
      target = Math.min(leaderAnswer.endOffset, leo);
    } else {
      const mine = this.epochCache.endOffsetFor(leaderAnswer.leaderEpoch);
      if (mine.endOffset === UNDEFINED_EPOCH_OFFSET) {
        target = Math.min(leaderAnswer.endOffset, leo);
      } else if (mine.leaderEpoch !== leaderAnswer.leaderEpoch) {
        target = Math.min(mine.endOffset, leo);
        done = false;
      } else {
        target = Math.min(mine.endOffset, leaderAnswer.endOffset, leo);
      }
    }
    target = Math.max(target, this.log.logStartOffset);
    const bytesTruncated = this.truncateTo(target);
    if (done || this.epochCache.isEmpty) this._needsTruncation = false;
    return { truncatedTo: target, bytesTruncated };
  }

  private logBytes(): number {
    return this.log.segmentInfos().reduce((n, seg) => n + seg.sizeBytes, 0);
  }

  private truncateTo(offset: number): number {
    let bytes = 0;
    if (offset < this.log.logEndOffset) {
      const before = this.logBytes();
      try {
        this.log.truncateTo(offset);
      } catch (e) {
        throw this.storageError(e, 'truncate');
      }
      bytes = Math.max(0, before - this.logBytes());
      this.counters.truncations++;
      this.counters.bytesTruncated += bytes;
    }
    // Always: an epoch that starts exactly at the new end never wrote anything kept here.
    this.epochCache.truncateFromEnd(offset);
    if (this._hw > this.log.logEndOffset) this._hw = this.log.logEndOffset;
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
      let batches = 0;
      let records = 0;
      const headers = this.splitBatches(data, 'replicate');
      for (const { position, header, size } of headers) {
        const leo = this.log.logEndOffset;
        if (header.baseOffset !== leo) {
          throw new BrokerError(
            'OFFSET_OUT_OF_RANGE',
            `replicate ${this.topic}-${this.partition}: fetched batch starts at offset ${header.baseOffset} but the log ends at ${leo}`,
            { logEndOffset: leo },
          );
        }
        if (header.partitionLeaderEpoch >= 0) this.epochCache.assign(header.partitionLeaderEpoch, header.baseOffset);
        try {
          this.log.append(data.subarray(position, position + size), { assignOffsets: false, nowMs: this.now() });
        } catch (e) {
          throw this.storageError(e, 'replicate');
        }
        batches++;
        records += header.recordCount;
      }
      const hw = Math.min(leaderHw, this.log.logEndOffset);
      if (hw > this._hw) this._hw = hw;
      return { batches, records };
    } catch (e) {
      this.countError(e);
      throw e;
    }
  }

  /**
   * Cuts fetched bytes into batches by their headers. The CRC is checked once, by Log.append;
   * here only the framing, so that a torn fetch answer is refused before anything is written.
   */
  private splitBatches(data: Buffer, what: string): Array<{ position: number; header: BatchHeader; size: number }> {
    const out: Array<{ position: number; header: BatchHeader; size: number }> = [];
    let pos = 0;
    while (pos < data.length) {
      let header: BatchHeader;
      try {
        header = readBatchHeader(data, pos, { maxBatchBytes: this.maxBatchBytes });
      } catch (e) {
        if (e instanceof CorruptBatchError) {
          throw new BrokerError('CORRUPT_MESSAGE', `${what} ${this.topic}-${this.partition}: ${e.message}`, { reason: e.reason });
        }
        throw e;
      }
      const size = LOG_OVERHEAD + header.length;
      if (pos + size > data.length) {
        throw new BrokerError('CORRUPT_MESSAGE', `${what} ${this.topic}-${this.partition}: batch at position ${pos} needs ${size} bytes, ${data.length - pos} present`, {
          reason: 'short',
        });
      }
      out.push({ position: pos, header, size });
      pos += size;
    }
    return out;
  }

  // ---------------------------------------------------------------- housekeeping

  /** Every ~100 ms: the leader shrinks the ISR of lagging followers; the HW is checkpointed at most once a second. */
  tick(): void {
    if (this.closed) return;
    if (this._role === 'leader' && !this.pendingIsr) {
      const out = this.outOfSyncFollowers();
      if (out.length > 0) this.proposeIsrChange(this._isr.filter((id) => !out.includes(id)), 'shrink');
    }
    const now = this.now();
    if (now - this.lastHwCheckpointMs >= HW_CHECKPOINT_INTERVAL_MS) {
      this.lastHwCheckpointMs = now;
      this.checkpointHw();
    }
  }

  private checkpointHw(): void {
    try {
      this.hwCheckpoint.write(this._hw);
    } catch (e) {
      this.countError(this.storageError(e, 'high watermark checkpoint'));
    }
  }

  /** sha256 of the stored bytes of every batch with lastOffset < upTo (default: the HW). */
  logHash(upTo?: number): { hash: string; upTo: number; hw: number; leo: number } {
    const limit = upTo ?? this._hw;
    const h = createHash('sha256');
    let offset = this.log.logStartOffset;
    const end = Math.min(limit, this.log.logEndOffset);
    outer: while (offset < end) {
      const r = this.readLog(offset, 1 << 20);
      if (r.data.length === 0) break;
      for (const { position, header, size } of this.splitBatches(r.data, 'logHash')) {
        if (header.baseOffset + header.lastOffsetDelta >= limit) break outer;
        h.update(r.data.subarray(position, position + size));
      }
      offset = r.nextOffset;
    }
    return { hash: h.digest('hex'), upTo: limit, hw: this._hw, leo: this.log.logEndOffset };
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
      isr: [...this._isr],
      maximalIsr: [...this.maximalIsr],
      hw: this._hw,
      leo: this.log.logEndOffset,
      logStartOffset: this.log.logStartOffset,
      purgatorySize: this.purgatory.size,
      purgatoryCompleted: this.purgatory.completed,
      purgatoryExpired: this.purgatory.expired,
      longPolls: this.waiters.size,
      appends: s.appends,
      records: s.records,
      bytes: s.bytes,
      flushes: s.flushes,
      flushTimeUs: s.flushTimeUs,
      writeTimeUs: s.writeTimeUs,
      followers: [...this.followers.values()].map((f) => ({
        id: f.id,
        leo: f.leo,
        lastCaughtUpTimeMs: f.lastCaughtUpTimeMs,
        inIsr: this._isr.includes(f.id),
      })),
      ...this.counters,
      errors: Object.fromEntries(this.errorCounts),
    };
  }

  /** Clean shutdown: waiting produce requests fail NOT_LEADER_OR_FOLLOWER, HW checkpointed, log closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.purgatory.failAll(
      () => new BrokerError('NOT_LEADER_OR_FOLLOWER', `${this.topic}-${this.partition}: broker ${this.brokerId} is shutting down`, { leader: -1 }),
    );
    this.wakeAll();
    this._role = 'none';
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

  /** log.read, with a storage error turned into the broker's answer. */
  private readLog(offset: number, maxBytes: number, maxOffset?: number): ReadResult {
    try {
      return this.log.read(offset, maxBytes, maxOffset);
    } catch (e) {
      throw e instanceof StorageError ? brokerErrorFromStorage(e) : e;
    }
  }

  private storageError(e: unknown, what: string): unknown {
    if (e instanceof BrokerError) return e;
    if (e instanceof StorageError) return brokerErrorFromStorage(e);
    if (e instanceof CorruptBatchError) return new BrokerError('CORRUPT_MESSAGE', `${what} ${this.topic}-${this.partition}: ${e.message}`, { reason: e.reason });
    const code = (e as NodeJS.ErrnoException)?.code;
    const msg = e instanceof Error ? e.message : String(e);
    return new BrokerError('KAFKA_STORAGE_ERROR', `${what} ${this.topic}-${this.partition}: ${msg}`, code ? { errno: code } : {});
  }

  private countError(e: unknown): void {
    const name: KafkaErrorName | 'UNKNOWN' = e instanceof BrokerError ? e.code : 'UNKNOWN';
    this.errorCounts.set(name, (this.errorCounts.get(name) ?? 0) + 1);
  }
}
