// A planned leader move, as an operator makes one with Kafka's Admin API: for every partition of
// the topic that a victim leads, AlterPartitionReassignments puts an in-sync follower first in
// the replica list, then ElectLeaders PREFERRED makes it the leader. No broker stops. Apache
// Kafka and durolab's listener answer the same requests (harness/drivers/kafka/wire-admin.ts),
// so this module never knows which system it moves. The load keeps running until every broker
// serves the new leadership and a grace period has passed: what the old leader acknowledged in
// the hand-over is what the check then looks for.
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaWire, metadataFromAny, type ClusterMetadata } from '../drivers/kafka/wire.ts';
import { electPreferred, reorderReplicas } from '../drivers/kafka/wire-admin.ts';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';

/** The load goes on this long after every broker shows the new leaders (acks=1 writes the old leader took in the hand-over are answered by then). */
export const MOVE_GRACE_MS = 1000;
const MOVE_TIMEOUT_MS = 15_000;

export interface LeaderMove {
  partition: number;
  from: number;
  to: number;
  leaderEpochBefore: number;
}

function addresses(cluster: FaultableCluster): string[] {
  const out = cluster.brokers.map((b) => b.kafka).filter((a): a is string => typeof a === 'string');
  if (out.length === 0) throw new Error('fault move-leader: the brokers have no Kafka listener (the move goes through the Kafka admin API)');
  return out;
}

/** The moves a planned move of the victims' leaderships makes: each to the first in-sync follower in replica order. */
export function planMoves(md: ClusterMetadata, topic: string, victims: number[]): LeaderMove[] {
  const moves: LeaderMove[] = [];
  for (const p of md.partitions.filter((x) => x.topic === topic)) {
    if (!victims.includes(p.leader)) continue;
    const to = p.replicas.find((id) => id !== p.leader && p.isr.includes(id) && !victims.includes(id));
    if (to === undefined) {
      throw new Error(`fault move-leader: ${topic}-${p.partition} (leader ${p.leader}, replicas [${p.replicas.join(',')}], ISR [${p.isr.join(',')}]) has no in-sync follower to move to`);
    }
    moves.push({ partition: p.partition, from: p.leader, to, leaderEpochBefore: p.leaderEpoch });
  }
  if (moves.length === 0) throw new Error(`fault move-leader: broker(s) ${victims.join(', ')} lead no partition of ${topic}`);
  return moves;
}

export async function moveLeaders(cluster: FaultableCluster, victims: number[], topic: string): Promise<CutInfo & { moves: LeaderMove[] }> {
  const addrs = addresses(cluster);
  const md = await metadataFromAny(addrs, [topic]);
  const moves = planMoves(md, topic, victims);
  const wire = new KafkaWire(addrs[0]!, 10_000);
  let atMs = 0;
  try {
    for (const m of moves) {
      const p = md.partitions.find((x) => x.topic === topic && x.partition === m.partition)!;
      const order = [m.to, ...p.replicas.filter((id) => id !== m.to)];
      const r = await reorderReplicas(wire, topic, m.partition, order);
      if (r) throw new Error(`fault move-leader: ${r.message}`);
    }
    // Kafka applies a reassignment through its metadata log: the election waits until the new order is what the controller has.
    await waitFor(addrs, topic, (parts) => moves.every((m) => parts.find((x) => x.partition === m.partition)?.replicas[0] === m.to), 'the new replica order');
    atMs = Date.now();
    for (const m of moves) {
      const r = await electPreferred(wire, topic, m.partition);
      if (r) throw new Error(`fault move-leader: ${r.message}`);
    }
  } finally {
    wire.close();
  }
  // Every broker's Metadata names the new leader at a higher epoch (the old leader knows it has stepped down).
  await waitFor(addrs, topic, (parts) => moves.every((m) => {
    const p = parts.find((x) => x.partition === m.partition);
    return p !== undefined && p.leader === m.to && p.leaderEpoch > m.leaderEpochBefore;
  }), 'the new leaders', true);
  await sleep(MOVE_GRACE_MS);
  return { brokerIds: victims, atMs, moves };
}

async function waitFor(addrs: string[], topic: string, done: (parts: ClusterMetadata['partitions']) => boolean, what: string, everyBroker = false): Promise<void> {
  const deadline = Date.now() + MOVE_TIMEOUT_MS;
  let last = '';
  for (;;) {
    try {
      const views = everyBroker ? await Promise.all(addrs.map((a) => metadataFromAny([a], [topic]))) : [await metadataFromAny(addrs, [topic])];
      if (views.every((v) => done(v.partitions.filter((p) => p.topic === topic)))) return;
      last = views.map((v) => v.partitions.filter((p) => p.topic === topic).map((p) => `${p.partition}: leader ${p.leader} epoch ${p.leaderEpoch} replicas [${p.replicas.join(',')}]`).join('; ')).join(' | ');
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`fault move-leader: ${what} not in place within ${MOVE_TIMEOUT_MS / 1000} s (${last})`);
    await sleep(50);
  }
}
