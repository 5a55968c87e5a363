// An attempt's check and evidence (run-trial.ts), once its load ended: after a fault, the hit
// brokers brought back, the ledger written before the check (a check that fails cannot lose it),
// recovery, the check, replica agreement, the broker figures and the loss prediction; without
// one (or when it never fired), the check after the load.
import path from 'node:path';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import type { ProduceResult } from '../drivers/types.ts';
import type { ProbeSeries } from '../probes/index.ts';
import type { Trial } from '../results/types.ts';
import type { FaultableCluster, RunningCluster } from '../targets/types.ts';
import { beyondPredictionText } from '../checker/loss-prediction.ts';
import { ackFiguresAt, faultTrial, recoverAndCheck } from './fault-trial.ts';
import { filledOnPurpose, lastingAt, scheduleLine, scheduleOutcome, type ScheduleOutcome } from './fault-schedule.ts';
import { checkAfterLoad } from './load-trial.ts';
import { brokerFigures, type FiguresReading } from './broker-figures.ts';
import { addAgreementTo, replicaAgreement, withDeviceFlushes } from './trial-accounting.ts';
import { predictTrialLoss } from './loss-window.ts';
import { TrialUnavailableError } from './unavailable-trial.ts';
import { afterCheckText, readBackChanges } from '../faults/file-faults/file-fault.ts';
import { recordReadHits } from '../faults/file-faults/read-error.ts';
import { ClusterUnavailableError } from '../faults/recover.ts';
import { CHECK_FILE, LEDGER_FILE, writeFailedCheck, writeLedger, type TrialEvidence } from './trial-evidence.ts';
import type { TrialClock } from './trial-clock.ts';
import type { IsrChange } from '../probes/isr-sampler.ts';
import type { CellContext, TrialSetup } from './trial-cluster.ts';

export interface CheckInputs {
  rep: number;
  repDir: string;
  cluster: RunningCluster;
  setup: TrialSetup;
  load: ProduceResult;
  loadStartMs: number;
  series: ProbeSeries | null;
  /** Whose device the probes' flushes count. */
  deviceScope: string;
  clock: TrialClock;
  evidence: TrialEvidence;
  /** The ISR changes sampled during the load (trial-isr.ts), or null when not sampled. */
  isr: IsrChange[] | null;
}

