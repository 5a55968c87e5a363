// A real power cut in CI, end to end through the real CLI bundle: QEMU guests under TCG,
// SIGKILL of QEMU mid-load, a reboot on the same disk, broker recovery, the checker.
// scenarios/power-cut-smoke.yaml: buffered writes with no flush (60 s journal commit, 1 h
// dirty expiry) against fdatasync per batch, 2 trials each. This file takes ~2-3 minutes:
// each trial boots a VM twice under software emulation.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';
import { TRIAL_STEP_KEYS } from '../results/trial-steps.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const scenario = path.join(root, 'scenarios/power-cut-smoke.yaml');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-power-cut-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** QEMU processes started for this test's runs (their disk images live under `work`). */
function qemuPids(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes('qemu-system') && cmd.includes(work)) out.push(Number(pid));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

describe('durolab bench power-cut-smoke (QEMU, TCG)', () => {
  it('per-batch fdatasync loses nothing acknowledged in every trial; buffered with no flush loses records', async () => {
    const results = path.join(work, 'results');
    const reports = path.join(work, 'reports');
    const started = Date.now();
    const r = await execa(process.execPath, [cli, 'bench', scenario, '--results-dir', results, '--reports-dir', reports], {
      reject: false,
      timeout: 400_000,
    });
    const wallMs = Date.now() - started;
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('PASS  ackedLost == 0 where flush == per-batch in every trial');
    expect(r.stdout).toContain('PASS  ackedLost > 0 where flush == never');
    expect(r.stdout).toMatch(/power-cut of broker 1 at \d\.\d\d s/);
    const run = JSON.parse(readFileSync(path.join(results, 'power-cut-smoke', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.status).toBe('complete');
    expect(run.target).toBe('vm');
    const [never, perBatch] = run.cells;
    expect(never.params.flush).toBe('never');
    expect(perBatch.params.flush).toBe('per-batch');
    for (const c of run.cells) {
      expect(c.status).toBe('ok');
      expect(c.accelerator).toBe('tcg');
      expect(c.trials).toHaveLength(2);
      for (const t of c.trials!) {
        const f = t.fault!;
        expect(f.kind).toBe('power-cut');
        expect(f.atMs).toBeGreaterThanOrEqual(1000);
        expect(f.ackedBeforeCut).toBeGreaterThan(0);
        expect(f.guestDirtyBeforeCut).toBeDefined();
        expect(f.liveAtCut).toBe(true);
        expect(f.recovery[0].cleanShutdown).toBe(false);
        expect(f.recovery[0].restartMs).toBeGreaterThan(0);
        expect(t.ledger.corrupt).toBe(0);
        expect(t.ledger.replicasDisagree).toBe(0);
        // Accounting: a request is pending only once written to a connected socket (one per
        // connection at most); the cut's refusals are never-sent requests and after-fault errors.
        expect(t.requests!.pending).toBeLessThanOrEqual(8);
        expect(t.requests!.acked + t.requests!.failed + t.requests!.pending + t.requests!.neverSent).toBe(t.requests!.sent);
        expect(t.errorsAfterFault).toBeDefined();
        // The trial's wall time step by step: every step of a VM power-cut trial is there and
        // took time, and the contiguous steps add up to the cycle (rounding: 1 ms a step).
        // The image step of the first trial found the image; the later ones only link it.
        const tm = t.timing!;
        expect(tm.steps.image).toBeGreaterThanOrEqual(0);
        for (const step of ['setup', 'boot', 'brokerStart', 'leaders', 'load', 'cut', 'restart', 'recovery', 'check', 'stop'] as const) {
          expect(tm.steps[step], step).toBeGreaterThan(0);
        }
        const sum = TRIAL_STEP_KEYS.reduce((a, k) => a + (tm.steps[k] ?? 0), 0);
        expect(Math.abs(sum - tm.totalMs)).toBeLessThanOrEqual(TRIAL_STEP_KEYS.length);
        expect(tm.totalMs).toBe(t.cycleMs);
        // Steps are laps of one clock: the load step ends at the fault's moment, before the cut, the boot step
        // and the restart resumed the guest saved once per VM shape (harness/vm/vm-template.ts; the
        // first trial on a machine makes it in its image step), and the broker's log recovery fits in the recovery step.
        expect(tm.steps.load!).toBeLessThanOrEqual(f.atMs + 50);
        expect(tm.steps.load! + tm.steps.cut!).toBeGreaterThanOrEqual(f.atMs - 50);
        expect(tm.detail!.resumedBoots, `VM starts that booted instead: ${JSON.stringify(tm.notResumed)}`).toBe(2);
        expect(tm.notResumed).toBeUndefined();
        expect(tm.detail!.spawnToInitMs).toBeUndefined();
        expect(tm.detail!.restartSpawnToInitMs).toBeUndefined();
        expect(tm.detail!.logRecoveryMs!).toBeLessThan(tm.steps.recovery!);
        expect(tm.loadAvg1).toBeGreaterThanOrEqual(0);
      }
      // Broker figures read at the cut's moment, before it (the fault waits up to 2 s; a warm read
      // takes 0.2-0.4 s in a TCG guest under load), the segment count from the broker in the
      // guest (the host cannot see the guest's data dir), and the guest disk's own flush count.
      expect(c.broker.takenAt).toBe('before-fault');
      expect(c.broker.readBeforeFaultMs).toBeGreaterThanOrEqual(0);
      expect(c.broker.readBeforeFaultMs).toBeLessThan(c.trials![c.trials!.length - 1].fault!.atMs);
      expect(c.broker.segmentsFrom).toBe('broker');
      expect(c.broker.segments).toBeGreaterThanOrEqual(1);
      expect(c.broker.bytes).toBeGreaterThan(0);
      expect(c.broker.deviceFlushes).toBeTypeOf('number');
      expect(c.errorsAfterFault).toBeDefined();
    }
    // fdatasync per batch: the broker flushed, and the guest disk saw flushes of the same order.
    // Not ">=" exactly: the device's count is taken from the guest's probe samples up to the
    // broker read's answer, and the last of them can be up to 250 ms older than the read.
    expect(perBatch.broker.flushes).toBeGreaterThan(0);
    expect(perBatch.broker.deviceFlushes!).toBeGreaterThan(perBatch.broker.flushes! / 2);
    for (const t of perBatch.trials!) {
      expect(t.ledger.ackedLost).toBe(0);
      expect(t.ledger.hwWentBack).toBe(0);
    }
    // Robust under every cut time in [1, 2.5] s: nothing of a buffered write reaches the disk
    // before a 60 s commit or a 1 h dirty expiry, so each trial loses what it acknowledged.
    expect(Math.max(...never.trials!.map((t) => t.ledger.ackedLost))).toBeGreaterThan(0);
    const lossy = never.trials!.filter((t) => t.ledger.ackedLost > 0);
    for (const t of lossy) expect(t.fault!.lossWindowSec).toBeGreaterThan(0);
    // The report shows the loss window chart for the lossy trials.
    const html = readFileSync(path.join(reports, 'power-cut-smoke', run.runId, 'index.html'), 'utf8');
    expect(html).toContain('data-chart="chart-loss-window"');
    expect(html).toContain('id="tcg-banner"');
    // The report's breakdown: one row per cell, the goal's verdict beside it.
    expect(html).toContain('id="cycle-table"');
    for (const c of run.cells) expect(html).toContain(`data-cell="${c.id}"`);
    expect(html).toMatch(/data-verdict="(pass|fail|unknown)"/);
    expect(r.stdout).toContain('trial cycle step by step');

    const cycles = run.cells.flatMap((c) => c.trials!.map((t) => t.cycleMs!));
    console.log(`power-cut-smoke steps (ms): ${run.cells.flatMap((c) => c.trials!.map((t) => JSON.stringify(t.timing!.steps))).join(' ')}`);
    console.log(
      `power-cut-smoke: ${cycles.length} trials in ${(wallMs / 1000).toFixed(0)} s; trial cycle ${cycles.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s; ` +
        `acked lost: never ${never.trials!.map((t) => `${t.ledger.ackedLost}/${t.ledger.acked}`).join(', ')}, ` +
        `per-batch ${perBatch.trials!.map((t) => `${t.ledger.ackedLost}/${t.ledger.acked}`).join(', ')}; ` +
        `loss windows ${lossy.map((t) => t.fault!.lossWindowSec!.toFixed(2)).join(', ')} s; ` +
        run.cells
          .map(
            (c) =>
              `${c.params.flush}: segments ${c.broker.segments} (${c.broker.segmentsFrom}), flushes broker ${c.broker.flushes} / device ${c.broker.deviceFlushes}, ` +
              `requests pending/never-sent ${c.trials!.map((t) => `${t.requests!.pending}/${t.requests!.neverSent}`).join(', ')}, after the fault ${JSON.stringify(c.errorsAfterFault)}`,
          )
          .join('; '),
    );
    expect(qemuPids()).toEqual([]);
    expect(existsSync(path.join(results, 'power-cut-smoke', 'latest'))).toBe(true);
  }, 420_000);
});
