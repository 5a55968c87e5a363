// The honest-accounting parts of a trial, beside the checker's verdicts: the ledger's requests
// by state (pending vs never sent), errors before and after the fault, replica agreement from
// bytes (RF > 1), and the device's own flush count beside the brokers' self-reported one.
import { fileFaultText } from '../faults/file-faults/file-fault.ts';
import type { ClusterClient } from '../drivers/types.ts';
import type { BrokerSummary, FilledDisk, ReplicaAgreement, Trial } from '../results/types.ts';
import type { AckLedger } from '../history/ledger.ts';
import { deviceFlushesBetween, type ProbeSeries } from '../probes/index.ts';
import { compareReplicaBytes, replicaAgreementOf } from '../checker/replica-bytes.ts';
import { mib } from './full-disk.ts';

export function requestCounts(ledger: AckLedger): NonNullable<Trial['requests']> {
  const c = ledger.counts();
  return { sent: c.sent, acked: c.acked, failed: c.failed, pending: c.pending, neverSent: c.neverSent, unconfirmed: c.unconfirmed };
}

export function addCounts(into: Record<string, number>, from: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  return into;
}

/**
 * Every replica's stored batches below its leader's HW, compared with the leader's on the host
 * (harness/checker/replica-bytes.ts). undefined with RF 1 (nothing to compare) and where the
 * data dirs are not on this host (target external: not measured), or where the driver reads no stored batches. A failure to read is not
 * agreement: it is thrown, and the trial fails with the reason.
 */
export async function replicaAgreement(client: ClusterClient, topic: string, partitions: number[], replicationFactor: number, dataOnHost: boolean): Promise<ReplicaAgreement | undefined> {
  const { replicaDigest, readReplicaLog } = client;
  // A driver that reads no replica's stored batches (capabilities.storedBatches false): not measured either.
  if (replicationFactor <= 1 || !dataOnHost || !replicaDigest || !readReplicaLog) return undefined;
  return replicaAgreementOf(await compareReplicaBytes({ brokers: client.brokers, leaderId: (t, p) => client.leaderId(t, p), replicaDigest: replicaDigest.bind(client), readReplicaLog: readReplicaLog.bind(client) }, topic, partitions));
}

/**
 * Puts a trial's replica agreement into it: `replicas`, and `ledger.replicasDiverged` only when
 * some follower's bytes were compared (no follower read: not measured, not 0).
 */
export function addAgreementTo(trial: Trial, agreement: ReplicaAgreement | undefined): void {
  if (!agreement) return;
  trial.replicas = agreement;
  if (agreement.replicas > 0) trial.ledger.replicasDiverged = agreement.diverged;
}

/** One line for the progress log: what the comparison found. */
export function replicaLine(r: ReplicaAgreement): string {
  if (r.replicas === 0 || r.agreeUpTo === undefined) return "replicas not compared from bytes: no follower's stored bytes were read (replicasDiverged not measured)";
  if (r.diverged === 0) return `replicas agree from bytes (${r.compared.toLocaleString('en-US')} batches compared up to offset ${r.agreeUpTo.toLocaleString('en-US')})`;
  const where = (r.partitions ?? []).flatMap((p) => p.divergent.map((d) => `partition ${p.partition} broker ${d.brokerId} at offset ${d.offset}`));
  return `REPLICAS DIVERGE from offset ${r.firstDivergentOffset} (${where.join('; ')})`;
}

/** The broker figures with the device's flush count over [fromMs, toMs] beside them. */
export function withDeviceFlushes(broker: BrokerSummary, series: ProbeSeries | null, fromMs: number, toMs: number, scope: string): BrokerSummary {
  if (!series) return broker;
  const flushes = deviceFlushesBetween(series, fromMs, toMs);
  if (flushes === null) return broker;
  return { ...broker, deviceFlushes: flushes, deviceFlushesScope: `${scope}${series.device ? ` (${series.device})` : ''}` };
}

/** The fault part of a trial's progress line. */
export function faultLine(t: Trial): string {
  const f = t.fault!;
  // What a broker did not report or measure is said, never printed as 0.
  const rec = f.recovery
    .map((r) =>
      r.durationMs === undefined && r.bytesTruncated === undefined
        ? `broker ${r.broker} log recovery not reported`
        : `broker ${r.broker} ${r.durationMs === undefined ? 'log recovery time not reported' : `${r.durationMs} ms`}, ${r.bytesTruncated === undefined ? 'truncation not measured' : `${r.bytesTruncated} B truncated`}`,
    )
    .join('; ');
  const window = f.lossWindowSec !== undefined ? `, loss window ${f.lossWindowSec.toFixed(2)} s` : '';
  const extra = [
    t.ledger.replicasDisagree ? `replicas disagree in ${t.ledger.replicasDisagree} partition(s)` : '',
    t.ledger.hwWentBack ? `HW went back ${t.ledger.hwWentBack}` : '',
    t.ledger.hwWentBack === undefined ? `HW going back not measured (${f.hwNotMeasuredWhy ?? 'no HW before the fault'})` : '',
    t.ledger.ackedWithoutOffset ? `${t.ledger.ackedWithoutOffset} acknowledged without an offset` : '',
    t.ledger.ackedWhileIsrShrunk ? `${t.ledger.ackedWhileIsrShrunk} acknowledged while the ISR was shrunk` : '',
    t.hwLongestStillMs !== undefined ? `HW stood still up to ${(t.hwLongestStillMs / 1000).toFixed(2)} s` : '',
    t.p99DuringFaultUs !== undefined ? `p99 during the fault ${(t.p99DuringFaultUs / 1000).toFixed(1)} ms` : '',
    t.utilDuringFaultPct !== undefined ? `device ${t.utilDuringFaultPct.toFixed(0)} % busy during it` : '',
    t.ledger.corrupt ? `${t.ledger.corrupt} corrupt batch(es) served` : '',
  ].filter(Boolean);
  const s = f.recoverySteps;
  const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const stages = s
    ? `restart ${sec(s.restartMs)}, leaders ${sec(s.electionMs)}, caught up ${sec(s.catchUpMs)}, ${s.isrMs === null ? `ISR short: ${s.isrShort ?? ''}` : `ISR whole ${sec(s.isrMs)} later`}; `
    : '';
  const filled = Object.entries(f.filledDisks ?? {}).map(([id, d]) => `; ${filledDiskText(Number(id), d)}`);
  const files = f.fileFault ? `; ${f.kind} changed ${fileFaultText(f.fileFault)}` : '';
  return `${window}; recovery ${f.recoverMs === undefined ? '-' : sec(f.recoverMs)} (${stages}${rec})${extra.length ? `; ${extra.join(', ')}` : ''}${filled.join('')}${files}`;
}

/** "broker 1's disk filled: 1862.4 MiB filler (fallocate) in 0.3 s, 0.0 MiB left free of 1958.1 MiB; healed: 1863.0 MiB free" */
export function filledDiskText(id: number, d: FilledDisk): string {
  const heal = d.healed ? (d.healed.fillerGone ? `healed: ${mib(d.healed.freeBytes)} free` : 'FILLER LEFT after the heal') : 'not healed';
  return (
    `broker ${id}'s disk filled: ${mib(d.fillerBytes)} filler (${d.method}${d.fallocateRefused ? `: ${d.fallocateRefused}` : ''}) in ${(d.fillMs / 1000).toFixed(1)} s, ` +
    `${mib(d.freeAfterBytes)} left free of ${mib(d.fsBytes)}; ${heal}`
  );
}
