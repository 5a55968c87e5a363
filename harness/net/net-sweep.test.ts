// The sweep rule for real: a namespace, veth pair, bridge and root nft table whose name carries
// a pid that is not a live process are removed; the same objects of a live owner are left, and
// go once that owner is gone. A dead owner is simulated by a pid above the kernel's pid_max
// (no process can have it); a live one by a `sleep` this test starts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ownerOf } from './lab-names.ts';
import { sweepOrphanedLabNetworks } from './net-sweep.ts';
import { ownedBy, requireLabNetwork } from './net-test-helpers.ts';

/** A namespace with a veth into it, a bridge holding the host end, a root table: all named for `pid`. */
async function fakeLab(pid: number): Promise<string[]> {
  const tag = Math.floor(Math.random() * 36 ** 2).toString(36);
  const names = { netns: `durolab-${pid}-t${tag}-n0`, bridge: `dlab${pid}b${tag}`, veth: `dlab${pid}v${tag}`, table: `durolab_${pid}_t${tag}` };
  await execa('ip', ['-batch', '-'], { input: `netns add ${names.netns}\nlink add ${names.bridge} type bridge\nlink add ${names.veth} type veth peer name eth0 netns ${names.netns}\nlink set dev ${names.veth} master ${names.bridge}\n` });
  await execa('nft', ['add', 'table', 'inet', names.table]);
  return Object.values(names);
}

describe('sweep of lab networks left by a dead harness', () => {
  it('parses the owner from every kind of name, and only from the lab names', () => {
    expect(ownerOf('netns', 'durolab-4242-1a-n0')).toBe(4242);
    expect(ownerOf('link', 'dlab4242b1a')).toBe(4242);
    expect(ownerOf('link', 'dlab4242v0')).toBe(4242);
    expect(ownerOf('nft', 'durolab_4242_1a')).toBe(4242);
    expect(ownerOf('link', 'eth0')).toBeNull();
    expect(ownerOf('link', 'dlab4242x0')).toBeNull();
    expect(ownerOf('netns', 'durolabs-4242-0')).toBeNull();
  });

  it("removes a dead owner's namespace, veth, bridge and nft table and leaves a live owner's", async (ctx) => {
    requireLabNetwork(ctx);
    const deadPid = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1;
    const sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    const livePid = sleeper.pid!;
    try {
      const dead = await fakeLab(deadPid);
      const live = await fakeLab(livePid);
      expect(ownedBy(deadPid)).toEqual(expect.arrayContaining(dead));
      expect(ownedBy(livePid).sort()).toEqual([...live].sort());
      sweepOrphanedLabNetworks();
      // A parallel test's create() may sweep them first: what counts is that they are gone.
      expect(ownedBy(deadPid).filter((n) => dead.includes(n))).toEqual([]);
      expect(ownedBy(livePid).sort()).toEqual([...live].sort());
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
      const removed = sweepOrphanedLabNetworks();
      expect(ownedBy(livePid)).toEqual([]);
      // What it says it removed, in its words (unless a parallel sweep was quicker).
      if (removed.some((r) => r.includes(String(livePid)))) expect(removed).toEqual(expect.arrayContaining([`network namespace ${live[0]}`, `link ${live[1]}`, `link ${live[2]}`, `nft table inet ${live[3]}`]));
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});
