// Evidence survives a failed check, end to end on real brokers and real fault disks: a power cut
// whose brokers never come back (the restart fails: a seam over a real process target) keeps
// the trial's ledger, a check.json saying what failed, the broker logs and every broker's cut
// and final image with disks.json; the cell fails, naming where the evidence is, and the run's
// expectations FAIL.
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
  it('a trial whose cluster never came back keeps its ledger, check.json, broker logs and disk images, and the run is FAIL naming them', async (ctx) => {
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
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 3s, repetitions: 1 }
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
    expect(cell.status).toBe('failed');
    const repDir = path.join(out.runDir, 'cells', `01-${cell.id.replace(/[^A-Za-z0-9=.,:_-]+/g, '_')}`, 'rep-1');
    expect(cell.note).toContain(`evidence kept in ${repDir}`);
    expect(cell.note).toContain('induced: broker 1 does not come back');
    expect(out.run.expectations[0]!.state).toBe('fail');
    // The ledger was written before the check: every acknowledged batch is there.
    const ledger = readLedgerFile(path.join(repDir, 'ledger.ndjson'));
    expect(ledger.filter((b) => b.status === 'acked').length).toBeGreaterThan(0);
    const check = JSON.parse(readFileSync(path.join(repDir, 'check.json'), 'utf8')) as { failed: { stage: string; message: string }; evidence: string };
    expect(check.failed.stage).toBe('recovery and check after the fault');
    expect(check.failed.message).toContain('does not come back');
    expect(check.evidence).toBe(repDir);
    expect(existsSync(path.join(repDir, 'cluster', 'broker-1.log'))).toBe(true);
    const disks = JSON.parse(readFileSync(path.join(repDir, 'disks.json'), 'utf8')) as DisksManifest;
    expect(disks.keptBecause).toEqual(['the recovery or check failed']);
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