/** After a schedule whose entries (some) started: recovery and the check; sets the cell's broker figures. */
export async function checkFaultTrial(ctx: CellContext, i: CheckInputs, schedule: ScheduleOutcome, beforeFault: FiguresReading | null): Promise<Trial> {
  const { scenario, settings, caps, log } = ctx;
  const fired = schedule.fired!;
  const { rep, repDir, setup, load, loadStartMs } = i;
  const { client, ledger } = setup;
  const rf = scenario.cluster.replicationFactor;
  const acks = ackFiguresAt(ledger, fired.cut.atMs);
  log(
    `rep ${rep + 1}: ${fired.plan.fault.kind} of broker ${fired.targets.join(', ')} at ${((fired.cut.atMs - loadStartMs) / 1000).toFixed(2)} s ` +
      `(${fired.plan.whenText}${fired.plan.seed !== undefined ? `, seed ${fired.plan.seed}` : ''}), ${acks.ackedBeforeCut.toLocaleString('en-US')} records acknowledged; recovering`,
  );
  // The ledger is evidence before the check starts: a check that fails cannot lose it.
  writeLedger(repDir, ledger);
  const { recovery, check } = await recoverAndCheck({
    cluster: i.cluster as FaultableCluster,
    client,
    fired,
    restart: schedule.restart,
    topic: scenario.cluster.topic,
    ledger,
    replicationFactor: rf,
    timeoutMs: caps.recoveryTimeoutMs,
    clock: i.clock,
  }).catch((err: unknown) => {
    if (err instanceof ClusterUnavailableError && !ctx.opts.signal.aborted) {
      const failed = writeFailedCheck(repDir, 'recovery after the fault: the cluster did not come back', err);
      i.evidence.keep('the cluster was unavailable after the fault');
      throw new TrialUnavailableError({
        index: rep,
        fault: fired.plan.fault.kind,
        targets: fired.targets,
        cutAtSec: (fired.cut.atMs - loadStartMs) / 1000,
        acked: ledger.counts().ackedRecords,
        ackedBeforeCut: acks.ackedBeforeCut,
        recoveryTimeoutMs: err.recoveryTimeoutMs,
        failed,
        evidence: repDir,
      });
    }
    const message = writeFailedCheck(repDir, 'recovery and check after the fault', err);
    i.evidence.keep('the recovery or check failed');
    throw new Error(`rep ${rep + 1}: recovery or check after the fault failed (${message}); evidence kept in ${repDir} (${LEDGER_FILE}, ${CHECK_FILE}, broker logs, disk images)`);
  });
  const agreement = await replicaAgreement(client, scenario.cluster.topic, ledger.partitions(), rf, caps.dataOnHost);
  // What the system did about a file fault's bad bytes: each changed range read back from the victim's file.
  if (fired.cut.fileFault) {
    // Read errors still armed (no duration): the reads that hit them up to now; a healed entry recorded its own.
    if (fired.cut.fileFault.readErrors && !fired.cut.fileFault.readHits) await recordReadHits(i.cluster as FaultableCluster, fired.cut.fileFault);
    readBackChanges(i.cluster, fired.cut.fileFault);
    log(`rep ${rep + 1}: ${fired.plan.fault.kind} after recovery: ${afterCheckText(fired.cut.fileFault)}`);
  }
  // The device's flushes over the window the brokers' counters cover: up to the reading's answer.
  ctx.figures.broker = beforeFault
    ? withDeviceFlushes(
        { ...beforeFault.figures, takenAt: 'before-fault', readBeforeFaultMs: Math.max(0, fired.cut.atMs - beforeFault.startedMs) },
        i.series,
        loadStartMs,
        beforeFault.answeredMs,
        i.deviceScope,
      )
    : withDeviceFlushes({ ...(await brokerFigures(client, i.cluster, caps, log)), takenAt: 'after-recovery' }, i.series, loadStartMs, fired.cut.atMs, i.deviceScope);
  writeFileAtomic(path.join(repDir, 'check.json'), JSON.stringify({ recovery, check, replicas: agreement }, null, 1));
  const lasting = scheduleLine(scheduleOutcome(lastingAt(schedule.entries, fired.cut.atMs), loadStartMs));
  const trial = faultTrial({
    index: rep,
    loadStartMs,
    fired,
    acks,
    recovery,
    check,
    cycleMs: 0,
    acksMode: settings.acks,
    lastingAtCut: lasting ? [lasting] : [],
    filledOnPurpose: filledOnPurpose(schedule.entries),
  });
  if (schedule.unfired !== null) {
    // Part of the schedule never ran: the trial measured less than the scenario asks.
    trial.suspect = true;
    trial.note = [`a fault of the schedule (${schedule.unfired}) never started: the load ended first`, trial.note].filter(Boolean).join('; ');
  }
  // What the settings allowed the fault to lose, beside what it lost.
  const predicted = predictTrialLoss({ fired, settings, scenario, caps, ledger, check: check.report, entries: schedule.entries, ...(i.isr ? { isr: i.isr } : {}) });
  trial.fault!.predicted = predicted;
  trial.ledger.lostBeyondPrediction = predicted.beyond;
  const beyond = beyondPredictionText(predicted);
  log(`rep ${rep + 1}: predicted at risk ${predicted.atRisk.toLocaleString('en-US')} (${predicted.rule}); lost ${check.report.ackedLost.toLocaleString('en-US')}${beyond ? `; BEYOND PREDICTION: ${beyond}` : ''}`);
  trial.errorsAfterFault = load.errorsAfterFault;
  addAgreementTo(trial, agreement);
  return trial;
}

/** No fault, or one that never fired (`unfired`: its when, the trial is then suspect): the check after the load; sets the cell's broker figures. */
export async function checkLoadTrial(ctx: CellContext, i: CheckInputs, unfired: string | null): Promise<Trial> {
  const { scenario, caps, log, opts } = ctx;
  const { setup } = i;
  const trial = await checkAfterLoad({ client: setup.client, topic: scenario.cluster.topic, leaders: setup.leaders, ledger: setup.ledger, rf: scenario.cluster.replicationFactor, dataOnHost: ctx.caps.dataOnHost, index: i.rep, signal: opts.signal });
  if (unfired !== null && !opts.signal.aborted) {
    trial.suspect = true;
    trial.note = `the fault (${unfired}) never fired: the load ended first with ${trial.ledger.acked.toLocaleString('en-US')} records acknowledged`;
  }
  ctx.figures.broker = withDeviceFlushes({ ...(await brokerFigures(setup.client, i.cluster, caps, log)), takenAt: 'after-load' }, i.series, i.loadStartMs, i.load.endMs, i.deviceScope);
  return trial;
}
