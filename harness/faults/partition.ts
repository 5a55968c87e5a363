// Fault kind partition: traffic between the victims (`target`) and `from` dropped for
// `duration`, then healed, through the cluster's lab network (harness/net/partition.ts: nft
// DROP rules in the nodes' namespaces, both directions; each broker its own host). `from` is one
// of, or a list of:
//   rest        every other broker and the controller (durolab's: in the harness, cut on its
//               controller port; Kafka's: the other KRaft voters). The clients still reach the victims.
//   followers   the in-sync followers of partition 0's leader at the moment (as target: followers),
//               less the victims.
//   controller  the controller: durolab's in the harness (the bridge's address, its controller
//               port), Kafka's the other nodes' CONTROLLER listeners; on the controller link only.
//   clients     the harness, where the load's producers and the harness's reads run (root
//               namespace), on the client links only (durolab's controller, also in the harness, stays reachable).
//   N           the broker of index N (0 .. brokers-1, as target: N; not its id).
// `links` narrows the cut to some links' ports (replication, controller, clients), for every
// group; without it rest, followers and broker indexes cut all traffic, controller and clients
// their own link. A group the victims alone make up (the leader's followers when the victims are
// those followers) is empty at that moment: the entry fails rather than cut nothing.
import type { FaultContext } from './fault-context.ts';
import type { ClusterLabNetwork, CutInfo, FaultableCluster } from '../targets/types.ts';
import type { Endpoint, PartitionSpec } from '../net/partition.ts';
import { applyHealable, labOf } from './lab-fault.ts';
import { resolveVictims, type IsrSource } from './victims.ts';
import { type LinkName, type PartitionPeer } from '../net/partition-peers.ts';
import { LINK_PORTS } from './partition-checks.ts';

/** The brokers and endpoints of `from` at this moment, and the ports of each cut (one lab.partition per group). */
export interface PartitionPlan {
  victims: number[];
  /** Broker ids on the other side (any group). */
  brokers: number[];
  /** The controller is on the other side (rest, controller). */
  controller: boolean;
  /** The harness's clients are (clients). */
  clients: boolean;
  links: LinkName[] | null;
  specs: PartitionSpec[];
}

function portsOf(net: ClusterLabNetwork, ids: number[], links: readonly LinkName[], withController: boolean): number[] {
  const ports = new Set<number>();
  for (const id of ids) for (const l of links) for (const p of net.links[id]!.ports[LINK_PORTS[l]]) ports.add(p);
  if (withController && links.includes('controller')) ports.add(net.controller.port);
  return [...ports].sort((a, b) => a - b);
}

