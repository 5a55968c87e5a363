import { BrokerError } from './errors.ts';
import { electionReason, elrText, planPartitionChange, type ElectionRules, type PartitionChangeRequest } from './partition-change.ts';
import type { AlterPartitionRequest, PartitionAssignment } from './types.ts';

export type { AlterPartitionRequest, PartitionAssignment } from './types.ts';

export interface ControllerOptions {
  /** A broker with no heartbeat for this long is fenced (Kafka: broker.session.timeout.ms). Default 1500. */
  sessionTimeoutMs?: number;
  /** unclean.leader.election.enable: elect an out-of-sync replica when no ISR member is alive. */
  uncleanLeaderElection: boolean;
  /** eligible.leader.replicas (KIP-966): partition-change.ts says what it changes. */
  eligibleLeaderReplicas: boolean;
  /** min.insync.replicas, which the ELR rules need (Kafka's cluster-level value). Default 1. */
  minInsyncReplicas?: number;
  now?: () => number;
}

export interface ControllerBroker {
  id: number;
  url: string;
  /** The broker's Kafka protocol listener, host:port ('' when it has none). */
  kafka?: string;
  alive: boolean;
  lastHeartbeatMs: number;
  /** The broker process's incarnation (a random id per process start), when it sends one. */
  incarnation?: string;
}

export type ControllerEventKind = 'election' | 'isr-change' | 'elr-change' | 'fenced' | 'unfenced' | 'unclean-shutdown' | 'reassignment';

export interface ControllerEvent {
  atMs: number;
  /** '' for broker-level events (fenced / unfenced). */
  topic: string;
  /** -1 for broker-level events. */
  partition: number;
  kind: ControllerEventKind;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  /** The eligible leader replicas after the event (with eligible.leader.replicas on). */
  elr?: number[];
  unclean?: boolean;
  /** The broker a fenced/unfenced/unclean-shutdown event is about. */
  brokerId?: number;
  reason: string;
}

export interface ControllerState {
  brokers: ControllerBroker[];
  partitions: PartitionAssignment[];
  events: ControllerEvent[];
}

export interface HeartbeatAnswer {
  assignments: PartitionAssignment[];
  brokers: Array<{ id: number; url: string; alive: boolean; kafka?: string }>;
  /** Every partition of the cluster (Kafka Metadata answers about all of them). */
  partitions?: PartitionAssignment[];
  /** unclean.leader.election.enable, the controller's (brokers answer DescribeConfigs with it). */
  uncleanLeaderElection?: boolean;
}

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

function copyAssignment(p: PartitionAssignment): PartitionAssignment {
  return { ...p, replicas: [...p.replicas], isr: [...p.isr], ...(p.elr ? { elr: [...p.elr] } : {}) };
}

const sameIds = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * Cluster metadata and leadership, as Kafka's KRaft controller keeps it: brokers register and
 * heartbeat; a broker whose session expires is fenced, leaves every ISR (unless it is the last
 * member, KIP-841) and loses its leaderships to the first alive ISR replica with leaderEpoch+1.
 * A broker that comes back as a new process (another incarnation) before its session expired
 * has its previous incarnation fenced first, so the new process, whose log may lack what the old
 * one acknowledged, rejoins as a follower instead of carrying on as the leader it was; one that
 * comes back without proof of a clean shutdown is, with eligible leader replicas on, taken out of
 * every ISR and ELR (KIP-966). Leader, ISR and ELR changes follow partition-change.ts.
 * Pure logic: time comes from `now`, every decision is appended to `events`, no timers.
 */
export class Controller {
  private readonly sessionTimeoutMs: number;
  private readonly rules: ElectionRules;
  private readonly now: () => number;
  private readonly brokers = new Map<number, ControllerBroker>();
  private readonly partitions = new Map<string, PartitionAssignment>();
  private readonly events: ControllerEvent[] = [];

  constructor(opts: ControllerOptions) {
    this.sessionTimeoutMs = opts.sessionTimeoutMs ?? 1500;
    if (!(this.sessionTimeoutMs > 0)) throw new Error(`controller: sessionTimeoutMs must be > 0, got ${opts.sessionTimeoutMs}`);
    const minInsyncReplicas = opts.minInsyncReplicas ?? 1;
    if (!Number.isInteger(minInsyncReplicas) || minInsyncReplicas < 1) throw new Error(`controller: minInsyncReplicas must be an integer >= 1, got ${opts.minInsyncReplicas}`);
    this.rules = { eligibleLeaderReplicas: opts.eligibleLeaderReplicas, uncleanLeaderElection: opts.uncleanLeaderElection, minInsyncReplicas };
    this.now = opts.now ?? Date.now;
  }

