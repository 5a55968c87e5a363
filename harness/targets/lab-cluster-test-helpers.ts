// Shared by the targets' namespace tests (process-target-namespaces.test.ts, kafka-namespaces.test.ts,
// nats-namespaces.test.ts): which network namespace a process is in, the namespaces left on the
// host, a load in the background, and waiting for the ISR to say something.
import { readlinkSync, statSync } from 'node:fs';
import { execa } from 'execa';
import { expect } from 'vitest';
import { checkAfterFault } from '../checker/after-fault.ts';
import type { ClusterClient } from '../drivers/types.ts';
import type { LabNode } from '../net/lab-network.ts';
import type { ClusterLabNetwork, TargetBroker } from './types.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';

/** The network namespace inode a process is in (/proc/PID/ns/net). */
export function netnsInodeOfPid(pid: number): number {
  const m = /^net:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/ns/net`));
  if (!m) throw new Error(`/proc/${pid}/ns/net: not a net namespace link`);
  return Number(m[1]);
}

/** The inode of a named namespace (ip netns add: its bind mount under /run/netns). */
export function netnsInodeOfName(name: string): number {
  return statSync(`/run/netns/${name}`).ino;
}

/**
 * Runs `body` on a started cluster in its lab network (its controller endpoints expected to be
 * `endpoints`), stops the cluster whatever happens, and expects none of its namespaces left.
 */
export async function onLabCluster(cluster: { labNetwork?(): ClusterLabNetwork | null; stop(): Promise<void> }, endpoints: ClusterLabNetwork['controller']['endpoints'], body: (net: ClusterLabNetwork) => Promise<void>): Promise<void> {
  const net = cluster.labNetwork?.();
  if (!net) {
    await cluster.stop();
    throw new Error('the cluster runs in no lab network (cluster.network: namespaces expected)');
  }
  const names = net.lab.nodes.map((n) => n.netns);
  try {
    expect(net.controller.endpoints).toEqual(endpoints);
    await body(net);
  } finally {
    await cluster.stop();
  }
  expect(await namespacesLeft(names)).toEqual([]);
}

/**
 * Each broker's own process (not a wrapper) is in the namespace of the lab node its link names,
 * and the harness is not; `each` checks the rest of a broker (its addresses, its config) there.
 */
export function expectBrokersInTheirNamespaces<B extends Pick<TargetBroker, 'id' | 'pid'>>(brokers: readonly B[], net: ClusterLabNetwork, each: (broker: B, node: LabNode) => void): void {
  for (const b of brokers) {
    const node = net.lab.nodes[net.links[b.id]!.node]!;
    expect(netnsInodeOfPid(b.pid!)).toBe(netnsInodeOfName(node.netns));
    expect(netnsInodeOfPid(b.pid!)).not.toBe(netnsInodeOfPid(process.pid));
    each(b, node);
  }
}

/**
 * A 3 s acks=all load on `leader` read back through the checker (more than 100 acknowledged,
 * none lost), then every replica in the ISR; returns a follower (the first broker that is not
 * the leader) for a cut.
 */
export async function expectLoadReadBackThenFullIsr(client: ClusterClient & Required<Pick<ClusterClient, 'inSyncReplicas'>>, topic: string, brokers: readonly Pick<TargetBroker, 'id'>[], leader: number): Promise<number> {
  const first = produceFor(client, topic, leader, 3, 7000);
  await first.result;
  const check = await checkAfterFault({ source: client, topic, ledger: first.ledger, cutMs: Date.now() });
  expect(check.report.acked).toBeGreaterThan(100);
  expect(check.report.ackedLost).toBe(0);
  const follower = brokers.map((b) => b.id).find((id) => id !== leader)!;
  await waitForIsr(client, topic, (isr) => isr.length === brokers.length, 'all three');
  return follower;
}

/** `ip netns list`, names only. */
export async function netnsList(): Promise<string[]> {
  const r = await execa('ip', ['netns', 'list']);
  return r.stdout.split('\n').map((l) => l.split(' ')[0]!).filter(Boolean);
}

/** This process's lab namespaces still on the host (lab-names.ts: durolab-<pid>-...). */
export async function ownNetnsLeft(): Promise<string[]> {
  return (await netnsList()).filter((n) => n.startsWith(`durolab-${process.pid}-`));
}

/**
 * A start that must fail (interrupted): it rejects naming the interruption, and this process
 * has no lab namespace before or after. Returns the namespaces left (none expected), or throws.
 */
export async function interruptedStartLeavesNothing(start: () => Promise<unknown>): Promise<string[]> {
  const before = await ownNetnsLeft();
  if (before.length) throw new Error(`lab namespaces of this process before the start: ${before.join(', ')}`);
  const outcome = await start().then(
    () => new Error('the start succeeded; expected it to be interrupted'),
    (err: Error) => (/interrupted while starting the cluster/.test(err.message) ? null : err),
  );
  if (outcome) throw outcome;
  return ownNetnsLeft();
}

/** Which of `names` are still in `ip netns list` (after a stop: none should be). */
export async function namespacesLeft(names: readonly string[]): Promise<string[]> {
  const left = await netnsList();
  return names.filter((n) => left.includes(n));
}

/** acks=all into partition 0 for `durationSec`, its own ledger. */
export function produceFor(client: ClusterClient, topic: string, leader: number, durationSec: number, producerIdBase: number, signal?: AbortSignal) {
  const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase, partitions: [0] });
  const result = client.produce({
    topic,
    leaders: new Map([[0, leader]]),
    acks: 'all',
    timeoutMs: 15_000,
    connections: 2,
    pipelining: 1,
    rate: null,
    warmupSec: 0,
    durationSec,
    ledger,
    factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: 8 }),
    ...(signal ? { signal } : {}),
  });
  return { ledger, result };
}

/** Polls the ISR of partition 0 until `ok` holds; the ISR then, or throws with the last one seen. */
export async function waitForIsr(client: Required<Pick<ClusterClient, 'inSyncReplicas'>>, topic: string, ok: (isr: number[]) => boolean, what: string, timeoutMs = 30_000): Promise<{ isr: number[]; ms: number }> {
  const t0 = Date.now();
  let last: number[] | null = null;
  while (Date.now() - t0 < timeoutMs) {
    last = await client.inSyncReplicas(topic, 0).catch(() => null);
    if (last && ok(last)) return { isr: last, ms: Date.now() - t0 };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`ISR of ${topic}-0 not ${what} within ${timeoutMs} ms (last: ${last ? `[${last.join(', ')}]` : 'unknown'})`);
}

export interface ReplicationCutResult {
  /** The ISR once the follower left it, and how long after the cut. */
  shrunk: { isr: number[]; ms: number };
  /** How long after heal the follower was back in the ISR. */
  back: { isr: number[]; ms: number };
  /** Records acknowledged (acks=all) by the load that ran through the cut and the heal. */
  ackedRecords: number;
}

/**
 * Under an acks=all load on partition 0: cuts `follower` from `leader` on the leader's
 * replication ports only, waits for the follower to leave the ISR, runs `whileCut` (what must
 * still work), heals, and waits for it to come back.
 */
export async function cutReplicationAndHeal(o: {
  labNet: ClusterLabNetwork;
  client: ClusterClient & Required<Pick<ClusterClient, 'inSyncReplicas'>>;
  topic: string;
  leader: number;
  follower: number;
  whileCut: () => Promise<void>;
  timeoutMs?: number;
  /** Who, for the log line ("kafka"). */
  label: string;
}): Promise<ReplicationCutResult> {
  const { labNet, client, topic, leader, follower } = o;
  const cut = await labNet.lab.partition({ a: [labNet.links[leader]!.node], b: [labNet.links[follower]!.node], ports: labNet.links[leader]!.ports.replication });
  const stop = new AbortController();
  const load = produceFor(client, topic, leader, 120, 9000, stop.signal);
  try {
    const shrunk = await waitForIsr(client, topic, (isr) => !isr.includes(follower) && isr.includes(leader), 'without the cut follower, with the leader', o.timeoutMs);
    await o.whileCut();
    await cut.heal();
    const back = await waitForIsr(client, topic, (isr) => isr.includes(follower), 'with the follower back', o.timeoutMs);
    console.log(`${o.label}: follower ${follower} cut from leader ${leader} on the replication port: out of the ISR after ${shrunk.ms} ms (ISR [${shrunk.isr.join(', ')}]); healed: back after ${back.ms} ms`);
    return { shrunk, back, ackedRecords: load.ledger.counts().ackedRecords };
  } finally {
    await cut.heal();
    stop.abort();
    await load.result.catch(() => undefined);
  }
}
