// Partitions: nft rules inside the node namespaces. Each partition gets its own pair of base
// chains (`p<id>_in` on the input hook, `p<id>_out` on output) in the node's `inet durolab`
// table, so heal deletes exactly those two chains and nothing else: no rule handles to track,
// other partitions and the loss chains untouched. A node on either side drops what it sends to
// and receives from the other side's addresses (both sides, so the cut holds in both
// directions even if one namespace's rules were healed alone). The harness is the bridge's
// address: a node cut from 'harness' drops traffic to and from it; the harness itself gets no
// rule, it lives in the root namespace. Rules in the namespaces need neither bridge netfilter
// (br_netfilter) nor anything in the root namespace, and a namespace's deletion takes them along.
// Packets are dropped, not rejected: a cut peer looks like a dead network (timeouts), as in
// Jepsen's iptables DROP, rather than an answer "connection refused".
import { NODE_TABLE } from './lab-names.ts';

/** A node index, or the harness (the root namespace, reached at the bridge's address). */
export type Endpoint = number | 'harness';

export interface PartitionSpec {
  /** One side: node indexes and/or 'harness'. */
  a: readonly Endpoint[];
  /** The other side. */
  b: readonly Endpoint[];
  /**
   * Only traffic from or to these ports (TCP and UDP, either end), e.g. the replication
   * listeners' ports: a cut of one link. Absent: all traffic between the sides.
   */
  ports?: readonly number[];
}

/** Throws naming the field when the spec cannot be a partition of this lab's nodes. */
export function checkPartitionSpec(spec: PartitionSpec, nodeCount: number): void {
  for (const side of ['a', 'b'] as const) {
    const list = spec[side];
    if (!Array.isArray(list) || list.length === 0) throw new Error(`partition: side ${side} is empty (expected node indexes and/or 'harness')`);
    for (const e of list) {
      if (e !== 'harness' && !(Number.isInteger(e) && e >= 0 && e < nodeCount)) throw new Error(`partition: side ${side} names ${JSON.stringify(e)}, expected a node index 0..${nodeCount - 1} or 'harness'`);
    }
  }
  const overlap = spec.a.filter((e) => spec.b.includes(e));
  if (overlap.length) throw new Error(`partition: ${overlap.join(', ')} on both sides`);
  if (spec.a.includes('harness') && spec.b.includes('harness')) throw new Error("partition: 'harness' on both sides");
  if (!spec.a.some((e) => e !== 'harness') && !spec.b.some((e) => e !== 'harness')) throw new Error('partition: no node on either side');
  if (spec.ports !== undefined) {
    if (spec.ports.length === 0) throw new Error('partition: ports is empty (leave it out to cut all traffic)');
    for (const p of spec.ports) if (!Number.isInteger(p) || p < 1 || p > 65535) throw new Error(`partition: port ${JSON.stringify(p)} is not a port number 1..65535`);
  }
}

export function partitionChains(id: number): { input: string; output: string } {
  return { input: `p${id}_in`, output: `p${id}_out` };
}

/**
 * The nft script that cuts one node from `peers` (addresses): what it sends to them and
 * receives from them is dropped, on `ports` only when given.
 */
export function partitionRules(id: number, peers: readonly string[], ports?: readonly number[]): string {
  const { input, output } = partitionChains(id);
  const set = (xs: readonly (string | number)[]) => `{ ${xs.join(', ')} }`;
  const narrow = ports ? ['th dport', 'th sport'].map((m) => ` meta l4proto { tcp, udp } ${m} ${set(ports)}`) : [''];
  const lines = [`add table inet ${NODE_TABLE}`];
  for (const [chain, hook, dir] of [[output, 'output', 'daddr'], [input, 'input', 'saddr']] as const) {
    lines.push(`add chain inet ${NODE_TABLE} ${chain} { type filter hook ${hook} priority 0; policy accept; }`);
    for (const n of narrow) lines.push(`add rule inet ${NODE_TABLE} ${chain} ip ${dir} ${set(peers)}${n} drop`);
  }
  return `${lines.join('\n')}\n`;
}

/** The nft script that heals partition `id` in one namespace. */
export function healRules(id: number): string {
  const { input, output } = partitionChains(id);
  return `delete chain inet ${NODE_TABLE} ${output}\ndelete chain inet ${NODE_TABLE} ${input}\n`;
}

/** For each node on either side, the addresses it must stop talking to. */
export function partitionPlan(spec: PartitionSpec, address: (e: Endpoint) => string): Map<number, string[]> {
  const plan = new Map<number, string[]>();
  for (const [mine, theirs] of [[spec.a, spec.b], [spec.b, spec.a]] as const) {
    for (const e of mine) if (e !== 'harness') plan.set(e, theirs.map(address));
  }
  return plan;
}

export function describePartition(spec: PartitionSpec): string {
  const side = (s: readonly Endpoint[]) => s.map((e) => (e === 'harness' ? 'harness' : `node ${e}`)).join(', ');
  return `[${side(spec.a)}] cut from [${side(spec.b)}]${spec.ports ? ` on ports ${spec.ports.join(', ')}` : ''}`;
}
