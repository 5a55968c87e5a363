// The booted sample of an offline-checked target goes through the same boot check as a target
// that boots every state (boot-check.ts): durolab's broker as a process (target process) on the
// host route's recorded fault disk, 4 crash states checked offline by durolab's recovery, 2 of
// them booted (the broker starts on the state's image, driver http reads the partition back).
// With a flush per batch no state may lose an acknowledged record, and the booted answers must
// agree with the offline ones. Nothing (broker, daemon, mount) may be left afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostDiskPrerequisiteProblem } from '../../disk/host-disk.ts';
import { expectHostDisksGone } from '../../disk/host-disk-test-helpers.ts';
import { DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import { missingRequirement } from '../../../test/requirements.ts';
import { loadDriver } from '../../drivers/registry.ts';
import { processTarget } from '../../targets/process-target.ts';
import { resolveSettings } from '../../model/settings.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { runCrashStatesTrial } from './trial.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-boot-check-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('crash states: the booted sample of an offline check', () => {
  it("4 states of durolab's broker on the host route, 2 booted: none loses with per-batch, the booted answers agree", async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const lines: string[] = [];
    const disk = { ...DEFAULT_DISK_SPEC, model: 'volatile-cache' as const, onCut: 'drop-unflushed' as const };
    const target = processTarget({ faultDisk: true, vm: { diskMiB: 256, disk }, log: (l) => lines.push(l) });
    expect(target.capabilities.crashStateCheck ?? 'offline').toBe('offline');
    const t = await runCrashStatesTrial({
      target,
      driver: await loadDriver('http'),
      workDir: path.join(work, 'trial'),
      cluster: { brokers: 1, topic: 'states', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
      settings: resolveSettings({ flush: 'per-batch', sync: 'fsync', acks: 1 }, 1),
      workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, pipelining: 1 },
      cutAfterMs: 2000,
      states: 4,
      policy: 'drop-unflushed',
      seed: 7,
      boot: 2,
      log: (l) => lines.push(l),
    });
    const r = t.result;
    console.log(`durolab crash states: ${r.states} states, ${t.ackedAtCut} acknowledged, lost max ${r.lostMax}; booted ${JSON.stringify(t.booted.map((b) => ({ state: b.state, served: b.served, booted: b.booted })))}`);
    expect(t.checkedBy).toBe("durolab's recovery");
    expect(t.ackedAtCut).toBeGreaterThan(100);
    expect(r.states).toBe(4);
    expect(r.lostMax).toBe(0);
    expect(r.verification).toEqual({ booted: 2, agreed: 2 });
    expect(t.disagreements).toEqual([]);
    // The end state is among the booted: its broker served every acknowledged record.
    const end = t.booted.find((b) => b.kind === 'end')!;
    expect(end.booted!.served).toBeGreaterThanOrEqual(t.ackedAtCut);
    expectHostDisksGone(lines.join('\n'), 3);
    expect(findProcessesMatching(work)).toEqual([]);
  }, 120_000);
});