  /**
   * Places replicas as Kafka's rack-unaware assignment does, with a fixed start index of 0 so
   * the layout is deterministic: partition p starts at broker p mod n, the other replicas follow
   * with a shift that grows every n partitions, so leaders and followers spread evenly.
   */
  createTopic(name: string, partitions: number, replicationFactor: number, brokerIds: number[]): void {
    if (typeof name !== 'string' || !TOPIC_NAME.test(name) || name === '.' || name === '..') {
      throw new BrokerError('INVALID_TOPIC_EXCEPTION', `createTopic: topic name ${JSON.stringify(name)} must be 1-249 characters of [a-zA-Z0-9._-]`);
    }
    if (this.hasTopic(name)) throw new BrokerError('TOPIC_ALREADY_EXISTS', `createTopic: topic ${name} already exists`);
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new BrokerError('INVALID_PARTITIONS', `createTopic ${name}: partitions must be an integer >= 1, got ${partitions}`);
    }
    const ids = [...new Set(brokerIds)].sort((a, b) => a - b);
    if (ids.length !== brokerIds.length || ids.some((id) => !Number.isInteger(id) || id < 0)) {
      throw new BrokerError('INVALID_REQUEST', `createTopic ${name}: broker ids must be distinct integers >= 0, got ${JSON.stringify(brokerIds)}`);
    }
    if (!Number.isInteger(replicationFactor) || replicationFactor < 1 || replicationFactor > ids.length) {
      throw new BrokerError(
        'INVALID_REPLICATION_FACTOR',
        `createTopic ${name}: replication factor must be an integer in 1..${ids.length} (the brokers given), got ${replicationFactor}`,
      );
    }
    const n = ids.length;
    let shift = 0;
    for (let p = 0; p < partitions; p++) {
      if (p > 0 && p % n === 0) shift++;
      const first = p % n;
      const replicas = [ids[first]];
      for (let j = 0; j < replicationFactor - 1; j++) replicas.push(ids[(first + 1 + ((shift + j) % (n - 1))) % n]);
      // Brokers already known to be dead do not start in the ISR; unknown ones (not yet
      // registered) do, as Kafka assumes for a cluster that is still starting.
      const usable = replicas.filter((id) => this.brokers.get(id)?.alive !== false);
      const a: PartitionAssignment = {
        topic: name,
        partition: p,
        replicas,
        leader: usable.length > 0 ? usable[0] : -1,
        leaderEpoch: 0,
        partitionEpoch: 0,
        isr: usable.length > 0 ? usable : [...replicas],
        ...(this.rules.eligibleLeaderReplicas ? { elr: [] } : {}),
      };
      this.partitions.set(`${name}\u0000${p}`, a);
      this.record(a, 'election', `topic ${name} created`);
    }
  }

  hasTopic(name: string): boolean {
    for (const p of this.partitions.values()) if (p.topic === name) return true;
    return false;
  }

  /**
   * `incarnation`: the broker process's id for this start (absent: the broker sends none, and a
   * restart is only seen when its session expires). `cleanShutdown`: the new process found every
   * partition log of its previous run closed cleanly (absent: unknown, taken as unclean, as Kafka
   * takes a registration without PreviousBrokerEpoch).
   */
  registerBroker(id: number, url: string, kafka?: string, incarnation?: string, cleanShutdown?: boolean): void {
    if (!Number.isInteger(id) || id < 0) throw new BrokerError('INVALID_REQUEST', `registerBroker: broker id must be an integer >= 0, got ${id}`);
    const b = this.brokers.get(id);
    const now = this.now();
    if (!b) {
      this.brokers.set(id, { id, url, alive: true, lastHeartbeatMs: now, ...(kafka ? { kafka } : {}), ...(incarnation ? { incarnation } : {}) });
      return;
    }
    if (incarnation !== undefined && b.incarnation !== undefined && incarnation !== b.incarnation && b.alive) {
      // A crash and a restart within the session timeout: the old process never said goodbye.
      const why = `a new process (incarnation ${b.incarnation} -> ${incarnation}) registered ${now - b.lastHeartbeatMs} ms after the last heartbeat, within the session timeout of ${this.sessionTimeoutMs} ms`;
      this.fence(b, now, why);
    }
    if (incarnation !== undefined && b.incarnation !== undefined && incarnation !== b.incarnation && cleanShutdown !== true) this.uncleanShutdown(b, now);
    if (incarnation !== undefined) b.incarnation = incarnation;
    b.url = url;
    if (kafka) b.kafka = kafka;
    b.lastHeartbeatMs = now;
    if (!b.alive) this.unfence(b);
  }

  /**
   * A broker is alive. Answers with every partition it replicates. A broker that had been
   * fenced (or came back as a new incarnation) is unfenced but stays out of every ISR until a
   * leader proposes it back; partitions that were offline waiting for it (it was their last ISR
   * member) elect it at once.
   */
  heartbeat(brokerId: number, url: string, kafka?: string, incarnation?: string, cleanShutdown?: boolean): HeartbeatAnswer {
    this.registerBroker(brokerId, url, kafka, incarnation, cleanShutdown);
    this.electLeaderless();
    return this.heartbeatAnswer(brokerId);
  }

  heartbeatAnswer(brokerId: number): HeartbeatAnswer {
    const assignments: PartitionAssignment[] = [];
    for (const p of this.partitions.values()) if (p.replicas.includes(brokerId)) assignments.push(copyAssignment(p));
    return {
      assignments,
      brokers: [...this.brokers.values()].map((b) => ({ id: b.id, url: b.url, alive: b.alive, ...(b.kafka ? { kafka: b.kafka } : {}) })),
      partitions: [...this.partitions.values()].map(copyAssignment),
      uncleanLeaderElection: this.rules.uncleanLeaderElection,
    };
  }

  /**
   * AlterPartitionReassignments, the part durolab does: a new order of the same replicas (the
   * first is the preferred leader). durolab moves no data between brokers, so a reassignment
   * that changes the replica set is refused; the leader stays until a preferred election.
   */
  reorderReplicas(topic: string, partition: number, replicas: number[]): PartitionAssignment {
    const p = this.partitions.get(`${topic}\u0000${partition}`);
    const what = `reassign ${topic}-${partition}`;
    if (!p) throw new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `${what}: no such partition`);
    const same = replicas.length === p.replicas.length && new Set(replicas).size === replicas.length && replicas.every((id) => p.replicas.includes(id));
    if (!same) {
      throw new BrokerError('INVALID_REPLICA_ASSIGNMENT', `${what}: replicas ${JSON.stringify(replicas)} must be an order of the current ${JSON.stringify(p.replicas)} (durolab moves no data between brokers)`);
    }
    if (replicas.every((id, i) => id === p.replicas[i])) return copyAssignment(p);
    p.replicas = [...replicas];
    p.isr = p.replicas.filter((id) => p.isr.includes(id));
    p.partitionEpoch++;
    this.record(p, 'reassignment', `replicas reordered to [${replicas.join(',')}] (preferred leader ${replicas[0]})`);
    return copyAssignment(p);
  }

  /**
   * ElectLeaders PREFERRED: the first replica becomes the leader if it is alive and in the ISR,
   * with leaderEpoch+1, as Kafka's controller does for a planned move (the old leader is told by
   * its next heartbeat and becomes a follower that truncates to the new leader's log).
   */
  electPreferred(topic: string, partition: number): PartitionAssignment {
    const p = this.partitions.get(`${topic}\u0000${partition}`);
    const what = `preferred election ${topic}-${partition}`;
    if (!p) throw new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `${what}: no such partition`);
    const preferred = p.replicas[0];
    if (p.leader === preferred) throw new BrokerError('ELECTION_NOT_NEEDED', `${what}: broker ${preferred} already leads`);
    if (!p.isr.includes(preferred) || this.brokers.get(preferred)?.alive !== true) {
      throw new BrokerError('PREFERRED_LEADER_NOT_AVAILABLE', `${what}: preferred replica ${preferred} is ${p.isr.includes(preferred) ? 'fenced' : `not in the ISR [${p.isr.join(',')}]`}`);
    }
    const was = p.leader;
    p.leader = preferred;
    p.leaderEpoch++;
    p.partitionEpoch++;
    this.record(p, 'election', `preferred election: ${preferred} replaces ${was} (planned move)`);
    return copyAssignment(p);
  }

  /**
   * AlterPartition from the leader. Accepted only from the current leader at the current leader
   * epoch and partition epoch (otherwise the leader is stale and must wait for the new state);
   * the ISR must contain the leader, be a subset of the replicas, and may add only alive brokers.
   */
  alterPartition(req: AlterPartitionRequest): PartitionAssignment {
    const p = this.partitions.get(`${req.topic}\u0000${req.partition}`);
    const what = `alterPartition ${req.topic}-${req.partition} from broker ${req.brokerId}`;
    if (!p) throw new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `${what}: no such partition`);
    if (req.brokerId !== p.leader) {
      throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `${what}: the leader is broker ${p.leader}`, { leader: p.leader, leaderEpoch: p.leaderEpoch });
    }
    if (req.leaderEpoch !== p.leaderEpoch || req.partitionEpoch !== p.partitionEpoch) {
      throw new BrokerError(
        'FENCED_LEADER_EPOCH',
        `${what}: stale state (leaderEpoch ${req.leaderEpoch}, partitionEpoch ${req.partitionEpoch}); current is leaderEpoch ${p.leaderEpoch}, partitionEpoch ${p.partitionEpoch}`,
        { leader: p.leader, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch },
      );
    }
    if (!Array.isArray(req.isr)) throw new BrokerError('INVALID_REQUEST', `${what}: isr must be an array of broker ids`);
    const isr = [...req.isr];
    if (new Set(isr).size !== isr.length || !isr.includes(p.leader) || isr.some((id) => !p.replicas.includes(id))) {
      throw new BrokerError(
        'INVALID_REQUEST',
        `${what}: isr ${JSON.stringify(isr)} must be distinct replicas of ${JSON.stringify(p.replicas)} including the leader ${p.leader}`,
      );
    }
    const added = isr.filter((id) => !p.isr.includes(id));
    const ineligible = added.filter((id) => this.brokers.get(id)?.alive !== true);
    if (ineligible.length > 0) {
      throw new BrokerError('INELIGIBLE_REPLICA', `${what}: broker(s) ${ineligible.join(', ')} are fenced and cannot join the ISR`, {
        ineligible,
      });
    }
    const removed = p.isr.filter((id) => !isr.includes(id));
    if (added.length === 0 && removed.length === 0) return copyAssignment(p);
    const parts = [removed.length ? `shrink -[${removed.join(',')}]` : '', added.length ? `expand +[${added.join(',')}]` : ''].filter(Boolean);
    this.change(p, { targetIsr: isr, acceptable: (id) => this.alive(id) }, `alter-partition from leader ${p.leader}: ${parts.join(' ')}`);
    return copyAssignment(p);
  }

  /**
   * Fences brokers whose session expired, then elects leaders where needed. Brokers are handled
   * in id order so that the outcome of several expiring at once is deterministic.
   */
  tick(): void {
    const now = this.now();
    const expired = [...this.brokers.values()]
      .filter((b) => b.alive && now - b.lastHeartbeatMs > this.sessionTimeoutMs)
      .sort((a, b) => a.id - b.id);
    // All of them are dead before any election, so none of them is elected only to be fenced next.
    for (const b of expired) b.alive = false;
    for (const b of expired) this.fence(b, now);
    this.electLeaderless();
  }

  state(): ControllerState {
    return {
      brokers: [...this.brokers.values()].sort((a, b) => a.id - b.id).map((b) => ({ ...b })),
      partitions: [...this.partitions.values()].map(copyAssignment),
      events: this.events.map((e) => ({ ...e, isr: [...e.isr] })),
    };
  }

  /** One partition's current state, or undefined. */
  assignment(topic: string, partition: number): PartitionAssignment | undefined {
    const p = this.partitions.get(`${topic}\u0000${partition}`);
    return p && copyAssignment(p);
  }

  private alive(id: number): boolean {
    return this.brokers.get(id)?.alive === true;
  }

  /** Kafka's handleBrokerFenced: out of every ISR (with ELR off, except as its last member, KIP-841); its leaderships move. */
  private fence(b: ControllerBroker, now: number, why?: string): void {
    b.alive = false;
    const reason = `broker ${b.id} fenced: ${why ?? `no heartbeat for ${now - b.lastHeartbeatMs} ms (session timeout ${this.sessionTimeoutMs} ms)`}`;
    this.brokerEvent('fenced', b, reason, now);
    for (const p of this.partitions.values()) {
      if (!p.isr.includes(b.id) && p.leader !== b.id) continue;
      this.change(p, { targetIsr: p.isr.filter((id) => id !== b.id), acceptable: (id) => this.alive(id) }, reason);
    }
  }

  /**
   * A new process of broker `b` registered without proof of a clean shutdown: its logs may have
   * lost their unflushed tail. With ELR on it leaves every ISR and ELR and cannot be elected in
   * that change (Kafka's handleBrokerUncleanShutdown); with it off, the fence was all there is.
   */
  private uncleanShutdown(b: ControllerBroker, now: number): void {
    const elr = this.rules.eligibleLeaderReplicas;
    const reason = `broker ${b.id} registered a new process without a clean shutdown (its logs may have lost their unflushed tail)`;
    const what = elr ? 'out of every ISR and ELR (KIP-966)' : 'handled as a fence (eligible.leader.replicas off)';
    this.brokerEvent('unclean-shutdown', b, `${reason}: ${what}`, now);
    if (!elr) return;
    for (const p of this.partitions.values()) {
      if (!p.isr.includes(b.id) && !(p.elr ?? []).includes(b.id)) continue;
      this.change(p, { targetIsr: p.isr.filter((id) => id !== b.id), acceptable: (id) => id !== b.id && this.alive(id), uncleanShutdown: b.id }, reason);
    }
  }

  private unfence(b: ControllerBroker): void {
    b.alive = true;
    this.brokerEvent('unfenced', b, `broker ${b.id} heartbeats again`, this.now());
  }

  private brokerEvent(kind: ControllerEventKind, b: ControllerBroker, reason: string, atMs: number): void {
    this.events.push({ atMs, topic: '', partition: -1, kind, leader: -1, leaderEpoch: -1, isr: [], brokerId: b.id, reason });
  }

  /** Gives every partition without an alive leader the best leader available now. */
  private electLeaderless(): void {
    for (const p of this.partitions.values()) {
      if (p.leader === -1 || this.brokers.get(p.leader)?.alive === false) {
        // A clean candidate (an ISR or ELR member that came back) or, if enabled, an unclean one may exist now.
        const reason = p.leader === -1 ? 'partition offline' : `leader ${p.leader} is fenced`;
        this.change(p, { targetIsr: p.isr, acceptable: (id) => this.alive(id) }, reason, true);
      }
    }
  }

  /**
   * Applies planPartitionChange (partition-change.ts): a new leader bumps the leader epoch (which
   * fences the old leader's requests), any change bumps the partition epoch, and one event says
   * what happened. `onlyIfLeaderChanges`: nothing happens unless the leader does.
   */
  private change(p: PartitionAssignment, req: PartitionChangeRequest, reason: string, onlyIfLeaderChanges = false): void {
    const next = planPartitionChange(p, req, this.rules);
    const leaderChanged = next.leader !== p.leader;
    if (onlyIfLeaderChanges && !leaderChanged) return;
    const isrChanged = !sameIds(next.isr, p.isr);
    const elrChanged = !sameIds(next.elr, p.elr ?? []) || next.lastKnownLeader !== (p.lastKnownLeader ?? -1);
    if (!leaderChanged && !isrChanged && !elrChanged) return;
    p.leader = next.leader;
    p.isr = next.isr;
    if (this.rules.eligibleLeaderReplicas) p.elr = next.elr;
    if (next.lastKnownLeader >= 0) p.lastKnownLeader = next.lastKnownLeader;
    else delete p.lastKnownLeader;
    if (leaderChanged) p.leaderEpoch++;
    p.partitionEpoch++;
    const elr = elrChanged ? elrText(p) || ' ELR []' : '';
    if (leaderChanged) this.record(p, 'election', `${electionReason(reason, next.source, next.leader, this.rules)}${elr}`, next.source === 'unclean' || next.source === 'last-known-leader' || undefined);
    else this.record(p, isrChanged ? 'isr-change' : 'elr-change', `${reason}${elr}`);
  }

  private record(p: PartitionAssignment, kind: ControllerEventKind, reason: string, unclean?: boolean): void {
    const e: ControllerEvent = {
      atMs: this.now(),
      topic: p.topic,
      partition: p.partition,
      kind,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      isr: [...p.isr],
      ...(p.elr ? { elr: [...p.elr] } : {}),
      reason,
    };
    if (unclean) e.unclean = true;
    this.events.push(e);
  }
}
