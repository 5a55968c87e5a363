// Killing the process that started a VM, by Ctrl-C or by SIGKILL, leaves no QEMU behind.
import { execa } from 'execa';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVmImage } from './image.ts';
import { ensureNoOrphans, findQemusMatching, isAlive } from './process-registry.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';

let work: string;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-vm-orphans-'));
  await buildVmImage({}); // so the children find it cached
}, 120_000);

afterAll(async () => {
  await ensureNoOrphans();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

async function qemuOfChild(signal: NodeJS.Signals, waitFor: RegExp): Promise<{ qemuPid: number; goneMs: number }> {
  const dir = path.join(work, signal);
  await fs.mkdir(dir);
  const child = execa(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'harness/vm/orphan-fixture.ts'), dir], { cwd: repoRoot(), reject: false, buffer: true });
  let out = '';
  const seen = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (waitFor.test(out)) resolve();
    });
    void child.then((r) => reject(new Error(`fixture exited early (${r.exitCode}): ${out}${r.stderr}`)));
  });
  await seen;
  const qemuPid = Number(/QEMU_PID (\d+)/.exec(out)![1]);
  expect(isAlive(qemuPid)).toBe(true);
  const t = performance.now();
  child.kill(signal);
  await child;
  const end = Date.now() + 5000;
  while (isAlive(qemuPid) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return { qemuPid, goneMs: Math.round(performance.now() - t) };
}

describe('no orphan QEMU', () => {
  it('SIGKILL of the parent while the VM boots: the kernel kills QEMU (parent-death signal)', async () => {
    const { qemuPid, goneMs } = await qemuOfChild('SIGKILL', /QEMU_PID \d+/);
    expect(isAlive(qemuPid)).toBe(false);
    console.log(`[vm] QEMU gone ${goneMs} ms after SIGKILL of its parent`);
  }, 60_000);

  it('Ctrl-C (SIGINT) of the parent after boot: QEMU is gone too', async () => {
    const { qemuPid, goneMs } = await qemuOfChild('SIGINT', /BOOTED/);
    expect(isAlive(qemuPid)).toBe(false);
    console.log(`[vm] QEMU gone ${goneMs} ms after SIGINT of its parent`);
    expect(findQemusMatching(work)).toEqual([]);
  }, 60_000);
});
