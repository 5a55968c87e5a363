// `scenario check`'s rules for a partition entry (harness/faults/partition.ts delivers it): what
// `from:` and `links:` may say, and the sides the entry can have given its target and the
// cluster: a `from` that names a victim or a broker the cluster lacks, a group named twice, a
// side left empty (every broker a victim), a link narrowing that leaves a group nothing to cut.
// The harness is never a victim: `target:` names brokers only (the harness is `from: clients`).
// It imports only types and the partition grammar (harness/net/partition-peers.ts): the fault
// registry, and with it scenario check, reads these.
import type { BrokerLinkPorts } from '../targets/types.ts';
import type { FaultScenarioIssue } from '../model/scenario-issue.ts';
import { PARTITION_GROUPS, peerText, type LinkName, type PartitionPeer } from '../net/partition-peers.ts';

export const LINK_PORTS: Record<LinkName, keyof BrokerLinkPorts> = { replication: 'replication', controller: 'controller', clients: 'client' };

/** The problems of a partition entry (its fields as parsed) in this cluster. */
export function partitionScenarioIssues(fault: Record<string, unknown>, cluster: { brokers: number } | undefined): FaultScenarioIssue[] {
  const out: FaultScenarioIssue[] = [];
  const from = (fault.from as PartitionPeer[] | undefined) ?? ['rest'];
  const links = fault.links as LinkName[] | undefined;
  const target = fault.target as { broker: number } | string;
  const texts = from.map(peerText);
  const twice = texts.filter((t, i) => texts.indexOf(t) !== i);
  if (twice.length) out.push({ path: ['from'], expected: 'each group or broker once', found: `${[...new Set(twice)].join(', ')} twice` });
  for (const p of from) {
    if (typeof p === 'object' && cluster && p.broker >= cluster.brokers) out.push({ path: ['from'], expected: `broker indexes from 0 to ${cluster.brokers - 1} (or ${PARTITION_GROUPS.join(', ')})`, found: String(p.broker) });
    if (typeof p === 'object' && typeof target === 'object' && p.broker === target.broker) {
      out.push({ path: ['from'], expected: `a side without the victim (target: ${target.broker} is cut from it; the sides may not overlap)`, found: `broker ${p.broker} on both sides` });
    }
  }
  if (target === 'followers' && from.includes('followers')) out.push({ path: ['from'], expected: 'a side without the victims (target: followers; the sides may not overlap)', found: 'followers on both sides' });
  if (target === 'all') {
    const empty = from.filter((p) => p !== 'clients');
    if (empty.length) out.push({ path: ['from'], expected: 'clients with target: all (every broker is a victim; on Kafka every node is a controller too): the other side would be empty', found: empty.map(peerText).join(', ') });
  }
  if (links) {
    for (const group of ['controller', 'clients'] as const) {
      if (from.includes(group) && !links.includes(group)) {
        out.push({ path: ['links'], expected: `links that include ${group} with from: ${group} (its traffic is on the ${group} link only)`, found: links.join(', ') });
      }
    }
    const twiceLinks = links.filter((l, i) => links.indexOf(l) !== i);
    if (twiceLinks.length) out.push({ path: ['links'], expected: 'each link once', found: `${[...new Set(twiceLinks)].join(', ')} twice` });
  }
  return out;
}