/** Resolves `from` against the cluster now (leader, ISR) into the lab partitions that cut it. */
export async function planPartition(o: { net: ClusterLabNetwork; cluster: FaultableCluster; victims: number[]; from: readonly PartitionPeer[]; links: readonly LinkName[] | null; topic: string; isr?: IsrSource }): Promise<PartitionPlan> {
  const { net, cluster, victims } = o;
  const ids = cluster.brokers.map((b) => b.id);
  const others = ids.filter((id) => !victims.includes(id));
  const node = (id: number) => {
    const l = net.links[id];
    if (!l) throw new Error(`fault partition: broker ${id} is not in the lab network`);
    return l.node;
  };
  const victimNodes = victims.map(node);
  const plan: PartitionPlan = { victims, brokers: [], controller: false, clients: false, links: o.links ? [...o.links] : null, specs: [] };
  const cut = (what: string, endpoints: Endpoint[], defaultLinks: readonly LinkName[] | null, brokerIds: number[], withController: boolean) => {
    if (endpoints.length === 0) throw new Error(`fault partition: from ${what} names no broker or endpoint outside the victims (broker ${victims.join(', ')}) at this moment`);
    const links = o.links ?? defaultLinks;
    const ports = links ? portsOf(net, [...victims, ...brokerIds], links, withController) : undefined;
    if (ports && ports.length === 0) throw new Error(`fault partition: from ${what} on links ${links!.join(', ')}: no port to cut`);
    plan.specs.push({ a: victimNodes, b: endpoints, ...(ports ? { ports } : {}) });
  };
  const controllerEndpoints = () => net.controller.endpoints.filter((e) => e === 'harness' || !victimNodes.includes(e));
  for (const peer of o.from) {
    if (typeof peer === 'object') {
      const id = ids[peer.broker];
      if (id === undefined) throw new Error(`fault partition: from broker ${peer.broker}: expected an index from 0 to ${ids.length - 1}`);
      if (victims.includes(id)) throw new Error(`fault partition: from broker ${peer.broker} (id ${id}) is a victim of the entry at this moment`);
      plan.brokers.push(id);
      cut(`broker ${peer.broker}`, [node(id)], null, [id], false);
    } else if (peer === 'rest') {
      // The other brokers on every link (or links:), the controller on its own link: one cut
      // over all traffic to the harness would take the clients along (durolab's controller lives there).
      const controller = !o.links || o.links.includes('controller') ? controllerEndpoints() : [];
      if (others.length === 0 && controller.length === 0) cut('rest', [], null, [], false);
      if (others.length) cut('rest', others.map(node), null, others, false);
      if (controller.length) cut('rest (the controller)', controller, ['controller'], [], true);
      plan.brokers.push(...others);
      plan.controller ||= controller.length > 0;
    } else if (peer === 'followers') {
      const followers = (await resolveVictims('followers', cluster, o.topic, o.isr)).filter((id) => !victims.includes(id));
      plan.brokers.push(...followers);
      cut('followers', followers.map(node), null, followers, false);
    } else if (peer === 'controller') {
      plan.controller = true;
      cut('controller', controllerEndpoints(), ['controller'], [], true);
    } else {
      plan.clients = true;
      cut('clients', ['harness'], ['clients'], [], false);
    }
  }
  plan.brokers = [...new Set(plan.brokers)].sort((a, b) => a - b);
  return plan;
}

export function describeCut(plan: Pick<PartitionPlan, 'victims' | 'brokers' | 'controller' | 'clients' | 'links'>): string {
  const other = [plan.brokers.length ? `broker ${plan.brokers.join(', ')}` : '', plan.controller ? 'the controller' : '', plan.clients ? 'the clients' : ''].filter(Boolean).join(', ');
  return `broker ${plan.victims.join(', ')} cut from ${other}${plan.links ? ` on the ${plan.links.join(', ')} link(s)` : ''}`;
}

/** Phase start: the cut, in force when it returns; `held.heal` removes exactly its rules. */
export async function deliverPartition(cluster: FaultableCluster, victims: number[], ctx: FaultContext): Promise<CutInfo> {
  const net = labOf(cluster, 'partition');
  const entry = (ctx.fault ?? {}) as { from?: PartitionPeer[]; links?: LinkName[] };
  const plan = await planPartition({ net, cluster, victims, from: entry.from ?? ['rest'], links: entry.links ?? null, topic: ctx.topic, ...(ctx.isr ? { isr: ctx.isr } : {}) });
  const atMs = Date.now();
  await applyHealable('partition', ctx, plan.specs.map((spec) => () => net.lab.partition(spec)));
  return { brokerIds: victims, atMs, partition: { victims: plan.victims, brokers: plan.brokers, controller: plan.controller, clients: plan.clients, links: plan.links, description: describeCut(plan) } };
}


/** Whether a cut isolated `leader` from every one of `followers` on the replication link: what it then acknowledged alone is on it alone (loss prediction rule 3). */
export function cutsLeaderFromFollowers(cut: NonNullable<CutInfo['partition']>, leader: number, followers: readonly number[]): boolean {
  if (!cut.victims.includes(leader)) return false;
  if (cut.links && !cut.links.includes('replication')) return false;
  return followers.length > 0 && followers.every((f) => cut.brokers.includes(f));
}
