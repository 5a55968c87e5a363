// After a fault: bring the hit brokers back on the same disks (VM reboot or process restart),
// collect each one's recovery report, wait for the controller to give every partition a
// serving leader, then for the followers to catch up (and truncate what diverged) so the
// checker compares settled replicas, then for every replica to be back in the ISR. Each stage
// is timed: how long a rack takes to come back, to elect leaders and to restore its ISR.
import { waitForReplicasCaughtUp } from '../checker/replicas.ts';
import type { ClusterClient } from '../drivers/types.ts';
import type { RecoverySteps } from '../results/types.ts';
import type { BrokerRecovery, FaultableCluster } from '../targets/types.ts';

export interface RecoveryOutcome {
  recoveries: BrokerRecovery[];
  /** From the start of the restart to leaders elected and replicas caught up (or the deadline). */
  recoverMs: number;
  /** null: not evaluated (the driver reads no replica's log end). */
  caughtUp: boolean | null;
  /** Why replicas were not caught up at the deadline. */
  lagging?: string;
  steps: RecoverySteps;
}

export interface RecoverOptions {
  topic: string;
  partitions: number[];
  /** Replicas per partition: the ISR is full when it holds this many. */
  replicationFactor: number;
  /** For electing leaders, and again for followers to catch up. */
  timeoutMs: number;
}

/** After the replicas caught up, the ISR gets at most this long to hold every replica (it is a figure, not a condition of the check). */
export const ISR_WAIT_MS = 30_000;

/** What recovery reads: each replica's state, and the ISR as the leader or the controller says it. */
export type RecoverySource = Pick<ClusterClient, 'brokers' | 'leaderId' | 'replicaDigest' | 'inSyncReplicas'>;

/**
 * The restarted brokers never gave every partition a leader within the recovery timeout: the
 * system was unavailable after the fault (a finding, harness/runner/unavailable-trial.ts), told
 * apart from a restart that failed (a spawn, a disk attach: the lab's error, which fails the cell).
 */
export class ClusterUnavailableError extends Error {
  constructor(
    readonly recoveryTimeoutMs: number,
    readonly waitedMs: number,
    cause: unknown,
  ) {
    super(`the cluster did not come back: no leader within ${(waitedMs / 1000).toFixed(1)} s of the restart (recovery timeout ${Math.round(recoveryTimeoutMs / 1000)} s): ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ClusterUnavailableError';
  }
}

/** `replicas`: the client driver connected to the cluster (it reads each replica's state). */
export async function recoverAfterFault(cluster: FaultableCluster, replicas: RecoverySource, brokerIds: number[], opts: RecoverOptions): Promise<RecoveryOutcome> {
  const t0 = Date.now();
  const recoveries = await cluster.restart(brokerIds);
  const tRestarted = Date.now();
  await cluster.waitForLeaders(opts.topic, opts.timeoutMs).catch((err: unknown) => {
    throw new ClusterUnavailableError(opts.timeoutMs, Date.now() - tRestarted, err);
  });
  const tLed = Date.now();
  const sync = await waitForReplicasCaughtUp(replicas, opts.topic, opts.partitions, opts.timeoutMs);
  const tCaughtUp = Date.now();
  const isr = await waitForFullIsr(replicas, opts.topic, opts.partitions, opts.replicationFactor, Math.min(ISR_WAIT_MS, opts.timeoutMs));
  return {
    recoveries,
    recoverMs: tCaughtUp - t0,
    caughtUp: sync.caughtUp,
    ...(sync.caughtUp === false ? { lagging: sync.detail } : {}),
    steps: {
      restartMs: tRestarted - t0,
      electionMs: tLed - tRestarted,
      catchUpMs: tCaughtUp - tLed,
      isrMs: isr.full ? Date.now() - tCaughtUp : null,
      ...(isr.full ? {} : { isrShort: isr.detail }),
    },
  };
}

/** Polls until every partition's ISR holds `replicationFactor` replicas; full false at the deadline, with what each partition's ISR held. */
async function waitForFullIsr(source: Pick<ClusterClient, 'inSyncReplicas'>, topic: string, partitions: number[], replicationFactor: number, timeoutMs: number): Promise<{ full: boolean; detail: string }> {
  const read = source.inSyncReplicas?.bind(source);
  // A system without an ISR (or a driver that cannot read it): the figure is not measured, and says why.
  if (!read) return { full: false, detail: 'not measured: the client driver reads no ISR' };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const short: string[] = [];
    for (const p of partitions) {
      const isr = await read(topic, p).catch((err: Error) => err.message);
      if (typeof isr === 'string') short.push(`${topic}-${p}: ${isr}`);
      else if (isr === null) short.push(`${topic}-${p}: no leader`);
      else if (isr.length < replicationFactor) short.push(`${topic}-${p}: ISR [${isr.join(', ')}]`);
    }
    if (short.length === 0) return { full: true, detail: '' };
    if (Date.now() >= deadline) return { full: false, detail: `after ${Math.round(timeoutMs / 1000)} s: ${short.join('; ')}` };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * One broker's recovery as run.json's FaultOutcome keeps it: its log-loading time where it gives
 * one for all partitions (Kafka), else the sum over its partitions; the truncation summed over
 * its partitions. A figure not every partition measured is left out, as is every figure of a
 * broker that reported no partition's recovery (NATS): absent, never zeros.
 */
export function summarizeRecovery(r: BrokerRecovery): { broker: number; durationMs?: number; bytesTruncated?: number; batchesTruncated?: number; restartMs: number; cleanShutdown: boolean } {
  // The sum over the partitions, or undefined unless every partition gave the figure (a partial sum would read as the broker's).
  const sum = (pick: (p: BrokerRecovery['partitions'][number]) => number | undefined): number | undefined => {
    const xs = r.partitions.map(pick);
    return xs.length > 0 && xs.every((x) => x !== undefined) ? xs.reduce((a: number, x) => a + x!, 0) : undefined;
  };
  const partitionsMs = sum((p) => p.durationMs);
  const durationMs = r.logLoadMs ?? (partitionsMs === undefined ? undefined : Math.round(partitionsMs * 10) / 10);
  const bytesTruncated = sum((p) => p.bytesTruncated);
  // Batches only where every partition says (Kafka's log gives bytes alone).
  const batchesTruncated = sum((p) => p.batchesTruncated);
  return {
    broker: r.brokerId,
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(bytesTruncated !== undefined ? { bytesTruncated } : {}),
    ...(batchesTruncated !== undefined ? { batchesTruncated } : {}),
    restartMs: r.restartMs,
    cleanShutdown: r.partitions.length > 0 && r.partitions.every((p) => p.cleanShutdown),
  };
}
