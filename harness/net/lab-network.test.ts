// The lab network for real: namespaces, veths, a bridge, nft and node processes. Connectivity
// all-to-all and from the harness, no way out of the lab subnet, what argvIn starts runs in the
// node's namespace, and nothing is left behind: after close(), after an exit without close (the
// exit hook), after a SIGKILL of the harness (pdeathsig for its node processes, the sweep for the rest).
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from '../vm/process-registry.ts';
import { LabNetwork } from './lab-network.ts';
import { sweepOrphanedLabNetworks } from './net-sweep.ts';
import { claimSubnet } from './subnet-claim.ts';
import { leftOnHost, ownedBy, probe, requireLabNetwork, startServers } from './net-test-helpers.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-net-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const here = path.dirname(new URL(import.meta.url).pathname);

/** Runs a TS script (node --import tsx) that prints "READY ..." and then waits for stdin. */
async function holder(body: string): Promise<{ child: ReturnType<typeof execa>; ready: string }> {
  const script = path.join(work, `holder-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(script, `import { LabNetwork } from ${JSON.stringify(path.join(here, 'lab-network.ts'))};\n${body}\n`);
  const child = execa(process.execPath, ['--import', 'tsx', script], { reject: false, buffer: false, cwd: path.join(here, '../..') });
  const ready = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /READY(.*)\n/.exec(out);
      if (m) resolve(m[1]!.trim());
    });
    child.once('exit', () => reject(new Error(`holder exited before ready: ${out}`)));
  });
  return { child, ready };
}

describe('lab network (a namespace per node on a bridge)', () => {
  it('connects every node to every other and to the harness, and nothing outside the lab subnet', async (ctx) => {
    requireLabNetwork(ctx);
    const lab = await LabNetwork.create({ nodes: 3, name: 'connectivity test' });
    let servers: Awaited<ReturnType<typeof startServers>> | undefined;
    try {
      expect(lab.subnet).toMatch(/^198\.1[89]\.\d+\.0\/24$/);
      expect(lab.harnessAddress).toBe(lab.subnet.replace('0/24', '1'));
      expect(new Set(lab.nodes.map((n) => n.address)).size).toBe(3);
      servers = await startServers(lab, [7000]);
      // What argvIn started runs in the node's own namespace.
      for (const [i, pid] of servers.pids.entries()) expect(statSync(`/proc/${pid}/ns/net`).ino).toBe(statSync(`/run/netns/${lab.nodes[i]!.netns}`).ino);
      const all = lab.nodes.map((n) => `${n.address}:7000`);
      for (const from of [0, 1, 2, 'harness'] as const) {
        const results = await probe(lab, from, all);
        expect(results.map((r) => [r.ok, r.greeting])).toEqual(lab.nodes.map((n) => [true, `node${n.index} 7000`]));
      }
      // Loopback is up inside each namespace (and is the node's own, not the host's).
      expect((await probe(lab, 1, ['127.0.0.1:7000']))[0]).toMatchObject({ ok: true, greeting: 'node1 7000' });
      // No default route; an address outside the subnet is refused locally: nothing is sent.
      for (const n of lab.nodes) {
        const routes = await execa('ip', ['-n', n.netns, '-4', 'route', 'show']);
        expect(routes.stdout.trim().split('\n')).toEqual([`${lab.subnet} dev eth0 proto kernel scope link src ${n.address} `.trim()]);
      }
      // Another lab's /24 is as unreachable as the internet: each lab is alone on its subnet.
      const otherLab = lab.subnet.startsWith('198.19.255.') ? '198.18.0.250' : '198.19.255.250';
      const t0 = Date.now();
      const out = await probe(lab, 0, ['1.1.1.1:80', '2606:4700:4700::1111:80', `${otherLab}:80`]);
      expect(Date.now() - t0).toBeLessThan(650);
      expect(out[0]).toMatchObject({ ok: false, error: expect.stringMatching(/ENETUNREACH/) });
      expect(out[1]).toMatchObject({ ok: false, error: expect.stringMatching(/ENETUNREACH/) });
      expect(out[2]).toMatchObject({ ok: false, error: expect.stringMatching(/ENETUNREACH/) });
    } finally {
      await servers?.stop();
      await lab.close();
    }
    expect(leftOnHost(lab)).toEqual([]);
  });

  it('a harness that exits without closing its lab leaves nothing (the exit hook)', async (ctx) => {
    requireLabNetwork(ctx);
    const { child, ready } = await holder(
      `const lab = await LabNetwork.create({ nodes: 2 });\nconsole.log('READY ' + lab.bridge);\nprocess.stdin.once('data', () => process.exit(0));`,
    );
    expect(ownedBy(child.pid!)).toContain(ready);
    expect(ownedBy(child.pid!).length).toBe(2 + 2 + 1 + 1);
    child.stdin!.write('exit\n');
    await child;
    expect(ownedBy(child.pid!)).toEqual([]);
  });

  it("a SIGKILLed harness's node processes die with it and the sweep removes its lab, leaving a live lab alone", async (ctx) => {
    requireLabNetwork(ctx);
    const { child, ready } = await holder(
      [
        `import { spawn } from 'node:child_process';`,
        `const lab = await LabNetwork.create({ nodes: 2 });`,
        `const [file, argv] = lab.argvIn(1, 'sleep', ['600']);`,
        `const sleeper = spawn(file, argv, { stdio: 'ignore' });`,
        `console.log('READY ' + sleeper.pid);`,
        `setInterval(() => {}, 1000);`,
      ].join('\n'),
    );
    const sleeper = Number(ready);
    const mine = await LabNetwork.create({ nodes: 1, name: 'live lab beside the sweep' });
    try {
      expect(isAlive(sleeper)).toBe(true);
      expect(ownedBy(child.pid!).length).toBe(6);
      child.kill('SIGKILL');
      await child;
      const end = Date.now() + 5000;
      while (isAlive(sleeper) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(isAlive(sleeper)).toBe(false);
      sweepOrphanedLabNetworks();
      expect(ownedBy(child.pid!)).toEqual([]);
      expect(leftOnHost(mine).length).toBe(4); // its namespace, veth, bridge and table
    } finally {
      await mine.close();
    }
    expect(leftOnHost(mine)).toEqual([]);
  });

  it('a subnet claimed stays claimed until released, by this or any other process', async () => {
    const a = await claimSubnet(300);
    const b = await claimSubnet(a.index);
    expect(b.index).not.toBe(a.index);
    a.release();
    await new Promise((r) => setTimeout(r, 10));
    const c = await claimSubnet(a.index);
    expect(c.index).toBe(a.index);
    b.release();
    c.release();
  });
});
