// Which brokers a fault hits. A scenario names a broker by its index in the cluster (0 .. N-1,
// as the scenario validator checks); the cluster's ids may start elsewhere (the local cluster
// numbers brokers from 1). `leader` is the leader of partition 0 at the moment of the fault.
import type { FaultVictims } from '../scenario/types.ts';
import type { FaultableCluster } from '../targets/types.ts';

export function resolveVictims(target: FaultVictims, cluster: FaultableCluster, topic: string): number[] {
  const ids = cluster.brokers.map((b) => b.id);
  if (target === 'all') return ids;
  if (target === 'leader') {
    const leader = cluster.leaderId(topic, 0);
    if (leader === null) throw new Error(`fault target leader: ${topic}-0 has no leader at the moment of the fault`);
    return [leader];
  }
  const id = ids[target.broker];
  if (id === undefined) throw new Error(`fault target broker ${target.broker}: expected an index from 0 to ${ids.length - 1}`);
  return [id];
}

export function describeVictims(target: FaultVictims): string {
  if (target === 'all') return 'all brokers';
  if (target === 'leader') return 'the leader';
  return `broker #${target.broker}`;
}
