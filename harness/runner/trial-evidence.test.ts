// Evidence survives a failed recovery, end to end on real brokers and real fault disks: a power
// cut whose brokers never come back (the restart fails: a seam over a real process target) keeps
// the trial's ledger, a check.json saying what failed, the broker logs and every broker's cut
// and final image with disks.json. The trial is a finding (unavailable after the fault, naming
// where the evidence is), the cell goes on with its next attempt, an expectation on the loss is
// NOT EVALUATED for it, and the run is FAIL naming the evidence.
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

/** The real process target on fault disks, whose clusters cannot restart a broker after the cut. */
function neverComesBack(scenarioVm: { diskMiB: number }): Target {
  const real = processTarget({ faultDisk: true, vm: scenarioVm });
  return {
    ...real,
    async start(o) {
      const c = (await real.start(o)) as FaultableCluster;
      c.restart = async (ids) => {
        throw new Error(`induced: broker ${ids.join(', ')} does not come back`);
      };
      return c;
    },
  };
}

describe('trial evidence', () => {
  it('a trial whose cluster never came back is kept as unavailable with its ledger, check.json, broker logs and disk images; the cell goes on; the loss is NOT EVALUATED and the run FAIL, naming the evidence', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const file = path.join(work, 'never-back.yaml');
    writeFileSync(
      file,
      `question: Does a trial whose brokers never come back keep its evidence?
target: process
vm: { diskMiB: 256 }
cluster: { brokers: 1, topic: gone, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { io: buffered, acks: 1, flush: per-batch }
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 3s, repetitions: 2 }
faults:
  - kind: power-cut
    target: all
    when: { between: [1s, 1500ms] }
expectations:
  - ackedLost == 0 in every trial
`,
    );
    const scenario = loadScenario(file);
    const lines: string[] = [];
    const out = await runScenario({
      scenario,
      target: neverComesBack({ diskMiB: 256 }),
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
    const repDir = path.join(out.runDir, 'cells', `01-${cell.id.replace(/[^A-Za-z0-9=.,:_-]+/g, '_')}`, 'rep-1');
    const u = unavailable[0]!;
    expect(u).toMatchObject({ fault: 'power-cut', targets: [1], evidence: repDir });
    expect(u.failed).toContain('did not come back within the recovery timeout');
    expect(u.failed).toContain('induced: broker 1 does not come back');
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
    // The ledger was written before the check: every acknowledged batch is there.
    const ledger = readLedgerFile(path.join(repDir, 'ledger.ndjson'));
    expect(ledger.filter((b) => b.status === 'acked').reduce((a, b) => a + b.records, 0)).toBe(u.acked);
    const check = JSON.parse(readFileSync(path.join(repDir, 'check.json'), 'utf8')) as { failed: { stage: string; message: string }; evidence: string };
    expect(check.failed.stage).toBe('recovery after the fault: the cluster did not come back');
    expect(check.failed.message).toContain('does not come back');
    expect(check.evidence).toBe(repDir);
    expect(existsSync(path.join(repDir, 'cluster', 'broker-1.log'))).toBe(true);
    const disks = JSON.parse(readFileSync(path.join(repDir, 'disks.json'), 'utf8')) as DisksManifest;
    expect(disks.keptBecause).toEqual(['the cluster was unavailable after the fault']);
    expect(disks).toMatchObject({ cell: cell.id, trial: 0, topic: 'gone', driver: 'http' });
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
  }, 120_000);
});
