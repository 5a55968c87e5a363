// Partitions for real, with nft in the node namespaces: a cut of node 0 from node 1 blocks
// exactly 0<->1 both ways and heal restores it; a cut narrowed to one port leaves the other
// open; a cut from the harness; healAll and close with cuts in force. Beside them, the spec
// checks and the rule text (pure seams).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabNetwork } from './lab-network.ts';
import { leftOnHost, reachable, requireLabNetwork, startServers } from './net-test-helpers.ts';
import { labNetworkPrerequisiteProblem } from './net-tools.ts';
import { checkPartitionSpec, partitionRules } from './partition.ts';

const CLIENT = 7101;
const REPLICATION = 7102;
let lab: LabNetwork;
let servers: Awaited<ReturnType<typeof startServers>>;
const at = (node: number, port: number) => `${lab.nodes[node]!.address}:${port}`;

beforeAll(async () => {
  if (labNetworkPrerequisiteProblem()) return;
  lab = await LabNetwork.create({ nodes: 3, name: 'partition test' });
  servers = await startServers(lab, [CLIENT, REPLICATION]);
});
afterAll(async () => {
  await servers?.stop();
  await lab?.close();
});

/** Reachability of node `to`'s two ports from `from`, as [client, replication]. */
async function ports(from: number | 'harness', to: number): Promise<[boolean, boolean]> {
  const r = await reachable(lab, from, [at(to, CLIENT), at(to, REPLICATION)]);
  return [r[at(to, CLIENT)]!, r[at(to, REPLICATION)]!];
}

describe('partition (nft in the node namespaces)', () => {
  it('cuts node 0 from node 1 in both directions and nothing else; heal restores it, twice is harmless', async (ctx) => {
    requireLabNetwork(ctx);
    expect(await ports(0, 1)).toEqual([true, true]);
    const cut = await lab.partition({ a: [0], b: [1] });
    expect(await ports(0, 1)).toEqual([false, false]);
    expect(await ports(1, 0)).toEqual([false, false]);
    expect(await ports(0, 2)).toEqual([true, true]);
    expect(await ports(2, 0)).toEqual([true, true]);
    expect(await ports(1, 2)).toEqual([true, true]);
    expect(await ports('harness', 0)).toEqual([true, true]);
    expect(await ports('harness', 1)).toEqual([true, true]);
    expect(lab.activeFaults.map((f) => f.description)).toEqual([cut.description]);
    await cut.heal();
    expect(cut.healed).toBe(true);
    expect(await ports(0, 1)).toEqual([true, true]);
    expect(await ports(1, 0)).toEqual([true, true]);
    await cut.heal();
    expect(lab.activeFaults).toEqual([]);
  });

  it('a cut narrowed to the replication port leaves the client port open, both ways', async (ctx) => {
    requireLabNetwork(ctx);
    const cut = await lab.partition({ a: [0], b: [1, 2], ports: [REPLICATION] });
    expect(await ports(0, 1)).toEqual([true, false]);
    expect(await ports(1, 0)).toEqual([true, false]);
    expect(await ports(2, 0)).toEqual([true, false]);
    expect(await ports(1, 2)).toEqual([true, true]);
    await cut.heal();
    expect(await ports(0, 1)).toEqual([true, true]);
  });

  it('cuts a node from the harness (the bridge address) both ways, not from the other nodes', async (ctx) => {
    requireLabNetwork(ctx);
    // A server in the root namespace, on the harness's lab address.
    const harnessServer = net.createServer((s) => s.end('harness\n'));
    await new Promise<void>((r) => harnessServer.listen(0, lab.harnessAddress, r));
    const harnessAt = `${lab.harnessAddress}:${(harnessServer.address() as net.AddressInfo).port}`;
    try {
      const cut = await lab.partition({ a: ['harness'], b: [0] });
      expect(await ports('harness', 0)).toEqual([false, false]);
      expect(await ports('harness', 1)).toEqual([true, true]);
      expect(await reachable(lab, 0, [harnessAt])).toEqual({ [harnessAt]: false });
      expect(await reachable(lab, 1, [harnessAt])).toEqual({ [harnessAt]: true });
      expect(await ports(0, 1)).toEqual([true, true]);
      await cut.heal();
      expect(await ports('harness', 0)).toEqual([true, true]);
      expect(await reachable(lab, 0, [harnessAt])).toEqual({ [harnessAt]: true });
    } finally {
      harnessServer.close();
    }
  });

  it('healAll heals every cut in force; close with cuts in force leaves nothing', async (ctx) => {
    requireLabNetwork(ctx);
    const one = await lab.partition({ a: [0], b: [1] });
    const two = await lab.partition({ a: [2], b: ['harness'] });
    expect(await ports(0, 1)).toEqual([false, false]);
    expect(await ports('harness', 2)).toEqual([false, false]);
    await lab.healAll();
    expect([one.healed, two.healed]).toEqual([true, true]);
    expect(await ports(0, 1)).toEqual([true, true]);
    expect(await ports('harness', 2)).toEqual([true, true]);
    const other = await LabNetwork.create({ nodes: 2, name: 'closed with a cut' });
    expect(other.subnet).not.toBe(lab.subnet);
    const cut = await other.partition({ a: [0], b: [1] });
    await other.close();
    expect(cut.healed).toBe(true);
    expect(leftOnHost(other)).toEqual([]);
  });
});

describe('partition specs and rules', () => {
  it('refuses overlapping, empty, unknown and harness-only sides and bad ports, naming the field', () => {
    expect(() => checkPartitionSpec({ a: [0], b: [0, 1] }, 3)).toThrow(/0 on both sides/);
    expect(() => checkPartitionSpec({ a: [], b: [1] }, 3)).toThrow(/side a is empty/);
    expect(() => checkPartitionSpec({ a: [0], b: [3] }, 3)).toThrow(/side b names 3, expected a node index 0\.\.2 or 'harness'/);
    expect(() => checkPartitionSpec({ a: ['harness'], b: ['harness'] }, 3)).toThrow(/harness/);
    expect(() => checkPartitionSpec({ a: [0], b: [1], ports: [] }, 3)).toThrow(/ports is empty/);
    expect(() => checkPartitionSpec({ a: [0], b: [1], ports: [70000] }, 3)).toThrow(/port 70000/);
    expect(() => checkPartitionSpec({ a: [0], b: ['harness', 2], ports: [9092] }, 3)).not.toThrow();
  });

  it('drops to and from the peers, on either end port when narrowed, in chains of its own', () => {
    expect(partitionRules(4, ['198.18.3.11', '198.18.3.1'], [9093])).toBe(
      [
        'add table inet durolab',
        'add chain inet durolab p4_out { type filter hook output priority 0; policy accept; }',
        'add rule inet durolab p4_out ip daddr { 198.18.3.11, 198.18.3.1 } meta l4proto { tcp, udp } th dport { 9093 } drop',
        'add rule inet durolab p4_out ip daddr { 198.18.3.11, 198.18.3.1 } meta l4proto { tcp, udp } th sport { 9093 } drop',
        'add chain inet durolab p4_in { type filter hook input priority 0; policy accept; }',
        'add rule inet durolab p4_in ip saddr { 198.18.3.11, 198.18.3.1 } meta l4proto { tcp, udp } th dport { 9093 } drop',
        'add rule inet durolab p4_in ip saddr { 198.18.3.11, 198.18.3.1 } meta l4proto { tcp, udp } th sport { 9093 } drop',
        '',
      ].join('\n'),
    );
  });
});
