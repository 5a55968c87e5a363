// The sides of a partition as a scenario names them (`from:`, `links:`): groups of nodes, broker
// indexes and the links between them. Read by the fault's delivery (harness/faults/partition.ts),
// its checks (harness/faults/partition-checks.ts) and target external's {from} placeholder.

export const PARTITION_GROUPS = ['rest', 'followers', 'controller', 'clients'] as const;
export type PartitionGroup = (typeof PARTITION_GROUPS)[number];
/** One side of a partition as the scenario names it: a group, or a broker index. */
export type PartitionPeer = PartitionGroup | { broker: number };

export const LINK_NAMES = ['replication', 'controller', 'clients'] as const;
export type LinkName = (typeof LINK_NAMES)[number];

export const FROM_EXPECTED = `${PARTITION_GROUPS.join(' | ')} | a broker index N, or a list of them (e.g. [controller, followers])`;
export const LINKS_EXPECTED = `${LINK_NAMES.join(' | ')}, or a list of them`;

function peerOf(v: unknown): PartitionPeer | undefined {
  if (typeof v === 'string' && (PARTITION_GROUPS as readonly string[]).includes(v)) return v as PartitionGroup;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return { broker: v };
  return undefined;
}

/** `from:` as written (one value or a list) to a list; undefined when a value is not one (an empty list included). */
export function parseFrom(v: unknown): PartitionPeer[] | undefined {
  const list = Array.isArray(v) ? v : [v];
  const out = list.map(peerOf);
  return out.length > 0 && out.every((p) => p !== undefined) ? (out as PartitionPeer[]) : undefined;
}

export function parseLinks(v: unknown): LinkName[] | undefined {
  const list = Array.isArray(v) ? v : [v];
  return list.length > 0 && list.every((l) => typeof l === 'string' && (LINK_NAMES as readonly string[]).includes(l)) ? (list as LinkName[]) : undefined;
}

export function peerText(p: PartitionPeer): string {
  return typeof p === 'object' ? `broker ${p.broker}` : p;
}
