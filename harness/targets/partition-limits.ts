// What a partition replica costs a broker in open files, and the check `scenario check` makes
// against this machine's limit before a run starts (a broker that hits EMFILE mid-run measures
// nothing). Measured here (one broker, `ls /proc/<pid>/fd` 2 s after start, 1 vs 200
// partitions): durolab's broker 27 -> 823 descriptors, 4 per partition (the active segment's
// .log for writing and for reading, its .index and .timeindex); Apache Kafka 4.4 101 -> 183,
// 0.4 per partition (it maps the index files and closes their descriptors), counted as 1.
import { readFileSync } from 'node:fs';

export interface PartitionCost {
  /** Descriptors a broker holds with no partition (listeners, logs, the runtime). */
  baseFds: number;
  fdsPerReplica: number;
  /** Which limit its processes run under: Node keeps the soft one; the JVM raises its soft limit to the hard one (-XX:+MaxFDLimit). */
  limit: 'soft' | 'hard';
}

export const PARTITION_COSTS = {
  process: { baseFds: 64, fdsPerReplica: 4, limit: 'soft' },
  kafka: { baseFds: 256, fdsPerReplica: 1, limit: 'hard' },
} as const satisfies Record<string, PartitionCost>;

/** "Max open files" of this process (its children inherit it), or null when /proc does not tell. */
export function openFilesLimit(which: 'soft' | 'hard', limitsText?: string): number | null {
  let text = limitsText;
  try {
    text ??= readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return null;
  const v = which === 'soft' ? m[1]! : m[2]!;
  return v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v);
}

/** Why this machine cannot hold the cluster's partitions (with the figures), or null. */
export function partitionRefusal(cost: PartitionCost, cluster: { brokers: number; partitions: number; replicationFactor: number }, limitsText?: string): string | null {
  const limit = openFilesLimit(cost.limit, limitsText);
  if (limit === null) return null;
  const replicas = Math.ceil((cluster.partitions * cluster.replicationFactor) / Math.max(1, cluster.brokers));
  const needed = cost.baseFds + replicas * cost.fdsPerReplica;
  if (needed <= limit) return null;
  return (
    `${cluster.partitions} partitions x RF ${cluster.replicationFactor} over ${cluster.brokers} broker(s) = ${replicas} replicas per broker need ~${needed} open files ` +
    `(${cost.fdsPerReplica} per replica + ${cost.baseFds}), and the ${cost.limit} limit here is ${limit} (ulimit -n${cost.limit === 'hard' ? ' -H' : ''}): raise it or use fewer partitions`
  );
}
