// `scenario check`'s rule for cluster.network (harness/model/cluster-network.ts): a cell that asks for
// namespaces on a target that cannot start its nodes in them is refused, naming the target and why.
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import type { SettingValue } from './settings.ts';
import type { MatrixCell } from '../model/scenario.ts';
import { cellTargetKind } from './target-axis.ts';
import { cellNetwork, type ClusterNetwork } from '../model/cluster-network.ts';
import { capabilitiesOf, type TargetKind } from '../targets/registry.ts';

export interface LabNetworkCheckInput {
  src: SourceFile;
  kinds: TargetKind[] | null;
  /** The scenario's target (cells without a target axis run on it). */
  target: TargetKind;
  network: ClusterNetwork | undefined;
  baseSettings: Record<string, SettingValue> | undefined;
  cells: MatrixCell[] | undefined;
  /** Whether the file varies `network` in matrix: (else it is set in settings: or cluster:). */
  matrixHasNetwork: boolean;
}

/** Refuses `namespaces` for a cell whose target cannot start its nodes in namespaces, naming the target and why. */
export function checkLabNetwork(input: LabNetworkCheckInput): ScenarioIssue[] {
  const { src, kinds, target, network, baseSettings, cells, matrixHasNetwork } = input;
  const issues: ScenarioIssue[] = [];
  for (const kind of kinds ?? []) {
    const why = capabilitiesOf(kind).refuseLabNetwork;
    if (!why) continue;
    const asks = (cells ?? [{ id: 'base', label: '', params: {} }]).some(
      (c) => cellTargetKind(c.params, target) === kind && cellNetwork({ ...(network ? { network } : {}) }, { ...baseSettings, ...c.params }) === 'namespaces',
    );
    if (!asks) continue;
    const path = matrixHasNetwork ? ['matrix', 'network'] : baseSettings?.network !== undefined ? ['settings', 'network'] : ['cluster', 'network'];
    issues.push(src.issue(path, `network: loopback on target: ${kind} (${why})`, 'namespaces'));
  }
  return issues;
}

/**
 * A scenario with a fault that acts on the lab network (partition, slow-link) runs every cell in
 * namespaces (validate.ts sets cluster.network): a file that asks loopback anywhere is refused.
 */
export function checkImpliedNamespaces(src: SourceFile, kind: string, doc: Record<string, unknown>, cells: MatrixCell[] | undefined): ScenarioIssue[] {
  const expected = `namespaces, or no network at all, with a ${kind} fault (each broker its own host: the fault acts on the lab network)`;
  const cluster = doc.cluster as Record<string, unknown> | undefined;
  const settings = doc.settings as Record<string, unknown> | undefined;
  if (cluster?.network === 'loopback') return [src.issue(['cluster', 'network'], expected, 'loopback')];
  if (settings?.network === 'loopback') return [src.issue(['settings', 'network'], expected, 'loopback')];
  if ((cells ?? []).some((c) => c.params.network === 'loopback')) return [src.issue(['matrix', 'network'], expected, 'loopback')];
  return [];
}
