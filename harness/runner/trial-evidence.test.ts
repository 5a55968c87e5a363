// Evidence survives a failed recovery, end to end on real brokers and real fault disks (a seam over
// a real process target). A power cut whose brokers are never restarted, so that no partition is
// led again within the recovery timeout, keeps the trial's ledger, a check.json saying what
// failed, the broker logs and every broker's cut and final image with disks.json; the trial is a
// finding (unavailable after the fault, naming where the evidence is), the cell goes on with its
// next attempt, an expectation on the loss is NOT EVALUATED for it, and the run is FAIL naming the
// evidence. A restart that fails (the lab's error, not the system's) fails the cell instead, with
// the same evidence kept.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster, Target } from '../targets/types.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import { runScenario } from './run-scenario.ts';
import { readLedgerFile } from '../recount/recount.ts';
import { runVerdict } from '../results/verdict.ts';
import { verdict } from '../report/findings.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-trial-evidence-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The real process target on fault disks with a short recovery timeout, whose clusters after the
 * cut either never restart the hit brokers (`never-led`: the real wait for leaders runs out) or
 * fail the restart itself (`restart-fails`).
 */
function neverComesBack(scenarioVm: { diskMiB: number }, how: 'never-led' | 'second-restart-fails'): Target {
  const real = processTarget({ faultDisk: true, vm: scenarioVm });
  let restarts = 0;
  return {
    ...real,
    capabilities: { ...real.capabilities, recoveryTimeoutMs: how === 'never-led' ? 3000 : real.capabilities.recoveryTimeoutMs },
    async start(o) {
      const c = (await real.start(o)) as FaultableCluster;
      const realRestart = c.restart.bind(c);
      c.restart = async (ids) => {
        if (how === 'never-led') return ids.map((brokerId) => ({ brokerId, restartMs: 0, partitions: [] }));
        if (++restarts === 1) return realRestart(ids);
        throw new Error(`induced: broker ${ids.join(', ')} could not be started`);
      };
      return c;
    },
  };
}

function neverBackScenario(repetitions: number) {
  const file = path.join(work, `never-back-${repetitions}.yaml`);
  writeFileSync(
    file,
    `question: Does a trial whose brokers never come back keep its evidence?
target: process
vm: { diskMiB: 256 }
cluster: { brokers: 1, topic: gone, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { io: buffered, acks: 1, flush: per-batch }
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 3s, repetitions: ${repetitions} }
faults:
  - kind: power-cut
    target: all
    when: { between: [1s, 1500ms] }
expectations:
  - ackedLost == 0 in every trial
`,
  );
  return loadScenario(file);
}

const repDirOf = (runDir: string, cellId: string, rep: number) => path.join(runDir, 'cells', `01-${cellId.replace(/[^A-Za-z0-9=.,:_-]+/g, '_')}`, `rep-${rep}`);

/** What a trial that did not finish its check keeps: the ledger, check.json, the broker log, the cut and final images; no mount left. */
function expectKeptEvidence(repDir: string, cellId: string, stage: string, keptBecause: string, ackedRecords?: number, trial = 0): void {
  const ledger = readLedgerFile(path.join(repDir, 'ledger.ndjson'));
  const acked = ledger.filter((b) => b.status === 'acked').reduce((a, b) => a + b.records, 0);
  expect(acked).toBeGreaterThan(0);
  if (ackedRecords !== undefined) expect(acked).toBe(ackedRecords);
  const check = JSON.parse(readFileSync(path.join(repDir, 'check.json'), 'utf8')) as { failed: { stage: string; message: string }; evidence: string };
  expect(check.failed.stage).toBe(stage);
  expect(check.evidence).toBe(repDir);
  expect(existsSync(path.join(repDir, 'cluster', 'broker-1.log'))).toBe(true);
  const disks = JSON.parse(readFileSync(path.join(repDir, 'disks.json'), 'utf8')) as DisksManifest;
  expect(disks.keptBecause).toEqual([keptBecause]);
  expect(disks).toMatchObject({ cell: cellId, trial, topic: 'gone', driver: 'http' });
  expect(disks.brokers).toHaveLength(1);
  const b = disks.brokers[0]!;
  expect(b).toMatchObject({ brokerId: 1, target: 'process', fileSystem: 'ext4', dataDirOnDisk: '/broker-data', sizeMiB: 256 });
  expect(b.cutAtMs).toBeGreaterThan(0);
  for (const img of [b.cut!, b.final!]) {
    expect(existsSync(path.join(repDir, img.file))).toBe(true);
    expect(img.allocatedBytes).toBeGreaterThan(0);
  }
  // The cluster was stopped: the disk images were released (no mount of the lab is left).
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(repDir);
}

