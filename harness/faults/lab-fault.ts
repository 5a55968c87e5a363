// What the lab network's fault kinds (partition.ts, slow-link.ts) share: the cluster's lab
// network, and the heal of every rule set an entry put in force, kept in the entry's context
// (FaultContext.held) from its start to its heal.
import type { ActiveNetFault } from '../net/lab-network.ts';
import type { ClusterLabNetwork, FaultableCluster } from '../targets/types.ts';
import type { FaultContext } from './fault-context.ts';

export function labOf(cluster: FaultableCluster, kind: string): ClusterLabNetwork {
  const net = cluster.labNetwork?.() ?? null;
  if (!net) throw new Error(`fault ${kind}: this cluster is not in the lab network (cluster.network: namespaces, which scenario check sets for a ${kind})`);
  return net;
}

/**
 * Applies `steps` in order, each adding one fault to the lab; ctx.held.heal heals every one
 * added (also those of a start that failed halfway, healed at once before the error goes on).
 */
export async function applyHealable(kind: string, ctx: FaultContext, steps: Array<() => Promise<ActiveNetFault>>): Promise<void> {
  const active: ActiveNetFault[] = [];
  ctx.held.heal = async () => {
    const r = await Promise.allSettled(active.map((f) => f.heal()));
    const failed = r.flatMap((x) => (x.status === 'rejected' ? [String(x.reason)] : []));
    if (failed.length) throw new Error(`fault ${kind}: heal: ${failed.join('; ')}`);
  };
  try {
    for (const step of steps) active.push(await step());
  } catch (err) {
    await ctx.held.heal().catch(() => undefined);
    throw err;
  }
}
