// What a partition replica costs a broker in open files, and the check `scenario check` makes
// against this machine's limit before a run starts (a broker that hits EMFILE mid-run measures
// nothing). Measured here (one broker, `ls /proc/<pid>/fd` after start): durolab's broker 23 ->
// 2,022 descriptors for 1 -> 2,000 partitions, 1 per partition (the active segment's .log, read
// and written through one descriptor with io=buffered; the indexes open theirs only while they
// write; O_DIRECT and O_DSYNC add a writer of their own); Apache Kafka's: targets/kafka/kafka-kind.ts.
import { readFileSync } from 'node:fs';
import { execa } from 'execa';

export interface PartitionCost {
  /** Descriptors a broker holds with no partition (listeners, logs, the runtime). */
  baseFds: number;
  fdsPerReplica: number;
  /** More per replica with io=direct or io=dsync (a writer descriptor of its own). */
  unbufferedExtraFds: number;
  /** Which limit its processes run under: Node keeps the soft one; the JVM raises its soft limit to the hard one (-XX:+MaxFDLimit). */
  limit: 'soft' | 'hard';
}

/** durolab's broker: 1 descriptor per replica (O_DIRECT and O_DSYNC add a writer of their own); Node keeps the soft limit. Each target's row names its cost (TargetCapabilities.partitionCost). */
export const DUROLAB_BROKER_PARTITION_COST: PartitionCost = { baseFds: 64, fdsPerReplica: 1, unbufferedExtraFds: 1, limit: 'soft' };

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

/** Whether this process holds CAP_SYS_RESOURCE (bit 24 of CapEff in /proc/self/status): it may raise its hard limit. */
export function canRaiseHardLimit(statusText?: string): boolean {
  try {
    const m = /^CapEff:\s+([0-9a-f]+)$/m.exec(statusText ?? readFileSync('/proc/self/status', 'utf8'));
    return m !== null && (BigInt(`0x${m[1]}`) & (1n << 24n)) !== 0n;
  } catch {
    return false;
  }
}

/** fs.nr_open: the most a process with CAP_SYS_RESOURCE may raise its open-files limit to (null when unreadable). */
function nrOpen(): number | null {
  try {
    const n = Number(readFileSync('/proc/sys/fs/nr_open', 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** The descriptors each broker needs for the cluster's partitions. */
export interface ClusterShape {
  brokers: number;
  partitions: number;
  replicationFactor: number;
  /** Some cell writes with io=direct or io=dsync. */
  unbufferedIo?: boolean;
}

export function fdsNeeded(cost: PartitionCost, cluster: ClusterShape): { replicas: number; perReplica: number; needed: number } {
  const replicas = Math.ceil((cluster.partitions * cluster.replicationFactor) / Math.max(1, cluster.brokers));
  const perReplica = cost.fdsPerReplica + (cluster.unbufferedIo ? cost.unbufferedExtraFds : 0);
  return { replicas, perReplica, needed: cost.baseFds + replicas * perReplica };
}

/**
 * Why this machine cannot hold the cluster's partitions (with the figures), or null. Above the
 * current limit is fine when the runner can raise it (ensureOpenFiles): up to the hard limit, and
 * as root up to fs.nr_open.
 */
export function partitionRefusal(cost: PartitionCost, cluster: ClusterShape, limitsText?: string, capText?: string): string | null {
  const limit = openFilesLimit(cost.limit, limitsText);
  if (limit === null) return null;
  const { replicas, perReplica, needed } = fdsNeeded(cost, cluster);
  if (needed <= limit) return null;
  const hard = openFilesLimit('hard', limitsText) ?? limit;
  const raise = canRaiseHardLimit(capText);
  const ceiling = raise ? Math.max(hard, nrOpen() ?? hard) : hard;
  if (needed <= ceiling) return null;
  return (
    `${cluster.partitions} partitions x RF ${cluster.replicationFactor} over ${cluster.brokers} broker(s) = ${replicas} replicas per broker need ~${needed} open files ` +
    `(${perReplica} per replica + ${cost.baseFds}), and this process can raise its limit (${limit}) only to ${ceiling}` +
    `${raise ? ' (fs.nr_open)' : ' (the hard limit: raising it needs CAP_SYS_RESOURCE, which this process lacks)'}: raise it or use fewer partitions`
  );
}

/**
 * Raises this process's open-files limit (inherited by the brokers it starts) to what the
 * cluster's partitions need on any target, when it is below: prlimit(1) on its own pid (above
 * the hard limit only with CAP_SYS_RESOURCE; scenario check refuses what cannot be). Returns
 * what it did, null when nothing was needed. `costs`: every target's (TargetCapabilities.partitionCost).
 */
export async function ensureOpenFiles(cluster: ClusterShape, costs: readonly PartitionCost[]): Promise<string | null> {
  if (costs.length === 0) return null;
  const needed = Math.max(...costs.map((c) => fdsNeeded(c, cluster).needed));
  const soft = openFilesLimit('soft');
  if (soft === null || needed <= soft) return null;
  const hard = openFilesLimit('hard') ?? soft;
  const to = canRaiseHardLimit() ? Math.max(needed, 1024) : Math.min(Math.max(needed, 1024), hard);
  const r = await execa('prlimit', ['--pid', String(process.pid), `--nofile=${to}:${Math.max(hard, to)}`], { reject: false });
  if (r.exitCode !== 0) throw new Error(`${cluster.partitions} partitions need ~${needed} open files per broker; raising the limit from ${soft} failed: prlimit: ${String(r.stderr || r.message || r.exitCode).trim()}`);
  return `open files limit raised from ${soft} to ${to} (prlimit on the harness process; its brokers inherit it) for ${cluster.partitions} partitions`;
}
