// The full check after a fault and recovery: the host's ack ledger (outside the blast radius)
// against what the recovered leaders serve to a consumer, every replica's log hash up to the
// lowest HW, and each leader's HW against the highest HW a produce answer reported before the
// fault (an HW a client was told must not go back).
import { mapLimit, READ_BACK_CONCURRENCY } from '../common/map-limit.ts';
import type { AckLedger } from '../workload/ledger.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { checkLedger, type CheckReport } from './checker.ts';
import { checkReplicaAgreement, type PartitionAgreement, type ReplicaSource } from './replicas.ts';
import { lossTimeline, type LossTimeline } from './loss-timeline.ts';

export interface FaultCheck {
  report: CheckReport;
  /** Partitions whose replicas disagree below the lowest replica HW. */
  replicasDisagree: number;
  /** Offsets the HW went back by, summed over partitions. */
  hwWentBack: number;
  /** Sums over partitions (one partition: that partition's figures). */
  hwBefore: number;
  hwAfter: number;
  partitions: Array<PartitionAgreement & { hwBefore: number; servedHw: number }>;
  timeline: LossTimeline;
}

export interface AfterFaultOptions {
  /** The client driver connected to the cluster: replicas and the consumer go through it. */
  source: ReplicaSource & Pick<ClusterClient, 'consume'>;
  topic: string;
  ledger: AckLedger;
  /** Wall-clock ms of the cut (the loss window is measured back from it). */
  cutMs: number;
  consumeTimeoutMs?: number;
}

export async function checkAfterFault(opts: AfterFaultOptions): Promise<FaultCheck> {
  const { source, topic, ledger } = opts;
  const partitions = ledger.partitions();
  const agreement = await checkReplicaAgreement(source, topic, partitions);
  // Each partition from its leader at the time of reading, as the driver finds it (the kafka
  // driver through Metadata, following a leader that moves while it reads).
  const logs = await mapLimit(partitions, READ_BACK_CONCURRENCY, (p) =>
    source.consume({ topic, partition: p, timeoutMs: opts.consumeTimeoutMs ?? 120_000 }).catch((err: Error) => {
      throw new Error(`check ${topic}-${p} after recovery: ${err.message}`);
    }),
  );
  const report = checkLedger(ledger, logs, { cutMs: opts.cutMs });
  let hwWentBack = 0;
  let hwBefore = 0;
  let hwAfter = 0;
  const details = agreement.map((a) => {
    const before = ledger.maxHw(a.partition);
    const served = logs.find((l) => l.partition === a.partition)?.highWatermark ?? -1;
    const after = Math.max(a.leaderHw, served);
    if (before >= 0) {
      hwBefore += before;
      hwAfter += after;
      hwWentBack += Math.max(0, before - after);
    }
    return { ...a, hwBefore: before, servedHw: served };
  });
  return {
    report,
    replicasDisagree: agreement.filter((a) => !a.agree).length,
    hwWentBack,
    hwBefore,
    hwAfter,
    partitions: details,
    timeline: lossTimeline(ledger, report.lost, opts.cutMs),
  };
}
