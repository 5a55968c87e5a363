// Shared by the lab network tests: TCP servers in the nodes (tcp-fixture.mjs), probes from a
// node or from the harness, timed transfers, and what of a lab is left on the host.
import net from 'node:net';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import type { TestContext } from 'vitest';
import { missingRequirement } from '../../test/requirements.ts';
import type { LabNetwork } from './lab-network.ts';
import { labObjects, listInetTables, listLinks, listNetns } from './net-sweep.ts';
import { labNetworkPrerequisiteProblem } from './net-tools.ts';

export const FIXTURE = path.join(path.dirname(new URL(import.meta.url).pathname), 'tcp-fixture.mjs');

export function requireLabNetwork(ctx: TestContext): void {
  const why = labNetworkPrerequisiteProblem();
  if (why) missingRequirement(ctx, why);
}

/** Starts a fixture server in every node on `ports`; resolves when all listen. */
export async function startServers(lab: LabNetwork, ports: number[]): Promise<{ stop: () => Promise<void>; pids: number[] }> {
  const children: ResultPromise[] = [];
  await Promise.all(
    lab.nodes.map(async (n) => {
      const [file, argv] = lab.argvIn(n.index, process.execPath, [FIXTURE, 'serve', `node${n.index}`, ...ports.map(String)]);
      const child = execa(file, argv, { reject: false, buffer: false, stdin: 'ignore' });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (b: Buffer) => {
          out += b.toString();
          if (out.includes('LISTENING')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`server in node ${n.index} exited (${code}) before listening`)));
      });
    }),
  );
  return {
    pids: children.map((c) => c.pid!),
    stop: async () => {
      for (const c of children) c.kill('SIGKILL');
      await Promise.all(children);
    },
  };
}

export interface ProbeResult {
  target: string;
  ok: boolean;
  greeting?: string;
  error?: string;
}

/** Connects from `from` (a node, or the harness in the root namespace) to each host:port. */
export async function probe(lab: LabNetwork, from: number | 'harness', targets: string[], timeoutMs = 700): Promise<ProbeResult[]> {
  const args = [FIXTURE, 'probe', String(timeoutMs), ...targets];
  const [file, argv] = from === 'harness' ? [process.execPath, args] : lab.argvIn(from, process.execPath, args);
  const r = await execa(file, argv, { reject: false });
  if (r.exitCode !== 0) throw new Error(`probe from ${from} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ProbeResult[];
}

/** `probe` reduced to target -> reachable. */
export async function reachable(lab: LabNetwork, from: number | 'harness', targets: string[]): Promise<Record<string, boolean>> {
  return Object.fromEntries((await probe(lab, from, targets)).map((p) => [p.target, p.ok]));
}

/** Sends (`up`) or fetches (`down`) `bytes` to/from a fixture server from the harness; ms taken, and bytes the other end counted. */
export function timedTransfer(host: string, port: number, bytes: number, direction: 'up' | 'down'): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const sock = net.connect(port, host);
    let buf = Buffer.alloc(0);
    let greeted = false;
    let received = 0;
    sock.on('connect', () => {
      if (direction === 'down') sock.write(`SEND ${bytes}\n`);
      else sock.end(Buffer.concat([Buffer.from('PUT\n'), Buffer.alloc(bytes, 0x62)]));
    });
    sock.on('data', (c: Buffer) => {
      if (!greeted) {
        buf = Buffer.concat([buf, c]);
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        greeted = true;
        c = buf.subarray(nl + 1);
        buf = Buffer.alloc(0);
      }
      if (direction === 'down') received += c.length;
      else buf = Buffer.concat([buf, c]);
    });
    sock.on('end', () => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (direction === 'down') resolve({ ms, bytes: received });
      else resolve({ ms, bytes: Number(/GOT (\d+)/.exec(buf.toString())?.[1] ?? -1) });
      sock.end();
    });
    sock.on('error', reject);
    sock.setTimeout(30_000, () => reject(new Error(`transfer ${direction} of ${bytes} bytes to ${host}:${port}: no progress for 30 s`)));
  });
}

/** The lab's objects (namespaces, bridge, veths, root table) still present on the host. */
export function leftOnHost(lab: LabNetwork): string[] {
  const present = new Set([...listNetns(), ...listLinks(), ...listInetTables()]);
  return [...lab.nodes.flatMap((n) => [n.netns, n.hostVeth]), lab.bridge, lab.nftTable].filter((n) => present.has(n));
}

/** Every lab object on the host whose name carries `pid` as its owner. */
export function ownedBy(pid: number): string[] {
  const o = labObjects((owner) => owner === pid);
  return [...o.netns, ...o.links, ...o.tables];
}
