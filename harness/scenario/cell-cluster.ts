// A cell's cluster: the scenario's `cluster:` with what the cell's settings override in it, the
// topic's partitions (`partitions`) and replication factor (`replication.factor`). One place for
// the runner (harness/runner/run-cell.ts), the scenario check and the audit's evidence.
import type { SettingValue } from './settings.ts';

export interface ClusterShape {
  brokers: number;
  partitions: number;
  replicationFactor: number;
}

/** `cluster` as the cell runs it. */
export function cellCluster<C extends ClusterShape>(cluster: C, values: Readonly<Record<string, SettingValue | undefined>>): C {
  const partitions = values.partitions;
  const rf = values['replication.factor'];
  return {
    ...cluster,
    ...(typeof partitions === 'number' ? { partitions } : {}),
    ...(typeof rf === 'number' ? { replicationFactor: rf } : {}),
  };
}
