// One power cut on the NBD disk in CI, end to end through the real CLI bundle: a QEMU guest
// under TCG whose data disk is the harness's NBD server with a volatile write cache
// (scenarios/nbd-power-cut-smoke.yaml: fdatasync per batch, one trial), SIGKILL of QEMU
// mid-load, onCut drop-unflushed, a reboot on the same disk, broker recovery, the checker.
// About a minute here: the guest boots twice under software emulation.
import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWriteLog } from './write-log.ts';
import type { RunResult } from '../results/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const scenario = path.join(root, 'scenarios/nbd-power-cut-smoke.yaml');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nbd-cut-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function qemuPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.includes('qemu-system') && cmd.includes(work);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('durolab bench nbd-power-cut-smoke (QEMU, TCG, NBD disk)', () => {
  it('fdatasync per batch loses nothing acknowledged when the volatile cache is dropped at the cut', async () => {
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', scenario, '--results-dir', results, '--reports-dir', path.join(work, 'reports')], { reject: false, timeout: 300_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('PASS  ackedLost == 0 in every trial');
    expect(r.stdout).toMatch(/disk model: virtio-blk over the harness's NBD disk with a volatile write cache/);
    expect(r.stdout).toMatch(/NBD disk .*: \d+ writes .*\d+ flushes/);
    const run = JSON.parse(readFileSync(path.join(results, 'nbd-power-cut-smoke', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.status).toBe('complete');
    expect(run.diskModel).toBe('nbd-volatile-cache+drop-unflushed');
    const [cell] = run.cells;
    const trial = cell!.trials![0]!;
    expect(trial.fault!.kind).toBe('power-cut');
    expect(trial.fault!.liveAtCut).toBe(true);
    expect(trial.fault!.ackedBeforeCut).toBeGreaterThan(0);
    expect(trial.fault!.diskAtCut?.['1']).toMatchObject({ policy: 'drop-unflushed' });
    expect(trial.ledger.ackedLost).toBe(0);
    expect(trial.ledger.corrupt).toBe(0);
    // The write log beside the disk image holds the trial's WRITEs and FLUSHes, intact.
    // The write log sits beside the broker's data directory, which the runner removes after the trial.
    const wlog = path.join(results, 'nbd-power-cut-smoke', run.runId, 'cells', readdirSync(path.join(results, 'nbd-power-cut-smoke', run.runId, 'cells'))[0]!, 'rep-1', 'broker-1.disk.wlog');
    const log = readWriteLog(wlog);
    expect(log.truncated).toBeNull();
    expect(log.records.filter((x) => x.op === 'flush').length).toBeGreaterThan(10);
    expect(qemuPids()).toEqual([]);
    expect(existsSync(path.join(results, 'nbd-power-cut-smoke', 'latest'))).toBe(true);
  }, 320_000);

  it('Ctrl-C mid-trial and a trial failed by a full write log leave no QEMU and no NBD socket behind', async () => {
    const sockets = (out: string) => [...out.matchAll(/socket (\/tmp\/durolab-nbd-[^/]+)\/disk\.sock/g)].map((m) => m[1]!);
    // Ctrl-C once the load runs.
    const child = execa(process.execPath, [cli, 'bench', scenario, '--results-dir', path.join(work, 'int-results'), '--no-report'], { reject: false, timeout: 240_000 });
    let out = '';
    let sent = false;
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      // One Ctrl-C (a second one exits at once, by design).
      if (!sent && /rep 1: 1\/3s/.test(out)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const r = await child;
    expect(r.exitCode, out + r.stderr).toBe(130);
    expect(sockets(out).length).toBeGreaterThan(0);
    for (const dir of sockets(out)) expect(existsSync(dir), dir).toBe(false);
    expect(qemuPids()).toEqual([]);

    // A write log limit the guest passes while it boots or early in the load: the trial fails with the log's message.
    const tiny = path.join(work, 'tiny-log.yaml');
    writeFileSync(tiny, readFileSync(scenario, 'utf8').replace('    model: volatile-cache', '    model: volatile-cache\n    writeLogLimit: 128KiB'));
    const f = await execa(process.execPath, [cli, 'bench', tiny, '--results-dir', path.join(work, 'full-results'), '--no-report'], { reject: false, timeout: 240_000 });
    const text = f.stdout + f.stderr;
    expect(f.exitCode, text).toBe(1);
    expect(text).toMatch(/write log .*disk\.wlog: recording this request would take it to \d+ bytes, over its limit of 131072 bytes/);
    for (const dir of sockets(text)) expect(existsSync(dir), dir).toBe(false);
    expect(qemuPids()).toEqual([]);
  }, 520_000);
});
