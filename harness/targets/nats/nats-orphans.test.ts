// No nats-server, disk server, qemu-storage-daemon or mount of a run outlives the harness on
// target nats with its store_dirs on the host route's fault disks: Ctrl-C of `durolab bench`
// stops them all and unmounts (exit 130); a SIGKILLed harness takes the servers and daemons down
// (setpriv --pdeathsig), and what the kernel keeps (a mount, a loop device) is cleared by the next
// run's sweep (harness/disk/host-disk.test.ts shows that sweep).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../engine/common/repo-root.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { goneWithin } from '../orphan-test-helpers.ts';
import { requireNats } from '../../../test/requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-orphans-'));
afterAll(() => {
  for (const pid of findProcessesMatching(work)) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

// A power cut late in a long load: the run is on its fault disks (mounted) when the signal comes.
const SCENARIO = `question: Does a signal to the harness leave a nats-server, a disk daemon or a mount behind?
target: nats
cluster: { brokers: 3, topic: orphans, partitions: 1, replicationFactor: 3 }
workload: { recordBytes: 256, connections: 1, rate: 1000, warmup: 0s, duration: 60s, repetitions: 1, extraTrials: 0 }
faults:
  - { kind: power-cut, target: all, when: { at: 50s } }
`;

const mounted = (mnt: string) => readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === mnt);

async function benchUntilLoadRuns(name: string) {
  const dir = path.join(work, name);
  const file = path.join(work, `${name}.yaml`);
  writeFileSync(file, SCENARIO);
  const child = execa(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'harness/cli/main.ts'), 'bench', file, '--results-dir', dir, '--no-report'], { cwd: repoRoot(), reject: false, all: true });
  let out = '';
  child.all!.on('data', (d: Buffer) => (out += d.toString()));
  const end = Date.now() + 90_000;
  while (!/\] rep 1: 1\/60s [\d,]+ records\/s/.test(out)) {
    if (child.exitCode !== null) throw new Error(`bench exited early (${child.exitCode}): ${out}`);
    if (Date.now() > end) throw new Error(`no load within 90 s: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The run's own processes (its nats-servers' configs, disk servers and images live under dir) and mount points.
  const servers = findProcessesMatching('nats-server', dir).filter((pid) => !/setpriv/.test(readFileSync(`/proc/${pid}/comm`, 'utf8')));
  const all = findProcessesMatching(dir);
  const mounts = [...out.matchAll(/-> ext4 on (\S+)/g)].map((m) => m[1]!);
  return { child, servers, all, mounts, out: () => out };
}

describe('target: nats on fault disks leaves nothing behind', () => {
  it('Ctrl-C (SIGINT) of durolab bench stops every nats-server and disk, unmounts, and exits 130', async (ctx) => {
    await requireNats(ctx);
    const run = await benchUntilLoadRuns('sigint');
    expect(run.servers.length, run.out()).toBe(3);
    expect(run.mounts.length, run.out()).toBe(3);
    for (const m of run.mounts) expect(mounted(m)).toBe(true);
    run.child.kill('SIGINT');
    const r = await run.child;
    expect(r.exitCode, run.out()).toBe(130);
    expect(await goneWithin(run.all, 10_000), run.out()).toBe(true);
    expect(findProcessesMatching(path.join(work, 'sigint'))).toEqual([]);
    for (const m of run.mounts) expect(mounted(m), m).toBe(false);
  }, 180_000);

  it('SIGKILL of durolab bench takes every nats-server and disk daemon down (pdeathsig)', async (ctx) => {
    await requireNats(ctx);
    const run = await benchUntilLoadRuns('sigkill');
    expect(run.servers.length, run.out()).toBe(3);
    run.child.kill('SIGKILL');
    await run.child;
    expect(await goneWithin(run.all, 10_000), run.out()).toBe(true);
  }, 180_000);
});
