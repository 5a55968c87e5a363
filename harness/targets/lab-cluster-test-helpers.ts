// Shared by the targets' namespace tests (process-target-namespaces.test.ts, kafka-namespaces.test.ts):
// which network namespace a process is in, the namespaces left on the host, a load in the
// background, and waiting for the ISR to say something.
import { readlinkSync, statSync } from 'node:fs';
import { execa } from 'execa';
import type { ClusterClient } from '../drivers/types.ts';
import type { ClusterLabNetwork } from './types.ts';
import { AckLedger } from '../workload/ledger.ts';
import { BatchFactory } from '../workload/batch-factory.ts';

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
