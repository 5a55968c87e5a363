// One fault trial inside a repetition, once its schedule ran (fault-schedule.ts: the entries
// delivered, the load stopped where a kill or a cut needs it, every lasting entry healed): bring
// the hit brokers back, check, and turn it all into run.json's Trial.
import type { Acks } from '../../engine/settings/values.ts';
import type { BrokerRecovery, CutInfo, FaultableCluster } from '../targets/types.ts';
import type { TrialClock } from './trial-clock.ts';
import { ackedRecordsOf, type AckLedger } from '../history/ledger.ts';
import type { LedgerSummary, Trial } from '../results/types.ts';
import { recoverAfterFault, summarizeRecovery, type RecoveryOutcome } from '../faults/recover.ts';
import { checkAfterFault, type FaultCheck } from '../checker/after-fault.ts';
import { ledgerSummaryOfReport } from '../checker/checker.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { fullDiskFindings } from './full-disk.ts';
import { FAULTS } from '../faults/registry.ts';
import type { FiredFault } from './fault-schedule.ts';

/** A trial whose last acknowledgement came longer than this before the cut is flagged. */
export const QUIET_BEFORE_CUT_MS = 1000;

export type { FiredFault };

export interface AckFigures {
  ackedBeforeCut: number;
  lastAckBeforeCutMs: number | null;
  /** Produce answers KAFKA_STORAGE_ERROR after the last acknowledgement, before the cut: the log was offline (fail-stop), which explains a quiet ack stream. */
  storageErrorsAfterLastAck: number;
}

export function ackFiguresAt(ledger: AckLedger, cutMs: number): AckFigures {
  let acked = 0;
  let lastAck = -Infinity;
  const storageErrorTimes: number[] = [];
  for (const p of ledger.partitions()) {
    for (const b of ledger.batches(p)) {
      if (b.status === 'failed' && b.error === 'KAFKA_STORAGE_ERROR' && b.ackMs <= cutMs) storageErrorTimes.push(b.ackMs);
      if (b.status !== 'acked' || b.ackMs > cutMs) continue;
      acked += ackedRecordsOf(b);
      if (b.ackMs > lastAck) lastAck = b.ackMs;
    }
  }
  return {
    ackedBeforeCut: acked,
    lastAckBeforeCutMs: lastAck === -Infinity ? null : cutMs - lastAck,
    storageErrorsAfterLastAck: storageErrorTimes.filter((t) => t >= lastAck).length,
  };
}

export interface RecoverAndCheckOptions {
  cluster: FaultableCluster;
  /** The client driver connected to the cluster: the checker reads through it. */
  client: ClusterClient;
  fired: FiredFault;
  /** The brokers the schedule left down (fault-schedule.ts ScheduleOutcome.restart): restarted before the check. */
  restart: number[];
  topic: string;
  ledger: AckLedger;
  /** Replicas per partition (the ISR is timed until it holds this many). */
  replicationFactor: number;
  timeoutMs: number;
  /** Gets the restart and recovery steps (the check step is the caller's: it reads more after this). */
  clock?: TrialClock;
}

export async function recoverAndCheck(opts: RecoverAndCheckOptions): Promise<{ recovery: RecoveryOutcome; check: FaultCheck }> {
  // The load ran on past the delivery (a full disk, a pause): what the brokers' logs named by its end, read before a restart.
  if (FAULTS[opts.fired.plan.fault.kind].loadRunsThrough && opts.cluster.storageFailures) opts.fired.cut.storageFailures = await opts.cluster.storageFailures();
  // A planned move or a pause stopped no broker: nothing to restart.
  // A cluster that never elects its leaders throws ClusterUnavailableError: the system's finding (unavailable-trial.ts).
  const recovery = await recoverAfterFault(opts.cluster, opts.client, opts.restart, {
    topic: opts.topic,
    partitions: opts.ledger.partitions(),
    replicationFactor: opts.replicationFactor,
    timeoutMs: opts.timeoutMs,
  });
  if (opts.clock) timeRecovery(opts.clock, recovery);
  const check = await checkAfterFault({ source: opts.client, topic: opts.topic, ledger: opts.ledger, cutMs: opts.fired.cut.atMs });
  return { recovery, check };
}

