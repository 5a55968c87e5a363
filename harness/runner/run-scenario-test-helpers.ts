// Shared by the tests that run a compiled scenario in this process and read both run.json's
// figures and the terminal's lines (full-disk.test.ts, harness/faults/disk-full.test.ts).
import type { TestContext } from 'vitest';
import { loadTarget } from '../targets/registry.ts';
import { scenarioWants } from '../faults/scenario-wants.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { requireKafka } from '../targets/kafka/kafka-requirements.ts';
import { missingRequirement } from '../../test/requirements.ts';
import type { RunResult } from '../results/types.ts';
import type { Scenario } from '../model/scenario.ts';
import { runScenario } from './run-scenario.ts';

/** Runs `scenario` on its target with results under `resultsDir`; `out` holds every progress line. */
export async function runScenarioHere(scenario: Scenario, resultsDir: string): Promise<{ run: RunResult; out: string }> {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  const target = await loadTarget(scenario.target, { scenario, wants: scenarioWants(scenario), log });
  const { run } = await runScenario({ scenario, target, resultsDir, allowHostSysctl: false, signal: new AbortController().signal, log });
  return { run, out: lines.join('\n') };
}

/** Apache Kafka and the host route's fault disk (both engines on their fault disks): missing under CI=true is a failure. */
export async function requireKafkaAndFaultDisk(ctx: TestContext): Promise<void> {
  await requireKafka(ctx);
  const why = hostDiskPrerequisiteProblem();
  if (why) missingRequirement(ctx, why);
}