describe('trial evidence', () => {
  it('a trial whose cluster never came back is kept as unavailable with its ledger, check.json, broker logs and disk images; the cell goes on; the loss is NOT EVALUATED and the run FAIL, naming the evidence', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const scenario = neverBackScenario(2);
    const lines: string[] = [];
    const out = await runScenario({
      scenario,
      target: neverComesBack({ diskMiB: 256 }, 'never-led'),
      resultsDir: path.join(work, 'results'),
      allowHostSysctl: false,
      signal: new AbortController().signal,
      log: (l) => lines.push(l),
      baseSeed: 3,
    });
    const cell = out.run.cells[0]!;
    // Both attempts ran (the first's unavailability did not stop the cell), neither was checked nor replaced.
    expect(cell.status).toBe('ok');
    expect(cell.trials).toEqual([]);
    const unavailable = cell.unavailableTrials!;
    expect(unavailable.map((u) => u.index)).toEqual([0, 1]);
    const repDir = repDirOf(out.runDir, cell.id, 1);
    const u = unavailable[0]!;
    expect(u).toMatchObject({ fault: 'power-cut', targets: [1], evidence: repDir });
    expect(u.failed).toMatch(/^the cluster did not come back: no leader within \d+\.\d s of the restart \(recovery timeout 3 s\)/);
    expect(u.recoveryTimeoutMs).toBe(3000);
    expect(u.acked).toBeGreaterThan(0);
    expect(u.ackedBeforeCut).toBeGreaterThan(0);
    expect(u.ackedBeforeCut).toBeLessThanOrEqual(u.acked);
    expect(u.cutAtSec).toBeGreaterThanOrEqual(1);
    expect(lines.some((l) => l.includes('UNAVAILABLE after the power-cut of broker 1') && l.includes(`evidence in ${repDir}`))).toBe(true);
    // Not lost and not kept: the ledger sums nothing of them; the loss expectation cannot be judged.
    expect(cell.ledger.acked).toBe(0);
    expect(out.run.expectations[0]!.state).toBe('not-evaluated');
    expect(out.run.expectations[0]!.detail).toContain(`trial 1 not checked: unavailable after the power-cut`);
    expect(out.run.expectations[0]!.detail).toContain(`trial 2 not checked`);
    // The run is FAIL all the same, naming where the evidence is (terminal and report header).
    const v = runVerdict(out.run, false);
    expect(v.code).toBe(1);
    expect(v.line).toContain(`2 trial(s) unavailable after the fault: the cluster did not come back (evidence in ${repDir}, `);
    expect(verdict(out.run)).toMatchObject({ tone: 'fail', text: expect.stringContaining('2 trial(s) UNAVAILABLE after the fault') });
    // The ledger was written before the check: every acknowledged batch is there; the rest of the evidence beside it.
    expectKeptEvidence(repDir, cell.id, 'recovery after the fault: the cluster did not come back', 'the cluster was unavailable after the fault', u.acked);
  }, 120_000);

  it('a restart that fails (the lab could not start a broker) fails the cell, naming the evidence it kept; the trial before it stays; the run is FAIL', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const out = await runScenario({
      scenario: neverBackScenario(2),
      target: neverComesBack({ diskMiB: 256 }, 'second-restart-fails'),
      resultsDir: path.join(work, 'results-restart'),
      allowHostSysctl: false,
      signal: new AbortController().signal,
      log: () => {},
      baseSeed: 3,
    });
    const cell = out.run.cells[0]!;
    expect(cell.status).toBe('failed');
    expect(cell.unavailableTrials).toBeUndefined();
    // The first trial recovered and was checked: it stays, with its figures; the second failed the cell.
    expect(cell.trials!.map((t) => [t.index, t.ledger.ackedLost])).toEqual([[0, 0]]);
    expect(cell.ledger.acked).toBeGreaterThan(0);
    const repDir = repDirOf(out.runDir, cell.id, 2);
    expect(cell.note).toContain(`evidence kept in ${repDir}`);
    expect(cell.note).toContain('induced: broker 1 could not be started');
    expect(cell.note).toContain('the 1 trial(s) that finished before it are kept');
    expect(out.run.expectations[0]!.state).toBe('fail');
    expect(runVerdict(out.run, false).code).toBe(1);
    expectKeptEvidence(repDir, cell.id, 'recovery and check after the fault', 'the recovery or check failed', undefined, 1);
  }, 120_000);
});
