// One attempt of a cell (run-cell.ts): a fresh cluster (trial-cluster.ts), the load and the
// consumers (trial-load.ts), the fault if the cell has one (trial-fault.ts), the check and its
// evidence (trial-check.ts), and in every case the release of what it started
// (trial-resources.ts); its figures go into the cell's (cell-figures.ts).
import fsp from 'node:fs/promises';
import { perSecond, describeProbeCost } from '../probes/index.ts';
import type { Trial } from '../results/types.ts';
import { summarizeLatency } from '../../engine/common/latency.ts';
import { trialDir } from '../results/store.ts';
import { processFootprint, type ProcessFootprint } from '../probes/process-stat.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import { TrialClock } from './trial-clock.ts';
import { mergeTimeseries, withHwAdvanced, withIsrSize } from './cell-result.ts';
import { isrSizePerSecond } from '../probes/isr-sampler.ts';
import { hwAdvancedPerSecond } from '../probes/hw-figures.ts';
import { p99DuringFault, utilDuringFault } from './fault-p99.ts';
import { faultLine, replicaLine, requestCounts } from './trial-accounting.ts';
import { guestSeries } from './cell-probes.ts';
import { cacheHitRatio, consumerLine, producerP99Around } from './consumer-lines.ts';
import { TrialEvidence, recountKept, remarkableTrial, writeFailedCheck, writeLedger } from './trial-evidence.ts';
import { TrialResources } from './trial-resources.ts';
import { TrialUnavailableError } from './unavailable-trial.ts';
import { unavailableLine } from '../results/unavailable-text.ts';
import { startTrialCluster, type CellContext } from './trial-cluster.ts';
import { startTrialLoad } from './trial-load.ts';
import { driveTrialFault } from './trial-fault.ts';
import { checkFaultTrial, checkLoadTrial } from './trial-check.ts';
import { scheduleLine, scheduleOutcome } from './fault-schedule.ts';
import { addIsrFigures, startIsrSampler } from './trial-isr.ts';

export interface AttemptOutcome {
  /** The attempt ran to its check (its trial is the cell's last). */
  trial: Trial | null;
  /** Ctrl-C: the cell keeps what finished and runs nothing more. */
  interrupted: boolean;
  /** Stop the cell's attempts here (Ctrl-C after a fault, or in the middle of an attempt). */
  stop: boolean;
}

