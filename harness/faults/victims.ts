// Which brokers a fault hits. A scenario names a broker by its index in the cluster (0 .. N-1,
// as the scenario validator checks); the cluster's ids may start elsewhere (the local cluster
// numbers brokers from 1). `leader` is the leader of partition 0 at the moment of the fault;
// `followers` are that leader's in-sync followers at that moment, as the cluster's metadata
// (the leader, or the controller) says through the client driver.
import type { FaultVictims } from '../model/scenario.ts';
import type { FaultableCluster } from '../targets/types.ts';
import type { ClusterClient } from '../drivers/types.ts';

export type IsrSource = Pick<ClusterClient, 'inSyncReplicas'>;

export async function resolveVictims(target: FaultVictims, cluster: FaultableCluster, topic: string, isr?: IsrSource): Promise<number[]> {
  const ids = cluster.brokers.map((b) => b.id);
  if (target === 'all') return ids;
  if (typeof target === 'object') {
    const indexes = 'broker' in target ? [target.broker] : target.brokers;
    return indexes.map((i) => {
      const id = ids[i];
      if (id === undefined) throw new Error(`fault target broker ${i}: expected an index from 0 to ${ids.length - 1}`);
      return id;
    });
  }
  const leader = cluster.leaderId(topic, 0);
  if (leader === null) throw new Error(`fault target ${target}: ${topic}-0 has no leader at the moment of the fault`);
  if (target === 'leader') return [leader];
  if (!isr?.inSyncReplicas) throw new Error(`fault target ${target}: no metadata source to read ${topic}-0's ISR from (the client driver reads no ISR)`);
  const inSync = await isr.inSyncReplicas(topic, 0);
  if (inSync === null) throw new Error(`fault target ${target}: ${topic}-0 has no leader at the moment of the fault`);
  const followers = inSync.filter((id) => id !== leader);
  if (target === 'followers' || target === 'one') {
    if (followers.length === 0) throw new Error(`fault target ${target}: ${topic}-0's leader ${leader} has no in-sync follower at the moment of the fault (ISR [${inSync.join(', ')}])`);
    return target === 'one' ? [followers[0]!] : followers;
  }
  const others = ids.filter((id) => id !== leader && !followers.includes(id));
  if (target === 'minority') return [...followers, ...others, leader].slice(0, Math.max(1, Math.floor((ids.length - 1) / 2)));
  return [leader, ...followers, ...others].slice(0, Math.floor(ids.length / 2) + 1);
}

export function describeVictims(target: FaultVictims): string {
  if (target === 'all') return 'all brokers';
  if (target === 'leader') return 'the leader';
  if (target === 'followers') return "the leader's in-sync followers";
  if (target === 'one') return 'one in-sync follower';
  if (target === 'minority') return 'a minority (followers first)';
  if (target === 'majority') return 'a majority (the leader and its followers first)';
  if ('brokers' in target) return `brokers #${target.brokers.join(', #')}`;
  return `broker #${target.broker}`;
}
