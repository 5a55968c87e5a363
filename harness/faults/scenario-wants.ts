// What a scenario wants of the target that runs it, decided from the fault registry and the
// scenario's blocks, and handed to the target's loader (TargetLoadOptions.wants): the targets
// never look a fault kind up.
import type { TargetLoadOptions, TargetWants } from '../targets/target-kind.ts';
import type { FaultAction } from '../model/kinds.ts';
import { diskVariesByCell } from '../model/disk-spec.ts';
import { cellNetwork } from '../model/cluster-network.ts';
import { everyFaultEntry } from '../model/scenario.ts';
import { FAULTS, needsLabNetwork } from './registry.ts';

type ScenarioBlocks = TargetLoadOptions['scenario'];

/** What a fault kind needs that only a fault disk gives: its power cut, its write log, its filesystem to fill, its reads to fail. */
const FAULT_DISK_ACTIONS: readonly FaultAction[] = ['cut-power', 'record-write-log', 'fill-disk', 'fail-disk-reads'];

/** A host-route target puts its brokers on the fault disk when a fault cuts power, records or fills it, or the scenario names a disk. */
export function wantsFaultDisk(scenario: ScenarioBlocks): boolean {
  // A kill or a planned leader move needs no fault disk: plain data dirs (a power cut, a write log and a full disk do).
  const cuts = everyFaultEntry(scenario).some((f) => FAULT_DISK_ACTIONS.includes(FAULTS[f.kind].needs));
  return cuts || scenario.vm?.disk !== undefined || diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {});
}

/**
 * Some cell of the scenario starts its nodes in the lab network (`cluster.network: namespaces`,
 * or a `network` setting or axis value), or a fault of the scenario acts on it (partition,
 * slow-link: the scenario's validation then sets cluster.network to namespaces).
 */
export function wantsLabNetwork(scenario: ScenarioBlocks): boolean {
  if (everyFaultEntry(scenario).some((f) => needsLabNetwork(f.kind))) return true;
  const base = cellNetwork(scenario.cluster ?? {}, scenario.settings ?? {});
  return base === 'namespaces' || (scenario.matrix ?? []).some((c) => cellNetwork(scenario.cluster ?? {}, { ...scenario.settings, ...c.params }) === 'namespaces');
}

/** Both, for TargetLoadOptions.wants. */
export function scenarioWants(scenario: ScenarioBlocks): TargetWants {
  return { faultDisk: wantsFaultDisk(scenario), labNetwork: wantsLabNetwork(scenario) };
}