export async function runAttempt(ctx: CellContext, rep: number): Promise<AttemptOutcome> {
  const { opts, scenario, caps, log, figures, attempts } = ctx;
  const w = scenario.workload;
  const repDir = trialDir(ctx.cellDir, rep);
  const evidence = new TrialEvidence(repDir, { cell: ctx.cell.id, trial: rep, topic: scenario.cluster.topic, driver: ctx.driver.name }, opts.keepData === true);
  let cutAtMs: number | null = null;
  let keptDisks: DisksManifest | null = null;
  const trialStartMs = Date.now();
  const clock = new TrialClock();
  const res = new TrialResources();
  let interrupted = false;
  let trial: Trial;
  try {
    const setup = await startTrialCluster(ctx, rep, repDir, clock, res);
    const cluster = res.cluster!;
    const { ledger, probedBroker } = setup;
    const load = startTrialLoad(ctx, rep, setup, res);
    res.isrSampler = startIsrSampler(ctx, setup);
    if (caps.watchFigures) res.figuresWatch?.start();
    const faulted = ctx.cellFaults.length ? await driveTrialFault(ctx, rep, setup, load, res, clock) : null;
    const schedule = faulted?.schedule ?? null;
    const fired = schedule?.fired ?? null;
    res.figuresWatch?.stop();
    const produced = await res.loadPromise!;
    res.loadPromise = null;
    const loadEndMs = Date.now();
    const isr = res.isrSampler ? await res.isrSampler.stop() : null;
    const hw = res.isrSampler?.hwChanges() ?? null;
    res.isrSampler = null;
    // What the broker processes hold with the cell's partitions (host processes; first repetition).
    if (rep === 0 && caps.sysctls === 'host') {
      const seen = await Promise.all(cluster.brokers.map((b) => (b.pid === null ? null : processFootprint(b.pid, fsp))));
      figures.brokerProcesses = seen.filter((x): x is ProcessFootprint => x !== null);
    }
    if (res.consumerGroups) {
      const groups = await res.consumerGroups.finish();
      res.consumerGroups = null;
      figures.consumerRuns.push({ repetition: rep, groups });
      for (const g of groups) log(`rep ${rep + 1}: ${consumerLine(g)}`);
    }
    const series = res.sampler ? await res.sampler.stop() : guestSeries(cluster, probedBroker, log);
    res.sampler = null;
    if (fired && faulted!.stoppedLoad) {
      clock.lap('cut');
      const killToExit = Object.values((fired.cut as { killToExitMs?: Record<number, number> }).killToExitMs ?? {});
      if (killToExit.length) clock.detail.killToExitMs = Math.max(...killToExit);
    } else clock.lap('load');
    if (series?.cost) log(`${attempts.label(rep)}: ${describeProbeCost(series.cost, series.intervalMs)}`);
    interrupted ||= opts.signal.aborted;
    const deviceScope = caps.guestProbes ? `guest disk of broker ${probedBroker}` : "host disk under the data dirs: every broker's, and anything else on it";
    // A fault cuts the window short: only a whole performance window is judged.
    const repFigures = figures.addLoad(rep, produced, !faulted);
    if (repFigures.steadiness?.state === 'ramping') log(`rep ${rep + 1}: NOT STEADY: ${repFigures.steadiness.reason}`);
    if (rep === 0) {
      figures.timeseries = mergeTimeseries(produced.timeseries, series ? perSecond(series, produced.measureStartMs) : []);
      // The ISR beside p99: the smallest partition's ISR each second of the same window.
      const seconds = Math.max(0, ...figures.timeseries.map((p) => p.t + 1));
      if (isr) withIsrSize(figures.timeseries, isrSizePerSecond(isr, produced.measureStartMs, seconds));
      if (hw) withHwAdvanced(figures.timeseries, hwAdvancedPerSecond(hw, produced.measureStartMs, seconds));
      for (const g of figures.consumerRuns[0]?.groups ?? []) {
        g.cacheHitRatio = cacheHitRatio(g, figures.timeseries, w.warmupSec);
        g.producerP99Us = producerP99Around({ timeseries: figures.timeseries }, g.startAtSec - w.warmupSec);
      }
    }

    const inputs = { rep, repDir, cluster, setup, load: produced, loadStartMs: load.loadStartMs, series, deviceScope, clock, evidence, isr };
    if (fired && opts.signal.aborted) {
      // Ctrl-C after the cut: recovering (a VM reboot) would keep the user waiting; the trial is dropped, not half-checked.
      log(`rep ${rep + 1}: interrupted after the fault, before recovery: this trial is not checked; its ledger and cut images are kept in ${repDir}`);
      cutAtMs = fired.cut.atMs;
      writeLedger(repDir, ledger);
      writeFailedCheck(repDir, 'interrupted (Ctrl-C) after the fault, before recovery', 'not checked');
      evidence.keepCutOnly('interrupted (Ctrl-C) after the cut, before recovery: no final image');
      return { trial: null, interrupted: true, stop: true };
    } else if (fired) {
      cutAtMs = fired.cut.atMs;
      trial = await checkFaultTrial(ctx, inputs, schedule!, faulted!.beforeFault);
    } else {
      trial = await checkLoadTrial(ctx, inputs, schedule ? schedule.unfired : null);
    }
    if (schedule) {
      trial.schedule = scheduleOutcome(schedule.entries, load.loadStartMs);
      log(`rep ${rep + 1}: schedule: ${scheduleLine(trial.schedule)}`);
      const window = { measureStartMs: produced.measureStartMs, schedule: trial.schedule, loadStartMs: load.loadStartMs };
      const during = p99DuringFault({ ...window, series: produced.timeseries });
      if (during !== undefined) trial.p99DuringFaultUs = during;
      const util = series ? utilDuringFault({ ...window, points: perSecond(series, produced.measureStartMs) }) : undefined;
      if (util !== undefined) trial.utilDuringFaultPct = util;
    }
    if (isr) addIsrFigures(trial, isr, hw, { ledger, loadStartMs: load.loadStartMs, loadEndMs, acks: ctx.settings.acks, rf: scenario.cluster.replicationFactor });
    trial.errors = produced.errors;
    trial.requests = requestCounts(ledger);
    writeLedger(repDir, ledger);
    evidence.keep(...remarkableTrial(trial));
    clock.lap('check');
    trial.cycleMs = Date.now() - trialStartMs;
    figures.addTrial(trial);
    log(
      `rep ${rep + 1}: ${Math.round(repFigures.recordsPerSec).toLocaleString('en-US')} records/s, p99 ${summarizeLatency(produced.latencyUs).p99} µs, ` +
        `acked ${trial.ledger.acked.toLocaleString('en-US')}, lost ${trial.ledger.ackedLost.toLocaleString('en-US')}` +
        (trial.fault ? faultLine(trial) : '') +
        (trial.note ? ` [${trial.suspect ? 'suspect' : 'note'}: ${trial.note}]` : ''),
    );
    if (trial.replicas) log(`rep ${rep + 1}: ${replicaLine(trial.replicas)}`);
  } catch (err) {
    // The cluster did not come back after the fault: a finding the cell keeps; the next attempt runs.
    if (err instanceof TrialUnavailableError) {
      const replacing = attempts.replacingIndex;
      figures.unavailable.push(replacing === undefined ? err.entry : { ...err.entry, replaces: replacing });
      log(`${attempts.label(rep)}: ${unavailableLine(err.entry)}`);
      return { trial: null, interrupted: false, stop: false };
    }
    // Ctrl-C in the middle of a repetition: the finished ones stay in the cell.
    if (!opts.signal.aborted || (figures.trials.length === 0 && figures.unavailable.length === 0)) throw err;
    log(`rep ${rep + 1}: interrupted (${(err as Error).message}); keeping ${figures.trials.length} finished repetition(s)${figures.unavailable.length ? ` and ${figures.unavailable.length} unavailable one(s)` : ''}`);
    return { trial: null, interrupted: true, stop: true };
  } finally {
    keptDisks = await res.release(evidence, cutAtMs, opts.keepData === true, (line) => log(`rep ${rep + 1}: ${line}`));
  }
  // The cycle includes stopping the cluster: that is what the next trial waits for.
  clock.lap('stop');
  trial.timing = clock.finish();
  trial.cycleMs = trial.timing.totalMs;
  if (keptDisks) await recountKept(trial, keptDisks, { cellDir: ctx.cellDir, trialDir: repDir, driver: ctx.driver, log: (line) => log(`${attempts.label(rep)}: ${line}`) });
  return { trial, interrupted, stop: false };
}
