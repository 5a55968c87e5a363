// Checks of a scenario's faults: against the target(s) of the run (what each can deliver and
// what else it refuses, e.g. a fault an external cluster has no command template for), the cluster (broker ids; the shape a
// kind asks for itself, FaultKindSpec.checkScenario) and the load's length (a fault after the
// load never happens, a pause must heal within it), and the schedule as a whole
// (schedule-checks.ts: entries that cannot both apply).
// Item by item, so one malformed fault does not hide what is wrong with the others.
import type { ScenarioIssue } from './errors.ts';
import { faultSchema } from './schema.ts';
import type { SourceFile } from './source.ts';
import type { Fault } from '../model/scenario.ts';
import type { ExternalSpec } from '../model/external-spec.ts';
import { FAULTS, canDeliver, deliverableKinds, needsLabNetwork, type FaultKind } from '../faults/registry.ts';
import { checkSchedule } from './schedule-checks.ts';
import { TARGET_KINDS, capabilitiesOf, type TargetKind } from '../targets/registry.ts';

export interface FaultChecksInput {
  src: SourceFile;
  /** The file's `faults:` as written (each item is parsed on its own here). */
  rawFaults: unknown;
  /** The run's targets, or null when the target is misspelt (reported elsewhere). */
  kinds: TargetKind[] | null;
  cluster: { brokers: number; partitions: number; replicationFactor?: number } | undefined;
  /** The file's external: block as parsed (target: external: its command templates). */
  external: Partial<ExternalSpec> | undefined;
  /** Where the list stands in the file: ['faults'], or ['faultSets', name]. */
  at?: PropertyKey[];
  /** The load's length in seconds (warm-up + duration), when the workload parsed. */
  load: { warmupSec: number; durationSec: number; durationFromCommandLine: boolean } | undefined;
}

export function checkFaults(input: FaultChecksInput): ScenarioIssue[] {
  const { src, kinds, cluster, external, load } = input;
  const at = input.at ?? ['faults'];
  const issues: ScenarioIssue[] = [];
  const items: Array<Fault | undefined> = Array.isArray(input.rawFaults)
    ? input.rawFaults.map((item) => {
        const r = faultSchema.safeParse(item);
        return r.success ? r.data : undefined;
      })
    : [];
  items.forEach((f, i) => {
    if (!f) return;
    for (const target of kinds ?? []) {
      for (const x of capabilitiesOf(target).refuseFault?.(f, { external }) ?? []) issues.push(src.issue([...at, i, ...x.path], x.expected, x.found));
      // Refused here, with the target named, not only when its cluster starts.
      if (!canDeliver(f.kind, capabilitiesOf(target).faultActions)) {
        const can = deliverableKinds(capabilitiesOf(target).faultActions);
        const able = TARGET_KINDS.filter((t) => canDeliver(f.kind, capabilitiesOf(t).faultActions));
        const why = capabilitiesOf(target).lacksFaultAction?.[FAULTS[f.kind].needs];
        issues.push(
          src.issue(
            [...at, i, 'kind'],
            `${can.length ? can.join(' | ') : 'no fault'} on target: ${target} (${f.kind} needs target: ${able.join(' | ') || 'none available'}${why ? `; target ${target}: ${why}` : labReason(f.kind, target)})`,
            `'${f.kind}'`,
          ),
        );
      }
    }
    for (const target of kinds ?? []) {
      if (!canDeliver(f.kind, capabilitiesOf(target).faultActions)) continue;
      for (const x of FAULTS[f.kind].checkTarget?.(f as unknown as Record<string, unknown>, capabilitiesOf(target), target) ?? []) issues.push(src.issue([...at, i, ...x.path], x.expected, x.found));
    }
    // The kind's own demands on the scenario (e.g. crash states: one broker, one partition).
    for (const x of FAULTS[f.kind].checkScenario?.(f as unknown as Record<string, unknown>, cluster) ?? []) {
      issues.push(src.issue(x.topLevel ? x.path : [...at, i, ...x.path], x.expected, x.found));
    }
    if (typeof f.target === 'object' && cluster) {
      for (const b of 'broker' in f.target ? [f.target.broker] : f.target.brokers) {
        if (b >= cluster.brokers) issues.push(src.issue([...at, i, 'target'], `a broker id from 0 to ${cluster.brokers - 1} | leader | followers | one | minority | majority | all`, String(b)));
      }
    }
    if ((f.target === 'followers' || f.target === 'one') && cluster && (cluster.replicationFactor ?? cluster.brokers) < 2) {
      issues.push(src.issue([...at, i, 'target'], `leader | all | a broker id with replicationFactor 1 (${f.target}: the leader has none)`, f.target));
    }
    if (load) {
      const loadSec = load.warmupSec + load.durationSec;
      const expected = `a time within the load (warm-up + duration = ${loadSec} s${load.durationFromCommandLine ? ', duration set by DURATION' : ''})`;
      if ('at' in f.when && f.when.at >= loadSec) issues.push(src.issue([...at, i, 'when', 'at'], expected, `${f.when.at} s`));
      if ('between' in f.when && f.when.between[1] > loadSec) {
        issues.push(src.issue([...at, i, 'when', 'between', 1], expected, `${f.when.between[1]} s`));
      }
    }
  });
  for (const x of checkSchedule(items, load ? load.warmupSec + load.durationSec : null)) issues.push(src.issue([...at, ...x.path], x.expected, x.found));
  return issues;
}

/** Why a target cannot take a fault that acts on the lab network (its refuseLabNetwork), for the refusal. */
function labReason(kind: FaultKind, target: TargetKind): string {
  const why = needsLabNetwork(kind) ? capabilitiesOf(target).refuseLabNetwork : undefined;
  return why ? `; target ${target} has no lab network: ${why}` : '';
}
