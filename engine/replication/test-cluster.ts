// Test support (not product code): three real Partitions on real Logs in one process, joined by
// direct calls instead of HTTP, with a real Controller and an injected clock. The "network" is
// explicit: nothing moves until a test calls fetch/heartbeat/tick, and a paused broker (SIGSTOP)
// neither sends nor answers. engine/server replaces this seam with HTTP and timers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeBatch } from '../records/index.ts';
import type { LogConfig } from '../storage/types.ts';
import { Controller } from './controller.ts';
import { BrokerError } from './errors.ts';
import { Partition } from './partition.ts';

export interface SimClusterOptions {
  brokers?: number[];
  replicationFactor?: number;
  minInsyncReplicas?: number;
  replicaLagTimeMaxMs?: number;
  sessionTimeoutMs?: number;
  uncleanLeaderElection?: boolean;
  /** eligible.leader.replicas (default off: these simulations study the rules without it). */
  eligibleLeaderReplicas?: boolean;
  logConfig?: Partial<LogConfig>;
  topic?: string;
}

export interface SimNode {
  id: number;
  dataDir: string;
  partition: Partition | null;
  paused: boolean;
}

export function batchOf(...values: string[]): Buffer {
  return encodeBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), firstTimestamp: 1_700_000_000_000 });
}

