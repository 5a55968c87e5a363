// Every target/driver pair the registries offer passes the same run, through the scenario runner
// (no harness of its own): start a 1-broker cluster, produce under an ack ledger, kill the broker
// (SIGKILL) and restart it on its data, then read every acknowledged record back and check it
// (lost, duplicates, order, offsets, corruption); and, where the target offers cut-power, the
// same with a power cut on its fault disk (flush per batch: nothing acknowledged may be lost).
// The pairs come from the target registry's rows and each row's `drivers`, never a hand list: a
// new system's folder and registry rows are enough for it to be held to this. A target the main
// suite cannot start (notInMainSuite: QEMU guests, a cluster the lab did not start) has no case
// here, never a skipped one: a test names it, its reason and the suites that start it; a missing
// tool (prerequisiteProblem, the host fault disk's) is a skip outside CI and a failure under
// CI=true (test/requirements.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { stringify } from 'yaml';
import { compileScenario } from '../scenario/validate.ts';
import { runScenarioHere } from '../runner/run-scenario-test-helpers.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { TARGETS, TARGET_KINDS, type TargetKind } from './registry.ts';
import { FAULTS, type FaultKind } from '../faults/registry.ts';
import type { CellResult } from '../results/types.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-conformance-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A 1-broker scenario on `kind`, one cell per driver the target talks to, with one fault that stops the load. */
function conformanceScenario(kind: TargetKind, fault: FaultKind): string {
  const caps = TARGETS[kind].capabilities;
  return stringify({
    question: `conformance: does target ${kind} with each of its drivers keep every acknowledged record across a ${fault}?`,
    target: kind,
    // A power cut puts the broker on the target's fault disk (model file: it keeps every write it received).
    ...(FAULTS[fault].needs === 'cut-power' && caps.faultDisk === 'host' ? { vm: { diskMiB: 512 } } : {}),
    cluster: { brokers: 1, topic: 'conformance', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
    // One broker, acks=all (with one replica: the leader alone, as acks=1; every system has it) and a flush per batch:
    // a kill keeps the page cache, a power cut only what was flushed; both lose nothing acknowledged.
    settings: { acks: 'all', flush: 'per-batch', ...caps.baseSettings },
    matrix: { driver: [...caps.drivers] },
    workload: { recordBytes: '1KiB', recordsPerBatch: 16, connections: 2, pipelining: 1, rate: 'closed', warmup: '0s', duration: '4s', repetitions: 1 },
    faults: [{ kind: fault, target: 'all', when: { at: '2s' } }],
  });
}

/** A tool this target needs and the machine lacks: a skip outside CI, a failure under CI=true. */
async function requireTarget(ctx: TestContext, kind: TargetKind, fault: FaultKind): Promise<void> {
  const spec = TARGETS[kind];
  const problem = (await spec.prerequisiteProblem?.()) ?? null;
  if (problem) missingRequirement(ctx, `target ${kind}: ${problem}`);
  if (FAULTS[fault].needs === 'cut-power' && spec.capabilities.faultDisk === 'host') {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, `target ${kind}: ${why}`);
  }
}

/** What every cell of a conformance run must show: a load acknowledged, the fault delivered and recovered from, every acknowledged record served back intact. */
function expectConforms(c: CellResult, what: string): void {
  expect(c.status, `${what}: ${c.note ?? ''}`).toBe('ok');
  const [t] = c.trials ?? [];
  expect(t, what).toBeDefined();
  expect(t!.suspect ?? false, `${what}: ${t!.note ?? ''}`).toBe(false);
  expect(t!.fault, what).toBeDefined();
  expect(t!.fault!.recovery.length, what).toBeGreaterThan(0);
  const l = t!.ledger;
  expect(l.acked, what).toBeGreaterThan(0);
  expect({ ackedLost: l.ackedLost, duplicates: l.duplicates, outOfOrder: l.outOfOrder, corrupt: l.corrupt, inconsistentOffsets: l.inconsistentOffsets ?? 0, offsetChanged: l.offsetChanged ?? 0 }, what).toEqual({
    ackedLost: 0,
    duplicates: 0,
    outOfOrder: 0,
    corrupt: 0,
    inconsistentOffsets: 0,
    offsetChanged: 0,
  });
}

// Each target kind the main suite starts, with the faults this conformance asks of it: a process kill always, a power cut where it offers cut-power.
const ELSEWHERE = TARGET_KINDS.filter((kind) => TARGETS[kind].notInMainSuite !== undefined);
const CASES = TARGET_KINDS.filter((kind) => !ELSEWHERE.includes(kind)).flatMap((kind) => {
  const actions = TARGETS[kind].capabilities.faultActions;
  return (['process-kill', 'power-cut'] as const).filter((f) => actions.includes(FAULTS[f].needs)).map((fault) => ({ kind, fault }));
});

describe('conformance: every target/driver pair of the registries', () => {
  it('offers each target kind the main suite starts with at least one driver and a process kill', () => {
    for (const kind of TARGET_KINDS.filter((k) => !ELSEWHERE.includes(k))) {
      expect(TARGETS[kind].capabilities.drivers.length, kind).toBeGreaterThan(0);
      expect(CASES.some((c) => c.kind === kind && c.fault === 'process-kill'), kind).toBe(true);
    }
  });

  it('names the targets it cannot start (vm, external), why, and the suites that start them', () => {
    expect(ELSEWHERE.length).toBeLessThan(TARGET_KINDS.length);
    for (const kind of ELSEWHERE) {
      const why = TARGETS[kind].notInMainSuite!;
      console.log(`conformance: target ${kind} is not started here: ${why}`);
      // The reason names where it runs: the VM suite's config, or the target's own tests that start a cluster for it.
      expect(why, kind).toMatch(/vitest\.vm\.config\.ts|\*\.test\.ts/);
      expect(TARGETS[kind].capabilities.drivers.length, kind).toBeGreaterThan(0);
    }
  });

  for (const { kind, fault } of CASES) {
    it(`target ${kind} × driver ${TARGETS[kind].capabilities.drivers.join(', ')}: ${fault}, every acknowledged record back`, async (ctx) => {
      await requireTarget(ctx, kind, fault);
      const scenario = compileScenario(conformanceScenario(kind, fault), `conformance-${kind}-${fault}.yaml`, { defaultName: `conformance-${kind}-${fault}` });
      const t0 = Date.now();
      const { run, out } = await runScenarioHere(scenario, path.join(work, `${kind}-${fault}`));
      expect(run.cells.map((c) => c.params.driver), out).toEqual([...TARGETS[kind].capabilities.drivers]);
      for (const c of run.cells) expectConforms(c, `target ${kind} driver ${String(c.params.driver)} ${fault}`);
      console.log(
        `conformance: target ${kind} ${fault}: ${run.cells.map((c) => `driver ${String(c.params.driver)} ${c.trials?.[0]?.ledger.acked ?? 0} acknowledged, 0 lost`).join('; ')} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }, 240_000);
  }
});
