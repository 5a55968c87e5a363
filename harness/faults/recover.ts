// After a fault: bring the hit brokers back on the same disks (VM reboot or process restart),
// collect each one's recovery report, wait for the controller to give every partition a
// serving leader, then for the followers to catch up (and truncate what diverged) so the
// checker compares settled replicas.
import { waitForReplicasCaughtUp, type ReplicaSource } from '../checker/replicas.ts';
import type { BrokerRecovery, FaultableCluster } from '../targets/types.ts';

export interface RecoveryOutcome {
  recoveries: BrokerRecovery[];
  /** From the start of the restart to leaders elected and replicas caught up (or the deadline). */
  recoverMs: number;
  caughtUp: boolean;
  /** Why replicas were not caught up at the deadline. */
  lagging?: string;
}

export interface RecoverOptions {
  topic: string;
  partitions: number[];
  /** For electing leaders, and again for followers to catch up. */
  timeoutMs: number;
}

/** `replicas`: the client driver connected to the cluster (it reads each replica's state). */
export async function recoverAfterFault(cluster: FaultableCluster, replicas: ReplicaSource, brokerIds: number[], opts: RecoverOptions): Promise<RecoveryOutcome> {
  const t0 = Date.now();
  const recoveries = await cluster.restart(brokerIds);
  await cluster.waitForLeaders(opts.topic, opts.timeoutMs);
  const sync = await waitForReplicasCaughtUp(replicas, opts.topic, opts.partitions, opts.timeoutMs);
  return {
    recoveries,
    recoverMs: Date.now() - t0,
    caughtUp: sync.caughtUp,
    ...(sync.caughtUp ? {} : { lagging: sync.detail }),
  };
}

/** A broker's recovery as run.json's FaultOutcome keeps it (sums over its partitions). */
export function summarizeRecovery(r: BrokerRecovery): { broker: number; durationMs: number; bytesTruncated: number; batchesTruncated: number; restartMs: number; cleanShutdown: boolean } {
  return {
    broker: r.brokerId,
    durationMs: Math.round(r.partitions.reduce((a, p) => a + p.durationMs, 0) * 10) / 10,
    bytesTruncated: r.partitions.reduce((a, p) => a + p.bytesTruncated, 0),
    batchesTruncated: r.partitions.reduce((a, p) => a + p.batchesTruncated, 0),
    restartMs: r.restartMs,
    cleanShutdown: r.partitions.length > 0 && r.partitions.every((p) => p.cleanShutdown),
  };
}