/** Lets promise callbacks (ISR proposals, purgatory completions) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

export class SimCluster {
  t = 1_000_000;
  readonly now = (): number => this.t;
  readonly controller: Controller;
  readonly nodes = new Map<number, SimNode>();
  readonly topic: string;
  readonly root: string;
  readonly opts: Required<Omit<SimClusterOptions, 'logConfig' | 'topic'>> & { logConfig: Partial<LogConfig> };
  minInsyncReplicas: number;

  constructor(opts: SimClusterOptions = {}) {
    const brokers = opts.brokers ?? [1, 2, 3];
    this.opts = {
      brokers,
      replicationFactor: opts.replicationFactor ?? brokers.length,
      minInsyncReplicas: opts.minInsyncReplicas ?? 2,
      replicaLagTimeMaxMs: opts.replicaLagTimeMaxMs ?? 10_000,
      sessionTimeoutMs: opts.sessionTimeoutMs ?? 1500,
      uncleanLeaderElection: opts.uncleanLeaderElection ?? false,
      eligibleLeaderReplicas: opts.eligibleLeaderReplicas ?? false,
      logConfig: opts.logConfig ?? {},
    };
    this.minInsyncReplicas = this.opts.minInsyncReplicas;
    this.topic = opts.topic ?? 't';
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-repl-'));
    this.controller = new Controller({
      sessionTimeoutMs: this.opts.sessionTimeoutMs,
      uncleanLeaderElection: this.opts.uncleanLeaderElection,
      eligibleLeaderReplicas: this.opts.eligibleLeaderReplicas,
      minInsyncReplicas: this.opts.minInsyncReplicas,
      now: this.now,
    });
    for (const id of brokers) {
      const dataDir = path.join(this.root, `broker-${id}`);
      this.nodes.set(id, { id, dataDir, partition: null, paused: false });
      this.controller.registerBroker(id, `sim://${id}`);
    }
    this.controller.createTopic(this.topic, 1, this.opts.replicationFactor, brokers);
    for (const id of brokers) this.start(id);
    this.heartbeatAll();
  }

  private open(node: SimNode): Partition {
    return Partition.open({
      topic: this.topic,
      partition: 0,
      brokerId: node.id,
      dataDir: node.dataDir,
      logConfig: this.opts.logConfig,
      minInsyncReplicas: this.minInsyncReplicas,
      replicaLagTimeMaxMs: this.opts.replicaLagTimeMaxMs,
      now: this.now,
      proposeIsr: async (req) => this.controller.alterPartition(req),
    });
  }

  node(id: number): SimNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`sim: no broker ${id}`);
    return n;
  }

  /** The Partition of a running broker (throws when it is down). */
  p(id: number): Partition {
    const part = this.node(id).partition;
    if (!part) throw new Error(`sim: broker ${id} is down`);
    return part;
  }

  up(id: number): boolean {
    const n = this.node(id);
    return n.partition !== null && !n.paused;
  }

  /** The controller's leader id (-1 when offline). */
  get leaderId(): number {
    return this.controller.assignment(this.topic, 0)!.leader;
  }

  get controllerIsr(): number[] {
    return this.controller.assignment(this.topic, 0)!.isr;
  }

  leader(): Partition {
    return this.p(this.leaderId);
  }

  start(id: number): void {
    const n = this.node(id);
    if (n.partition) throw new Error(`sim: broker ${id} is already running`);
    n.partition = this.open(n);
    n.paused = false;
  }

  /** Clean stop: the partition closes (purgatory fails, HW checkpointed); the files stay. */
  stop(id: number): void {
    const n = this.node(id);
    n.partition?.close();
    n.partition = null;
  }

  pause(id: number): void {
    this.node(id).paused = true;
  }

  resume(id: number): void {
    this.node(id).paused = false;
  }

  advance(ms: number): void {
    this.t += ms;
  }

  heartbeat(id: number): void {
    if (!this.up(id)) return;
    const ans = this.controller.heartbeat(id, `sim://${id}`);
    for (const a of ans.assignments) this.p(id).applyAssignment(a);
  }

  heartbeatAll(): void {
    for (const id of this.nodes.keys()) this.heartbeat(id);
  }

  /**
   * One fetch round of a follower: truncate by leader epoch if needed (asking the leader as
   * many times as it takes), then (unless truncateOnly) fetch from its LEO and append. Returns bytes moved, or -1
   * when nothing could happen (down, paused, not a follower, leader unreachable, fenced).
   */
  fetch(id: number, maxBytes = 1 << 20, truncateOnly = false): number {
    if (!this.up(id)) return -1;
    const f = this.p(id);
    if (f.role !== 'follower') return -1;
    const leaderNode = this.nodes.get(f.leaderId);
    if (!leaderNode || !this.up(leaderNode.id)) return -1;
    const l = leaderNode.partition!;
    try {
      for (let round = 0; f.needsTruncation; round++) {
        if (round > 50) throw new Error(`sim: broker ${id} did not finish truncation in 50 rounds`);
        f.truncateByLeaderEpoch(l.endOffsetForEpoch(f.latestLogEpoch));
      }
      // A broker can die between its truncation and its first fetch (KIP-101's first scenario).
      if (truncateOnly) return 0;
      const r = l.readForReplica(id, f.logEndOffset, maxBytes, f.leaderEpoch);
      f.appendAsFollower(r.data, r.highWatermark);
      return r.data.length;
    } catch (e) {
      // A leader that lost leadership or a follower with a stale epoch: wait for the next heartbeat.
      if (e instanceof BrokerError && (e.code === 'NOT_LEADER_OR_FOLLOWER' || e.code === 'FENCED_LEADER_EPOCH')) return -1;
      throw e;
    }
  }

  fetchAll(): number {
    let moved = 0;
    for (const id of this.nodes.keys()) moved += Math.max(0, this.fetch(id));
    return moved;
  }

  /** Heartbeats, controller tick, partition ticks (ISR shrink, HW checkpoint), then lets promises run. */
  async tick(ms = 100): Promise<void> {
    this.advance(ms);
    this.heartbeatAll();
    this.controller.tick();
    this.heartbeatAll();
    for (const n of this.nodes.values()) if (this.up(n.id)) n.partition!.tick();
    await settle();
  }

  /** Fetch rounds until nothing moves and every follower has seen the final HW. */
  async replicate(maxRounds = 50): Promise<void> {
    for (let i = 0; i < maxRounds; i++) {
      const moved = this.fetchAll();
      await settle();
      const moved2 = this.fetchAll();
      await settle();
      if (moved === 0 && moved2 === 0) return;
    }
    throw new Error(`sim: replication did not settle in ${maxRounds} rounds`);
  }

  close(): void {
    for (const n of this.nodes.values()) {
      n.partition?.close();
      n.partition = null;
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
