// The full check after a fault and recovery: the host's ack ledger (outside the blast radius)
// against what the recovered leaders serve to a consumer, every replica's log hash up to the
// lowest HW, and each leader's HW against the highest HW known before the fault (an HW a client
// was told, or could have read, must not go back): what a produce answer reported (the http
// driver's answers carry it) or what the leaders answered just before the fault (a driver with
// highWatermarks: the kafka driver's ListOffsets). A partition whose HW before the fault is
// known from neither leaves the figure not measured (null), never a silent 0. A driver that reads
// no replica digests (capabilities.replicaDigest false) leaves replica agreement NOT EVALUATED
// (replicasDisagree null), never counted as agreeing.
import { mapLimit, READ_BACK_CONCURRENCY } from '../common/map-limit.ts';
import type { AckLedger } from '../history/ledger.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { checkLedger, type CheckReport } from './checker.ts';
import { checkReplicaAgreement, type PartitionAgreement } from './replicas.ts';
import { lossTimeline, type LossTimeline } from './loss-timeline.ts';

export interface FaultCheck {
  report: CheckReport;
  /** Partitions whose replicas disagree below the lowest replica HW; null: not evaluated (the driver reads no replica digests). */
  replicasDisagree: number | null;
  /** Offsets the HW went back by, summed over partitions; null when some partition's HW before the fault is not known (hwNotMeasured says why). */
  hwWentBack: number | null;
  /** Why hwWentBack is null (the first partition's reason, and how many partitions). */
  hwNotMeasured: string | null;
  /** Sums over partitions (one partition: that partition's figures); hwBefore null when not measured. */
  hwBefore: number | null;
  hwAfter: number;
  /** hwBefore -1: not known before the fault. */
  partitions: Array<PartitionAgreement & { hwBefore: number; servedHw: number }>;
  timeline: LossTimeline;
}

/** How long the HW reading before a fault may hold the fault back (it runs beside the broker figures' reading, bounded at 2 s). */
export const HW_BEFORE_FAULT_WITHIN_MS = 1500;

/**
 * Reads each partition's HW through the driver just before the fault and notes it in the ledger
 * (maxHw), or why it could not (hwNotRead). A driver without highWatermarks records the HW from
 * its produce answers instead; nothing is read.
 */
export async function recordHwBeforeFault(client: Pick<ClusterClient, 'highWatermarks'>, topic: string, ledger: AckLedger, timeoutMs = HW_BEFORE_FAULT_WITHIN_MS): Promise<void> {
  if (!client.highWatermarks) return;
  const partitions = ledger.partitions();
  const timedOut = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs + 200).unref());
  const read = await Promise.race([client.highWatermarks(topic, partitions, timeoutMs).catch((err: Error) => err), timedOut]);
  for (const p of partitions) {
    const hw = read === null ? { error: `no answer within ${timeoutMs} ms` } : read instanceof Error ? { error: read.message } : (read.get(p) ?? { error: 'no reading' });
    if (typeof hw === 'number') ledger.noteHw(p, hw);
    else ledger.hwNotRead(p, `its high watermark could not be read before the fault: ${hw.error}`);
  }
}
export interface AfterFaultOptions {
  /** The client driver connected to the cluster: replicas (where it reads them) and the consumer go through it. */
  source: Pick<ClusterClient, 'brokers' | 'leaderId' | 'replicaDigest' | 'consume'>;
  topic: string;
  ledger: AckLedger;
  /** Wall-clock ms of the cut (the loss window is measured back from it). */
  cutMs: number;
  consumeTimeoutMs?: number;
}

/** A partition's agreement where no replica digest could be read: no hashes, HWs unknown (-1), agreement null. */
function notEvaluated(source: Pick<ClusterClient, 'leaderId'>, topic: string, partition: number): PartitionAgreement {
  return { partition, leader: source.leaderId(topic, partition), upTo: -1, leaderHw: -1, hashes: {}, agree: null };
}

export async function checkAfterFault(opts: AfterFaultOptions): Promise<FaultCheck> {
  const { source, topic, ledger } = opts;
  const partitions = ledger.partitions();
  const digests = source.replicaDigest;
  const agreement = digests ? await checkReplicaAgreement({ brokers: source.brokers, leaderId: (t, p) => source.leaderId(t, p), replicaDigest: digests.bind(source) }, topic, partitions) : null;
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
  const unknown: string[] = [];
  const details = partitions.map((p) => agreement?.find((a) => a.partition === p) ?? notEvaluated(source, topic, p)).map((a) => {
    const before = ledger.maxHw(a.partition);
    const why = ledger.hwUnknownWhy(a.partition);
    const served = logs.find((l) => l.partition === a.partition)?.highWatermark ?? -1;
    const after = Math.max(a.leaderHw, served);
    hwAfter += after;
    if (why !== null) unknown.push(`${topic}-${a.partition}: ${why}`);
    else {
      hwBefore += before;
      hwWentBack += Math.max(0, before - after);
    }
    return { ...a, hwBefore: why === null ? before : -1, servedHw: served };
  });
  const hwNotMeasured = unknown.length ? `${unknown[0]}${unknown.length > 1 ? ` (and ${unknown.length - 1} more partitions)` : ''}` : null;
  return {
    report,
    replicasDisagree: agreement ? agreement.filter((a) => a.agree === false).length : null,
    hwWentBack: hwNotMeasured === null ? hwWentBack : null,
    hwNotMeasured,
    hwBefore: hwNotMeasured === null ? hwBefore : null,
    hwAfter,
    partitions: details,
    timeline: lossTimeline(ledger, report.lost, opts.cutMs),
  };
}