/** Restart (a VM's boot again) and recovery, from the slowest broker's figures. */
function timeRecovery(clock: TrialClock, recovery: RecoveryOutcome): void {
  const booted = recovery.recoveries.filter((r) => r.boot);
  const slowest = booted.reduce<BrokerRecovery | undefined>((a, r) => (!a || r.boot!.bootMs > a.boot!.bootMs ? r : a), undefined);
  clock.lapSplit(slowest ? { restart: slowest.boot!.bootMs } : {}, 'recovery');
  const d = clock.detail;
  if (slowest?.boot?.spawnToInitMs !== undefined) d.restartSpawnToInitMs = slowest.boot.spawnToInitMs;
  if (booted.length) d.resumedBoots = (d.resumedBoots ?? 0) + booted.filter((r) => r.boot!.resumed).length;
  for (const r of booted) if (r.boot!.resumeFallback) clock.notResumed.push(`restart of broker ${r.brokerId}: ${r.boot!.resumeFallback}`);
  if (slowest?.boot?.setupMs !== undefined) d.restartMountMs = slowest.boot.setupMs;
  if (slowest?.boot?.brokerStartMs !== undefined) d.restartBrokerStartMs = slowest.boot.brokerStartMs;
  // Brokers that timed their log recovery (NATS reports none, Kafka's log may lack its line: not timed, not 0).
  const logRecovery = recovery.recoveries.map((r) => summarizeRecovery(r).durationMs).filter((ms): ms is number => ms !== undefined);
  if (logRecovery.length) d.logRecoveryMs = Math.max(...logRecovery);
}

export function ledgerSummaryOf(check: FaultCheck): LedgerSummary {
  return {
    ...ledgerSummaryOfReport(check.report),
    // Not evaluated (a driver without replica digests): absent, never a 0.
    ...(check.replicasDisagree !== null ? { replicasDisagree: check.replicasDisagree } : {}),
    // Not measured: absent (an expectation on it is NOT EVALUATED), counted, never a 0.
    ...(check.hwWentBack !== null ? { hwWentBack: check.hwWentBack } : { hwNotMeasured: 1 }),
  };
}

/**
 * Why a trial's figures are doubtful, if they are. `lastingAtCut`: the schedule's entries lasting at the cut (a paused broker): a quiet
 * ack stream then is theirs, not a stalled load. `filledOnPurpose`: brokers whose disk a fault of the schedule filled (full-disk.ts).
 */
export function suspicions(fired: FiredFault, acks: AckFigures, recovery: RecoveryOutcome, acksMode: Acks = 1, lastingAtCut: readonly string[] = [], filledOnPurpose: readonly number[] = []): string[] {
  // The target's own remarks on the cut (VM: a guest already down, a stale page-cache reading).
  const out: string[] = [...((fired.cut as { notes?: string[] }).notes ?? [])];
  const stopped = Object.entries(fired.cut.liveAtCut ?? {}).filter(([, live]) => !live).map(([id]) => id);
  if (stopped.length && out.length === 0) {
    out.push(`the workload of broker ${stopped.join(', ')} had stopped before the cut: nothing was in flight, so the result looks more durable than it is`);
  }
  if (acksMode === 0) {
    // acks=0 acknowledges nothing: there is no ack stream to have stalled.
  } else if (lastingAtCut.length > 0 && acks.lastAckBeforeCutMs !== null) {
    // An earlier entry of the schedule still lasted (e.g. a paused follower holding acks=all): the quiet is what it measures.
  } else if (acks.storageErrorsAfterLastAck > 0) {
    // The broker refused produces with KAFKA_STORAGE_ERROR (its log went offline, fail-stop):
    // a quiet ack stream is the behaviour under test, not a stalled load; unless its disk had
    // filled, which fullDiskFindings says below.
  } else if (acks.lastAckBeforeCutMs === null) out.push('no record was acknowledged before the cut');
  else if (acks.lastAckBeforeCutMs > QUIET_BEFORE_CUT_MS) {
    out.push(`no acknowledgement in the last ${(acks.lastAckBeforeCutMs / 1000).toFixed(1)} s before the cut (the load had stalled)`);
  }
  // A fault disk whose write log filled refused writes from then on: the trial measured a full disk, not the fault.
  for (const d of Object.values(fired.cut.diskAtCut ?? {})) {
    const full = (d as { writeLogFull?: string } | null)?.writeLogFull;
    if (full) out.push(full);
  }
  out.push(...fullDiskFindings(fired.cut, filledOnPurpose));
  // A file fault that changed nothing on a victim did not fire there: the trial measured a restart, not the fault.
  const ff = fired.cut.fileFault;
  if (ff?.released) out.push(`${fired.plan.fault.kind}: ${ff.released}`);
  else if (ff?.unchanged.length) {
    out.push(`${fired.plan.fault.kind} did not fire on broker ${ff.unchanged.join(', ')}: files ${ff.files} matched ${ff.unchanged.map((id) => (ff.matched[String(id)] ?? []).length).join('/')} file(s) there and changed no byte`);
  }
  const clean = recovery.recoveries.filter((r) => r.partitions.length > 0 && r.partitions.every((p) => p.cleanShutdown));
  if (clean.length) out.push(`broker ${clean.map((r) => r.brokerId).join(', ')} reported a clean shutdown after the kill (did the fault land?)`);
  if (recovery.caughtUp === false) out.push(`replicas had not caught up when checked: ${recovery.lagging}`);
  return out;
}

