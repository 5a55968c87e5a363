// `scenario check`'s rules for the replication.factor setting (a cell's RF over
// cluster.replicationFactor, cell-cluster.ts): at most cluster.brokers, and at least the cell's
// min.insync.replicas on a target that takes that setting (on NATS a stream's PubAck waits for a
// Raft majority, so R1 stands alone). Each refusal names the cell and the field.
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import type { SettingValue } from './settings.ts';
import type { MatrixCell } from '../model/scenario.ts';
import { cellTargetKind } from './target-axis.ts';
import { capabilitiesOf, type TargetKind } from '../targets/registry.ts';

export interface ReplicationCheckInput {
  src: SourceFile;
  cluster: { brokers: number; minInsyncReplicas: number };
  /** The scenario's target (cells without a target axis run on it). */
  target: TargetKind;
  baseSettings: Record<string, SettingValue> | undefined;
  cells: MatrixCell[] | undefined;
}

/** The replication factor of each cell (its replication.factor over the cluster's, which defaults to the brokers), for the checks that depend on it. */
export function cellReplicationFactors(cluster: { brokers: number; replicationFactor?: number }, baseSettings: Record<string, SettingValue> | undefined, cells: MatrixCell[] | undefined): number[] {
  const base = cluster.replicationFactor ?? cluster.brokers;
  return (cells ?? [{ id: 'base', label: '', params: {} }]).map((c) => {
    const rf = c.params['replication.factor'] ?? baseSettings?.['replication.factor'];
    return typeof rf === 'number' ? rf : base;
  });
}

export function checkReplicationFactor(input: ReplicationCheckInput): ScenarioIssue[] {
  const { src, cluster, target, baseSettings, cells } = input;
  const issues = new Map<string, ScenarioIssue>();
  for (const c of cells ?? []) {
    const rf = c.params['replication.factor'] ?? baseSettings?.['replication.factor'];
    if (typeof rf !== 'number') continue;
    const path = c.params['replication.factor'] !== undefined ? ['matrix', 'replication.factor'] : ['settings', 'replication.factor'];
    if (rf > cluster.brokers) {
      const expected = `at most cluster.brokers (${cluster.brokers})`;
      issues.set(`${expected}${rf}`, src.issue(path, expected, String(rf)));
      continue;
    }
    const kind = cellTargetKind(c.params, target);
    const minIsr = Number(c.params['min.insync.replicas'] ?? baseSettings?.['min.insync.replicas'] ?? cluster.minInsyncReplicas);
    if (minIsr > rf && !capabilitiesOf(kind).refuseSetting?.('min.insync.replicas', minIsr)) {
      const expected = `at least the cell's min.insync.replicas (${minIsr}) on target ${kind} (cell ${c.id}: acks=all could never be satisfied); set min.insync.replicas for it or exclude it`;
      issues.set(`${kind}${rf}${minIsr}`, src.issue(path, expected, String(rf)));
    }
  }
  return [...issues.values()];
}
