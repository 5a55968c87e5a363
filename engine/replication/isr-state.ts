// The leader's view of its replicas: the committed ISR, an AlterPartition proposal in flight
// (the "maximal" ISR the HW is computed over meanwhile), every follower's LEO and caught-up
// time as learnt from its fetches, and the high watermark (Kafka's Partition ISR and HW
// logic, KIP-497 AlterPartition).
import type { FollowerMetrics } from './partition-types.ts';
import type { AlterPartitionRequest, PartitionAssignment } from './types.ts';

interface FollowerState {
  id: number;
  leo: number;
  lastCaughtUpTimeMs: number;
  /** Leader LEO when this follower last fetched, and when: Kafka's lastFetchLeaderLogEndOffset / lastFetchTimeMs. */
  lastFetchLeaderLeo: number;
  lastFetchTimeMs: number;
}

/** The partition the ISR belongs to (Partition implements it). */
export interface IsrPartition {
  readonly topic: string;
  readonly partition: number;
  readonly brokerId: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly logEndOffset: number;
  /** Applies the controller's answer to a proposal; 'stale' when it was already superseded. */
  applyAssignment(a: PartitionAssignment): string;
}

export interface IsrDeps {
  now(): number;
  /** AlterPartition to the controller: resolves with its accepted state or rejects (fenced). */
  proposeIsr(req: AlterPartitionRequest): Promise<PartitionAssignment>;
  isClosed(): boolean;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export class IsrState {
  replicas: number[] = [];
  isr: number[] = [];
  /** The AlterPartition in flight: what was proposed, and the union the HW waits for meanwhile. */
  pending: { proposed: number[]; maximal: number[] } | null = null;
  hw: number;
  /** LEO when this replica became leader: a follower must reach it to join the ISR. */
  leaderEpochStartOffset = -1;
  readonly counters = { isrShrinks: 0, isrExpands: 0, isrProposalsRejected: 0 };
  private readonly followers = new Map<number, FollowerState>();

  constructor(
    private readonly host: IsrPartition,
    private readonly deps: IsrDeps,
    hw: number,
  ) {
    this.hw = hw;
  }

  /** The ISR the HW is computed over: the committed one, or its union with a pending proposal. */
  get maximal(): number[] {
    return this.pending ? this.pending.maximal : this.isr;
  }

  /** A new leader epoch elsewhere: no follower state is kept. */
  clearFollowers(): void {
    this.followers.clear();
  }

  /**
   * On becoming leader, Kafka resets follower state: LEO unknown until they fetch; members of
   * the ISR count as caught up now so they get a full lag period to show up.
   */
  resetFollowers(a: PartitionAssignment, now: number): void {
    this.followers.clear();
    for (const id of a.replicas) {
      if (id === this.host.brokerId) continue;
      this.followers.set(id, { id, leo: -1, lastCaughtUpTimeMs: a.isr.includes(id) ? now : 0, lastFetchLeaderLeo: -1, lastFetchTimeMs: 0 });
    }
  }

  isFollower(id: number): boolean {
    return this.followers.has(id);
  }

  /** A follower fetched at `fetchOffset` (its LEO) while the leader's LEO was `leaderLeo`; may propose adding it to the ISR. */
  recordFetch(id: number, fetchOffset: number, leaderLeo: number): void {
    const f = this.followers.get(id);
    if (!f) return;
    const now = this.deps.now();
    // Kafka's rule: caught up now if the fetch reaches the leader's current LEO; caught up as of
    // the previous fetch if it reaches the LEO the leader had then. The second case keeps a
    // follower in the ISR under a steady stream of small produces that it can never fully reach.
    if (fetchOffset >= leaderLeo) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, now);
    else if (f.lastFetchLeaderLeo >= 0 && fetchOffset >= f.lastFetchLeaderLeo) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.leo = fetchOffset;
    f.lastFetchLeaderLeo = leaderLeo;
    f.lastFetchTimeMs = now;
    this.maybeExpand(f);
  }

  private maybeExpand(f: FollowerState): void {
    if (this.pending || this.isr.includes(f.id)) return;
    // Kafka's isFollowerInSync: at least the HW, and past the start of this leader's epoch, so
    // a replica with a divergent old-epoch tail is never counted.
    if (f.leo >= this.hw && f.leo >= this.leaderEpochStartOffset) this.propose([...this.isr, f.id], 'expand');
  }

  /** Proposes dropping followers not caught up within `lagMaxMs` (replica.lag.time.max.ms) and not at the LEO. */
  maybeShrink(lagMaxMs: number): void {
    if (this.pending) return;
    const now = this.deps.now();
    const leo = this.host.logEndOffset;
    const out: number[] = [];
    for (const id of this.isr) {
      if (id === this.host.brokerId) continue;
      const f = this.followers.get(id);
      if (!f) continue;
      if (f.leo !== leo && now - f.lastCaughtUpTimeMs > lagMaxMs) out.push(id);
    }
    if (out.length > 0) this.propose(this.isr.filter((id) => !out.includes(id)), 'shrink');
  }

  private propose(isr: number[], kind: 'expand' | 'shrink'): void {
    const host = this.host;
    const ordered = this.replicas.filter((id) => isr.includes(id));
    const pending = { proposed: ordered, maximal: [...new Set([...this.isr, ...ordered])] };
    this.pending = pending;
    const req: AlterPartitionRequest = {
      topic: host.topic,
      partition: host.partition,
      brokerId: host.brokerId,
      leaderEpoch: host.leaderEpoch,
      partitionEpoch: host.partitionEpoch,
      isr: ordered,
    };
    let p: Promise<PartitionAssignment>;
    try {
      p = this.deps.proposeIsr(req);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (a) => {
        if (this.pending === pending) this.pending = null;
        if (this.deps.isClosed()) return;
        const r = host.applyAssignment(a);
        if (r !== 'stale' && sameMembers(a.isr, ordered)) {
          if (kind === 'shrink') this.counters.isrShrinks++;
          else this.counters.isrExpands++;
        }
      },
      () => {
        // Fenced or stale: the controller's state reaches this broker by heartbeat; propose
        // again from there (tick / next fetch) if still needed.
        if (this.pending === pending) this.pending = null;
        this.counters.isrProposalsRejected++;
      },
    );
  }

  /** HW = min LEO over the maximal ISR, only ever forward. True when it moved. */
  advanceHw(): boolean {
    let min = this.host.logEndOffset;
    for (const id of this.maximal) {
      if (id === this.host.brokerId) continue;
      const f = this.followers.get(id);
      const leo = f ? f.leo : -1;
      if (leo < min) min = leo;
    }
    if (min <= this.hw) return false;
    this.hw = min;
    return true;
  }

  followerMetrics(): FollowerMetrics[] {
    return [...this.followers.values()].map((f) => ({ id: f.id, leo: f.leo, lastCaughtUpTimeMs: f.lastCaughtUpTimeMs, inIsr: this.isr.includes(f.id) }));
  }
}
