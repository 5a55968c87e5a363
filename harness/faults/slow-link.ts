// Fault kind slow-link: each victim's link to the lab bridge capped and/or lossy for `duration`,
// then restored, through the cluster's lab network (harness/net/slow-link.ts: tc tbf on both
// ends of the node's veth for `rate:`, nft numgen drops for `loss:`). Every link of the broker
// is hit (clients, replication, controller: one veth). `delay:` is refused at `scenario check`
// with the reason: this host's kernel has no netem (linkDelayProblem()), and the lab has no
// other delay mechanism.
import type { CutInfo, FaultableCluster } from '../targets/types.ts';
import { applyHealable, labOf } from './lab-fault.ts';
import type { SlowLinkSpec } from '../net/slow-link.ts';
import type { FaultContext } from './fault-context.ts';

export async function deliverSlowLink(cluster: FaultableCluster, victims: number[], ctx: FaultContext): Promise<CutInfo> {
  const net = labOf(cluster, 'slow-link');
  const entry = (ctx.fault ?? {}) as { rate?: number; loss?: number };
  const spec: SlowLinkSpec = { ...(entry.rate !== undefined ? { rateMbit: entry.rate } : {}), ...(entry.loss !== undefined ? { lossPercent: entry.loss } : {}) };
  const atMs = Date.now();
  await applyHealable(
    'slow-link',
    ctx,
    victims.map((id) => () => {
      const link = net.links[id];
      if (!link) throw new Error(`fault slow-link: broker ${id} is not in the lab network`);
      return net.lab.slowLink(link.node, spec);
    }),
  );
  return { brokerIds: victims, atMs, slowLink: spec };
}
