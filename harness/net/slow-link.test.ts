// Slow links for real: tc tbf caps a node's link in both directions (a transfer through the cap
// takes about as long as the rate says, many times the uncapped one), nft numgen loss of 100 %
// drops everything over the node's link and 0 % nothing, heal restores the link, and the delay
// capability check agrees with what tc answers on this kernel.
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabNetwork } from './lab-network.ts';
import { reachable, requireLabNetwork, startServers, timedTransfer } from './net-test-helpers.ts';
import { labNetworkPrerequisiteProblem } from './net-tools.ts';
import { checkSlowLinkSpec, linkDelayProblem, lossRules, tbfArgs } from './slow-link.ts';

const PORT = 7201;
const MIB = 1024 * 1024;
let lab: LabNetwork;
let servers: Awaited<ReturnType<typeof startServers>>;
const at = (node: number) => `${lab.nodes[node]!.address}:${PORT}`;

beforeAll(async () => {
  if (labNetworkPrerequisiteProblem()) return;
  lab = await LabNetwork.create({ nodes: 3, name: 'slow link test' });
  servers = await startServers(lab, [PORT]);
});
afterAll(async () => {
  await servers?.stop();
  await lab?.close();
});

async function qdiscs(node: number): Promise<string> {
  const n = lab.nodes[node]!;
  const inside = await execa('tc', ['-n', n.netns, 'qdisc', 'show', 'dev', 'eth0']);
  const host = await execa('tc', ['qdisc', 'show', 'dev', n.hostVeth]);
  return `${inside.stdout}\n${host.stdout}`;
}

describe('slow link (tc tbf, nft numgen loss)', () => {
  it('a 32 Mbit/s cap makes 4 MiB take ~1 s each way, many times the uncapped time; heal lifts it', async (ctx) => {
    requireLabNetwork(ctx);
    const host = lab.nodes[0]!.address;
    const bytes = 4 * MIB;
    const expectedMs = ((bytes * 8) / 32e6) * 1000;
    const free = { up: await timedTransfer(host, PORT, bytes, 'up'), down: await timedTransfer(host, PORT, bytes, 'down') };
    const slow = await lab.slowLink(0, { rateMbit: 32 });
    expect(await qdiscs(0)).toMatch(/tbf .*rate 32Mbit[\s\S]*tbf .*rate 32Mbit/);
    const capped = { up: await timedTransfer(host, PORT, bytes, 'up'), down: await timedTransfer(host, PORT, bytes, 'down') };
    await slow.heal();
    expect(await qdiscs(0)).not.toMatch(/tbf/);
    const after = await timedTransfer(host, PORT, bytes, 'up');
    console.log(
      `4 MiB to/from node 0: uncapped up ${free.up.ms.toFixed(0)} ms, down ${free.down.ms.toFixed(0)} ms; ` +
        `at 32 Mbit/s up ${capped.up.ms.toFixed(0)} ms, down ${capped.down.ms.toFixed(0)} ms (the rate says ${expectedMs.toFixed(0)} ms); healed up ${after.ms.toFixed(0)} ms`,
    );
    for (const dir of ['up', 'down'] as const) {
      expect(free[dir].bytes).toBe(bytes);
      expect(capped[dir].bytes).toBe(bytes);
      expect(capped[dir].ms).toBeGreaterThanOrEqual(expectedMs * 0.7);
      expect(capped[dir].ms).toBeLessThan(expectedMs * 4);
      expect(capped[dir].ms / free[dir].ms).toBeGreaterThan(3);
    }
    expect(after.ms).toBeLessThan(expectedMs * 0.5);
  });

  it('loss 100 % drops everything over the node link (from the harness and the other nodes), 0 % nothing', async (ctx) => {
    requireLabNetwork(ctx);
    const total = await lab.slowLink(0, { lossPercent: 100 });
    expect(await reachable(lab, 'harness', [at(0), at(1)])).toEqual({ [at(0)]: false, [at(1)]: true });
    expect(await reachable(lab, 2, [at(0), at(1)])).toEqual({ [at(0)]: false, [at(1)]: true });
    expect(await reachable(lab, 0, [at(1), `127.0.0.1:${PORT}`])).toEqual({ [at(1)]: false, [`127.0.0.1:${PORT}`]: true });
    await total.heal();
    expect(await reachable(lab, 'harness', [at(0)])).toEqual({ [at(0)]: true });
    const none = await lab.slowLink(0, { lossPercent: 0 });
    expect(await reachable(lab, 'harness', [at(0)])).toEqual({ [at(0)]: true });
    expect(await reachable(lab, 1, [at(0)])).toEqual({ [at(0)]: true });
    expect((await timedTransfer(lab.nodes[0]!.address, PORT, MIB, 'down')).bytes).toBe(MIB);
    await none.heal();
    await none.heal();
  });

  it('one slow link per node at a time; bad specs refused with the field', async (ctx) => {
    expect(() => checkSlowLinkSpec({})).toThrow(/neither rateMbit nor lossPercent/);
    expect(() => checkSlowLinkSpec({ rateMbit: 0 })).toThrow(/rateMbit 0/);
    expect(() => checkSlowLinkSpec({ lossPercent: 101 })).toThrow(/lossPercent 101 is outside 0\.\.100/);
    expect(tbfArgs('eth0', 16)).toEqual(['qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', '16000kbit', 'burst', '20000', 'latency', '100ms']);
    expect(lossRules(2.5)).toContain('add rule inet durolab loss_in iifname "eth0" numgen random mod 10000 < 250 drop');
    expect(lossRules(100)).toContain('add rule inet durolab loss_out oifname "eth0" drop');
    requireLabNetwork(ctx);
    const one = await lab.slowLink(1, { rateMbit: 100 });
    await expect(lab.slowLink(1, { lossPercent: 5 })).rejects.toThrow(/node 1 already has a slow link/);
    await one.heal();
    const two = await lab.slowLink(1, { lossPercent: 5 });
    await two.heal();
  });

  it('says delay cannot be applied exactly when tc has no netem here', async (ctx) => {
    requireLabNetwork(ctx);
    const problem = linkDelayProblem();
    const n = lab.nodes[2]!;
    const direct = await execa('tc', ['-n', n.netns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms'], { reject: false });
    if (direct.exitCode === 0) await execa('tc', ['-n', n.netns, 'qdisc', 'del', 'dev', 'lo', 'root']);
    console.log(`link delay: ${problem ?? 'available (netem)'}`);
    if (direct.exitCode === 0) expect(problem).toBeNull();
    else expect(problem).toMatch(/no netem qdisc \(tc qdisc add \.\.\. netem: Specified qdisc kind is unknown\): a link delay cannot be applied; rate \(tc tbf\) and loss \(nft numgen\) can/);
    expect(linkDelayProblem()).toBe(problem);
  });
});