export function faultTrial(args: {
  index: number;
  loadStartMs: number;
  fired: FiredFault;
  acks: AckFigures;
  recovery: RecoveryOutcome;
  check: FaultCheck;
  cycleMs: number;
  acksMode?: Acks;
  /** The schedule's entries lasting at the cut, described (suspicions). */
  lastingAtCut?: readonly string[];
  /** Brokers whose disk a fault of the schedule filled on purpose (suspicions). */
  filledOnPurpose?: readonly number[];
}): Trial {
  const { fired, acks, recovery, check } = args;
  const dirty = Object.values(fired.cut.guestDirtyBeforeCut ?? {});
  const live = Object.values(fired.cut.liveAtCut ?? {});
  const notes = suspicions(fired, acks, recovery, args.acksMode, args.lastingAtCut, args.filledOnPurpose);
  const recoveryNotes = recovery.recoveries.flatMap((r) => (r.note ? [r.note] : []));
  return {
    index: args.index,
    ledger: ledgerSummaryOf(check),
    fault: {
      kind: fired.plan.fault.kind,
      targets: fired.targets,
      ...(fired.cut.leaderMoves ? { leaderMoves: fired.cut.leaderMoves } : {}),
      atMs: fired.cut.atMs - args.loadStartMs,
      ackedBeforeCut: acks.ackedBeforeCut,
      recovery: recovery.recoveries.map(summarizeRecovery),
      ...(check.report.lossWindowSec !== null ? { lossWindowSec: check.report.lossWindowSec } : {}),
      ...(dirty.length
        ? { guestDirtyBeforeCut: { nrDirty: dirty.reduce((a, d) => a + d.nrDirty, 0), nrWriteback: dirty.reduce((a, d) => a + d.nrWriteback, 0) } }
        : {}),
      when: fired.plan.whenText,
      ...(fired.plan.seed !== undefined ? { seed: fired.plan.seed } : {}),
      lastAckBeforeCutMs: acks.lastAckBeforeCutMs,
      ...(live.length ? { liveAtCut: live.every(Boolean) } : {}),
      ...(check.hwBefore !== null ? { hwBeforeCut: check.hwBefore } : {}),
      hwAfterRecovery: check.hwAfter,
      ...(check.hwNotMeasured !== null ? { hwNotMeasuredWhy: check.hwNotMeasured } : {}),
      recoverMs: recovery.recoverMs,
      recoverySteps: recovery.steps,
      lossTimeline: check.timeline,
      ...(fired.cut.diskAtCut ? { diskAtCut: fired.cut.diskAtCut } : {}),
      ...(fired.cut.storageFailures?.length ? { storageFailures: fired.cut.storageFailures } : {}),
      ...(fired.cut.filledDisks ? { filledDisks: fired.cut.filledDisks } : {}),
      ...(fired.cut.fileFault ? { fileFault: fired.cut.fileFault } : {}),
    },
    // What a restart had to do (format a node whose disk kept nothing, create the topic again) is the
    // fault's measured consequence, said beside the result; a suspicion is doubt about the result.
    ...(notes.length
      ? { suspect: true, note: [...notes, ...recoveryNotes].join('; ') }
      : recoveryNotes.length
        ? { note: recoveryNotes.join('; ') }
        : {}),
    cycleMs: args.cycleMs,
  };
}

/** The seed of trial `rep` of cell `cell`: reproducible from the run's base seed. */
export function trialSeed(baseSeed: number, cell: number, rep: number): number {
  return (Math.imul(baseSeed ^ 0x9e3779b9, 31) + cell * 1009 + rep * 7919) >>> 0;
}
