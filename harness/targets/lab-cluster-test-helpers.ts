// Shared by the targets' namespace tests (process-target-namespaces.test.ts, kafka-namespaces.test.ts):
// which network namespace a process is in, the namespaces left on the host, a load in the
// background, and waiting for the ISR to say something.
import { readlinkSync, statSync } from 'node:fs';
import { execa } from 'execa';
import type { ClusterClient } from '../drivers/types.ts';
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
export async function waitForIsr(client: ClusterClient, topic: string, ok: (isr: number[]) => boolean, what: string, timeoutMs = 30_000): Promise<{ isr: number[]; ms: number }> {
  const t0 = Date.now();
  let last: number[] | null = null;
  while (Date.now() - t0 < timeoutMs) {
    last = await client.inSyncReplicas(topic, 0).catch(() => null);
    if (last && ok(last)) return { isr: last, ms: Date.now() - t0 };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`ISR of ${topic}-0 not ${what} within ${timeoutMs} ms (last: ${last ? `[${last.join(', ')}]` : 'unknown'})`);
}
