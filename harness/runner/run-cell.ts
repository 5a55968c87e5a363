// One matrix cell of a scenario run (run-scenario.ts): for each repetition a fresh cluster,
// probes, load with an ack ledger, the fault if the scenario has one, then recovery and the
// checker; the repetitions' figures merged into the cell's CellResult. A trial that cannot be
// judged (the fault did not fire, suspect) is run again within workload.extraTrials
// (trial-attempts.ts); every attempt is kept.
import { rmSync } from 'node:fs';
import fsp, { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as hdr from 'hdr-histogram-js';
import type { MatrixCell } from '../scenario/types.ts';
import type { ResolvedSettings } from '../scenario/settings.ts';
import { ProbeSampler, perSecond, describeProbeCost } from '../probes/index.ts';
import { AckLedger } from '../workload/ledger.ts';
import { BatchFactory } from '../workload/batch-factory.ts';
import type { KafkaProducerSettings } from '../drivers/kafka/producer-settings.ts';
import type { ClientDriver, ProduceResult } from '../drivers/types.ts';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import type { RunStore } from '../results/store.ts';
import type { CellResult, ReplicaAgreement, RepetitionFigures, Trial } from '../results/types.ts';
import { cellSteadiness, judgeSteadiness } from '../results/steady-state.ts';
import type { RunningCluster, FaultableCluster } from '../targets/types.ts';
import { assertCanInject } from '../faults/inject.ts';
import { FAULTS } from '../faults/registry.ts';
import { TrialClock } from './trial-clock.ts';
import { checkAfterLoad } from './load-trial.ts';
import { ackFiguresAt, driveFault, faultTrial, recoverAndCheck, trialSeed } from './fault-trial.ts';
import { summarizeLatency } from '../../engine/common/latency.ts';
import { median } from '../../engine/common/stats.ts';
import { encodeHistogram, mergeTimeseries, emptyLedger } from './cell-result.ts';
import { BrokerFiguresWatch, brokerFigures, summarizeBrokers, type FiguresReading } from './broker-figures.ts';
import { addAgreementTo, addCounts, faultLine, replicaAgreement, replicaLine, requestCounts, withDeviceFlushes } from './trial-accounting.ts';
import { guestSeries, startSampler } from './cell-probes.ts';
import { addReplicaAgreements } from '../checker/replica-bytes.ts';
import type { RunOptions } from './run-scenario.ts';
import { predictTrialLoss } from './loss-window.ts';
import { ConsumerGroups } from '../workload/consumers.ts';
import { preloadTopic, type PreloadResult } from '../workload/preload.ts';
import { processesCpuMs, processFootprint, type ProcessFootprint } from '../probes/process-stat.ts';
import { ensureOpenFiles } from '../targets/partition-limits.ts';
import { cacheHitRatio, consumerLine, dropPageCache, producerP99Around, sumConsumerChecks } from './consumer-lines.ts';
import { beyondPredictionText } from '../checker/loss-prediction.ts';
import { CHECK_FILE, LEDGER_FILE, TrialEvidence, recountKept, remarkableTrial, writeFailedCheck, writeLedger } from './trial-evidence.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import { faultOfCell } from '../scenario/trial-judgement.ts';
import { trialDir } from '../results/store.ts';
import { TrialAttempts, markReplacedFigures } from './trial-attempts.ts';

export async function runCell(
  opts: RunOptions,
  driver: ClientDriver,
  store: RunStore,
  index: number,
  cell: MatrixCell,
  settings: ResolvedSettings,
  log: (line: string) => void,
  runStartMs: number,
): Promise<CellResult> {
  // The partitions setting overrides cluster.partitions in this cell (partitions-scale).
  const scenario = typeof settings.values.partitions === 'number' ? { ...opts.scenario, cluster: { ...opts.scenario.cluster, partitions: settings.values.partitions } } : opts.scenario;
  const caps = opts.target.capabilities;
  const w = scenario.workload;
  const cellDir = store.cellDir(index, cell.id);
  // A fault kind whose cell is its own trial (crash states) runs it through the same target and driver.
  // measure: throughput (a frontier's performance cell) runs without the scenario's fault.
  const cellFault = faultOfCell(scenario.faults, settings.values);
  const ownCell = cellFault ? FAULTS[cellFault.kind].runCell : undefined;
  if (ownCell) {
    const producer = cellProducer(w.producer, settings)?.producer;
    return ownCell({
      scenario,
      cell,
      settings,
      cellDir,
      trialSeed: (rep) => trialSeed(opts.baseSeed ?? 0, index, rep),
      signal: opts.signal,
      log,
      target: opts.target,
      driver,
      ...(producer ? { producer } : {}),
      ...(opts.keepData ? { keepData: true } : {}),
    });
  }
  // What a replaced attempt contributes: its trial (ledger, errors, fault outcome) and its own
  // figures (repetitions[], marked replaced) are kept, and the cell's sums (ledger, errors,
  // replicas, poll checks) count it, so a loss in it shows; the cell's medians and merged latency
  // (throughput, latencyUs, steadiness, compare's bands) are over the attempts not replaced.
  // The first attempt's run, replaced or not, gives the cell's timeseries, preload and process
  // footprint (figures of a load that ran); broker figures are the last attempt's.
  const loadLatencies: Array<{ trial: number; us: hdr.Histogram; corrected?: hdr.Histogram }> = [];
  const merged = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const mergedCorrected = w.rate ? hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 }) : null;
  const errors: Record<string, number> = {};
  const errorsAfterFault: Record<string, number> = {};
  let replicas: ReplicaAgreement | undefined;
  const rf = scenario.cluster.replicationFactor;
  const trials: Trial[] = [];
  const raised = await ensureOpenFiles({ ...scenario.cluster, unbufferedIo: settings.io !== 'buffered' });
  if (raised) log(raised);
  let brokerProcesses: ProcessFootprint[] | null = null;
  const rps: number[] = [];
  const mbps: number[] = [];
  const reqps: number[] = [];
  const repFigures: NonNullable<CellResult['repetitions']> = [];
  let ledgerSum = emptyLedger();
  let timeseries: CellResult['timeseries'] = [];
  let broker = summarizeBrokers([], []);
  let accelerator: CellResult['accelerator'];
  let interrupted = false;
  const consumerRuns: NonNullable<CellResult['consumers']> = [];
  let preload: PreloadResult | null = null;

  const attempts = new TrialAttempts(w.repetitions, w.extraTrials, cellFault !== undefined);
  for (let rep = 0; attempts.wanted; rep++) {
    if (opts.signal.aborted) {
      interrupted = true;
      break;
    }
    const repDir = trialDir(cellDir, rep);
    const evidence = new TrialEvidence(repDir, { cell: cell.id, trial: rep, topic: scenario.cluster.topic, driver: driver.name }, opts.keepData === true);
    let cutAtMs: number | null = null;
    let keptDisks: DisksManifest | null = null;
    const trialStartMs = Date.now();
    const clock = new TrialClock();
    let cluster: RunningCluster | null = null;
    let sampler: ProbeSampler | null = null;
    let loadPromise: Promise<ProduceResult> | null = null;
    let consumerGroups: ConsumerGroups | null = null;
    const stopForFault = new AbortController();
    // Aborted at the fault's moment, just before delivery: later produce failures are its echo.
    const faultMark = new AbortController();
    let beforeFault: FiguresReading | null = null;
    let figuresWatch: BrokerFiguresWatch | null = null;
    try {
      log(`${attempts.label(rep)}: starting ${scenario.cluster.brokers} broker(s)`);
      cluster = await opts.target.start({
        cluster: scenario.cluster,
        settings,
        workDir: repDir,
        signal: opts.signal,
        seed: trialSeed(opts.baseSeed ?? 0, index, rep),
        // On the host route's fault disks a cut keeps each disk's image as it left it (trial-evidence.ts).
        ...(caps.faultDisk === 'host' ? { disks: { evidence: { trialDir: repDir, target: opts.target.kind } } } : {}),
      });
      accelerator = cluster.accelerator;
      clock.lapSplit(cluster.startSteps?.steps ?? {}, 'brokerStart');
      Object.assign(clock.detail, cluster.startSteps?.detail);
      clock.notResumed.push(...(cluster.startSteps?.notResumed ?? []));
      const running = cluster;
      const fault = cellFault;
      if (fault) assertCanInject([fault], cluster, opts.target);
      const client = driver.connect(cluster, { dataOnHost: caps.dataOnHost });
      const leaders = new Map([...(await cluster.leaders(scenario.cluster.topic))].map(([p, b]) => [p, b.id]));
      const ledger = new AckLedger({
        recordsPerBatch: w.recordsPerBatch,
        producerIdBase: (Date.now() % 1_000_000) * 1000,
        partitions: [...leaders.keys()],
      });
      const factory = new BatchFactory({ recordBytes: w.recordBytes, recordsPerBatch: w.recordsPerBatch });
      const preloadBytes = settings.values.preload;
      if (typeof preloadBytes === 'number') {
        clock.lap('leaders');
        // On the host the brokers' data dirs are theirs (a fault disk's mount, or plain dirs under repDir).
        const dataDirs = caps.dataOnHost ? cluster.brokers.map((b) => b.dataDir) : [];
        const pre = await preloadTopic(client, {
          topic: scenario.cluster.topic,
          leaders,
          bytes: preloadBytes,
          signal: opts.signal,
          space: { dir: dataDirs[0] ?? repDir, replicationFactor: scenario.cluster.replicationFactor },
          writeBack: dataDirs,
        });
        log(`rep ${rep + 1}: preloaded ${(pre.bytes / 2 ** 20).toFixed(0)} MiB in ${pre.seconds.toFixed(1)} s (${pre.mbPerSec.toFixed(0)} MB/s), written back to the device in ${pre.writeBackSeconds.toFixed(1)} s, outside the ack ledger`);
        if (rep === 0) preload = pre;
        // The preload is none of the trial's named steps.
        clock.lap('other');
      }
      // A VM target probes inside the guest (its page cache is the one a power cut loses).
      const probedBroker = [...leaders.values()][0] ?? cluster.brokers[0].id;
      sampler = caps.guestProbes ? null : await startSampler(cluster, caps, log);
      if (fault) {
        // Broker counters restart at 0 with a restarted broker: read before the fault. The first
        // read is paid here, before the load (broker-figures.ts says why).
        figuresWatch = new BrokerFiguresWatch((note) => brokerFigures(client, running, caps, note));
        const warm = await figuresWatch.warmUp(10_000);
        if ('missing' in warm) log(`rep ${rep + 1}: broker figures before the load: ${warm.missing}`);
        else clock.detail.figuresWarmUpMs = warm.tookMs;
      }
      clock.lap('leaders');
      const loadStartMs = Date.now();
      let markLoadStart: (ms: number) => void = () => undefined;
      const loadStarted = new Promise<number>((resolve) => (markLoadStart = resolve));
      loadPromise = client.produce({
        leaders,
        topic: scenario.cluster.topic,
        acks: settings.acks,
        timeoutMs: 30_000,
        connections: w.connections,
        pipelining: w.pipelining,
        rate: w.rate,
        warmupSec: w.warmupSec,
        durationSec: w.durationSec,
        ledger,
        factory,
        ...(cellProducer(w.producer, settings) ?? {}),
        // A fault stops the load at the cut; Ctrl-C stops it too.
        signal: fault ? AbortSignal.any([opts.signal, stopForFault.signal]) : opts.signal,
        faultSignal: faultMark.signal,
        onLoadStart: (ms) => markLoadStart(ms),
        onSecond: (p) =>
          log(`rep ${rep + 1}: ${p.t + 1}/${w.durationSec}s ${Math.round(p.recordsPerSec).toLocaleString('en-US')} records/s p99 ${p.p99Us ?? '-'} µs (run ${Math.round((Date.now() - runStartMs) / 1000)}s)`),
      });
      // The consumers read while the producers write; they stop with the load.
      consumerGroups = w.consumers.length
        ? new ConsumerGroups(client, w.consumers, {
            topic: scenario.cluster.topic,
            partitions: [...leaders.keys()],
            ledger,
            // A driver that never says when its clock started: the groups count from here.
            loadStarted: Promise.race([loadStarted, loadPromise.then(() => loadStartMs, () => loadStartMs)]),
            signal: opts.signal,
            ...(settings.values['consumer.cache'] === 'cold' ? { beforeGroupStart: (name: string) => dropPageCache(caps, (line) => log(`rep ${rep + 1}: ${name}: ${line}`)) } : {}),
            ...(caps.sysctls === 'host' ? { brokerCpuMs: () => brokersCpuMs(running) } : {}),
          })
        : null;
      if (caps.watchFigures) figuresWatch?.start();
      const driven = fault
        ? await driveFault({
            fault,
            seed: trialSeed(opts.baseSeed ?? 0, index, rep),
            cluster: cluster as FaultableCluster,
            topic: scenario.cluster.topic,
            ledger,
            loadStartMs,
            loadDone: loadPromise,
            stopLoad: () => stopForFault.abort(),
            signal: opts.signal,
            client,
            beforeInject: async () => {
              clock.lap('load');
              try {
                // Bounded (FRESH_FIGURES_WITHIN_MS): a stuck broker must not push the cut far past its moment.
                const reading = await figuresWatch!.atFault();
                if ('missing' in reading) log(`rep ${rep + 1}: no broker figures before the fault (${reading.missing}); they are read after recovery`);
                else {
                  beforeFault = reading;
                  for (const note of reading.notes) log(note);
                }
              } finally {
                faultMark.abort();
              }
            },
          })
        : null;
      figuresWatch?.stop();
      const load = await loadPromise;
      loadPromise = null;
      // What the broker processes hold with the cell's partitions (host processes; first repetition).
      if (rep === 0 && caps.sysctls === 'host') {
        const seen = await Promise.all(running.brokers.map((b) => (b.pid === null ? null : processFootprint(b.pid, fsp))));
        brokerProcesses = seen.filter((x): x is ProcessFootprint => x !== null);
      }
      if (consumerGroups) {
        const groups = await consumerGroups.finish();
        consumerGroups = null;
        consumerRuns.push({ repetition: rep, groups });
        for (const g of groups) log(`rep ${rep + 1}: ${consumerLine(g)}`);
      }
      const series = sampler ? await sampler.stop() : guestSeries(cluster, probedBroker, log);
      sampler = null;
      if (driven?.fired) {
        clock.lap('cut');
        const killToExit = Object.values((driven.fired.cut as { killToExitMs?: Record<number, number> }).killToExitMs ?? {});
        if (killToExit.length) clock.detail.killToExitMs = Math.max(...killToExit);
      } else clock.lap('load');
      if (series?.cost) log(`${attempts.label(rep)}: ${describeProbeCost(series.cost, series.intervalMs)}`);
      interrupted ||= opts.signal.aborted;
      loadLatencies.push({ trial: rep, us: load.latencyUs, ...(load.correctedLatencyUs ? { corrected: load.correctedLatencyUs } : {}) });
      addCounts(errors, load.errors);
      addCounts(errorsAfterFault, load.errorsAfterFault);
      const deviceScope = caps.guestProbes ? `guest disk of broker ${probedBroker}` : "host disk under the data dirs: every broker's, and anything else on it";
      rps.push(load.measuredRecords / load.measuredSec);
      reqps.push(load.measuredRequests / load.measuredSec);
      mbps.push(load.measuredBytes / load.measuredSec / 1e6);
      const repLatency = summarizeLatency(load.latencyUs);
      repFigures.push({
        trial: rep,
        recordsPerSec: rps[rps.length - 1],
        mbPerSec: mbps[mbps.length - 1],
        p50Us: repLatency.p50,
        p99Us: repLatency.p99,
        p999Us: repLatency.p999,
        // A fault cuts the window short: only a whole performance window is judged.
        ...(fault ? {} : { steadiness: judgeSteadiness(load.timeseries.map((p) => p.recordsPerSec)) }),
      });
      const steady = repFigures[repFigures.length - 1]!.steadiness;
      if (steady?.state === 'ramping') log(`rep ${rep + 1}: NOT STEADY: ${steady.reason}`);
      if (rep === 0) timeseries = mergeTimeseries(load.timeseries, series ? perSecond(series, load.measureStartMs) : []);
      if (rep === 0) {
        for (const g of consumerRuns[0]?.groups ?? []) {
          g.cacheHitRatio = cacheHitRatio(g, timeseries, w.warmupSec);
          g.producerP99Us = producerP99Around({ timeseries }, g.startAtSec - w.warmupSec);
        }
      }

      let trial: Trial;
      if (driven?.fired && opts.signal.aborted) {
        // Ctrl-C after the cut: recovering (a VM reboot) would keep the user waiting; the trial is dropped, not half-checked.
        log(`rep ${rep + 1}: interrupted after the fault, before recovery: this trial is not checked; its ledger and cut images are kept in ${repDir}`);
        cutAtMs = driven.fired.cut.atMs;
        writeLedger(repDir, ledger);
        writeFailedCheck(repDir, 'interrupted (Ctrl-C) after the fault, before recovery', 'not checked');
        evidence.keepCutOnly('interrupted (Ctrl-C) after the cut, before recovery: no final image');
        interrupted = true;
        break;
      } else if (driven?.fired) {
        const fired = driven.fired;
        cutAtMs = fired.cut.atMs;
        const acks = ackFiguresAt(ledger, fired.cut.atMs);
        log(
          `rep ${rep + 1}: ${fired.plan.fault.kind} of broker ${fired.targets.join(', ')} at ${((fired.cut.atMs - loadStartMs) / 1000).toFixed(2)} s ` +
            `(${fired.plan.whenText}${fired.plan.seed !== undefined ? `, seed ${fired.plan.seed}` : ''}), ${acks.ackedBeforeCut.toLocaleString('en-US')} records acknowledged; recovering`,
        );
        // The ledger is evidence before the check starts: a check that fails cannot lose it.
        writeLedger(repDir, ledger);
        const { recovery, check } = await recoverAndCheck({
          cluster: cluster as FaultableCluster,
          client,
          fired,
          topic: scenario.cluster.topic,
          ledger,
          replicationFactor: rf,
          timeoutMs: caps.recoveryTimeoutMs,
          clock,
        }).catch((err: unknown) => {
          const message = writeFailedCheck(repDir, 'recovery and check after the fault', err);
          evidence.keep('the recovery or check failed');
          throw new Error(`rep ${rep + 1}: recovery or check after the fault failed (${message}); evidence kept in ${repDir} (${LEDGER_FILE}, ${CHECK_FILE}, broker logs, disk images)`);
        });
        const agreement = await replicaAgreement(client, scenario.cluster.topic, ledger.partitions(), rf);
        // The device's flushes over the window the brokers' counters cover: up to the reading's answer.
        const reading = beforeFault as FiguresReading | null; // set in beforeInject
        broker = reading
          ? withDeviceFlushes(
              { ...reading.figures, takenAt: 'before-fault', readBeforeFaultMs: Math.max(0, fired.cut.atMs - reading.startedMs) },
              series,
              loadStartMs,
              reading.answeredMs,
              deviceScope,
            )
          : withDeviceFlushes({ ...(await brokerFigures(client, cluster, caps, log)), takenAt: 'after-recovery' }, series, loadStartMs, fired.cut.atMs, deviceScope);
        writeFileAtomic(path.join(repDir, 'check.json'), JSON.stringify({ recovery, check, replicas: agreement }, null, 1));
        trial = faultTrial({ index: rep, loadStartMs, fired, acks, recovery, check, cycleMs: 0, acksMode: settings.acks });
        // What the settings allowed the fault to lose, beside what it lost.
        trial.fault!.predicted = predictTrialLoss({ fired, settings, scenario, caps, ledger, check: check.report });
        trial.ledger.lostBeyondPrediction = trial.fault!.predicted.beyond;
        const beyond = beyondPredictionText(trial.fault!.predicted);
        log(`rep ${rep + 1}: predicted at risk ${trial.fault!.predicted.atRisk.toLocaleString('en-US')} (${trial.fault!.predicted.rule}); lost ${check.report.ackedLost.toLocaleString('en-US')}${beyond ? `; BEYOND PREDICTION: ${beyond}` : ''}`);
        trial.errorsAfterFault = load.errorsAfterFault;
        addAgreementTo(trial, agreement);
      } else {
        trial = await checkAfterLoad({ client, topic: scenario.cluster.topic, leaders, ledger, rf, index: rep, signal: opts.signal });
        if (driven && !opts.signal.aborted) {
          trial.suspect = true;
          trial.note = `the fault (${driven.plan.whenText}) never fired: the load ended first with ${trial.ledger.acked.toLocaleString('en-US')} records acknowledged`;
        }
        broker = withDeviceFlushes({ ...(await brokerFigures(client, cluster, caps, log)), takenAt: 'after-load' }, series, loadStartMs, load.endMs, deviceScope);
      }
      trial.errors = load.errors;
      trial.requests = requestCounts(ledger);
      replicas = addReplicaAgreements(replicas, trial.replicas);
      writeLedger(repDir, ledger);
      evidence.keep(...remarkableTrial(trial));
      clock.lap('check');
      trial.cycleMs = Date.now() - trialStartMs;
      trials.push(trial);
      ledgerSum = addLedgers(ledgerSum, trial.ledger);
      log(
        `rep ${rep + 1}: ${Math.round(rps[rps.length - 1]).toLocaleString('en-US')} records/s, p99 ${summarizeLatency(load.latencyUs).p99} µs, ` +
          `acked ${trial.ledger.acked.toLocaleString('en-US')}, lost ${trial.ledger.ackedLost.toLocaleString('en-US')}` +
          (trial.fault ? faultLine(trial) : '') +
          (trial.note ? ` [${trial.suspect ? 'suspect' : 'note'}: ${trial.note}]` : ''),
      );
      if (trial.replicas) log(`rep ${rep + 1}: ${replicaLine(trial.replicas)}`);
    } catch (err) {
      // Ctrl-C in the middle of a repetition: the finished ones stay in the cell.
      if (!opts.signal.aborted || trials.length === 0) throw err;
      log(`rep ${rep + 1}: interrupted (${(err as Error).message}); keeping ${trials.length} finished repetition(s)`);
      interrupted = true;
      break;
    } finally {
      figuresWatch?.stop();
      if (consumerGroups) await consumerGroups.finish().catch(() => undefined);
      consumerGroups = null;
      if (loadPromise) {
        stopForFault.abort();
        await loadPromise.catch(() => undefined);
      }
      if (sampler) await sampler.stop().catch(() => undefined);
      evidence.beforeStop(cluster);
      try {
        if (cluster) await cluster.stop();
      } finally {
        keptDisks = evidence.afterStop(cluster, cutAtMs);
      }
      if (!opts.keepData && cluster) for (const b of cluster.brokers) rmSync(b.dataDir, { recursive: true, force: true });
    }
    // The cycle includes stopping the cluster: that is what the next trial waits for.
    const last = trials[trials.length - 1];
    if (last && last.index === rep) {
      clock.lap('stop');
      last.timing = clock.finish();
      last.cycleMs = last.timing.totalMs;
      if (keptDisks) await recountKept(last, keptDisks, { cellDir, trialDir: repDir, driver, log: (line) => log(`${attempts.label(rep)}: ${line}`) });
    }
    const again = attempts.settle(rep, last?.index === rep ? last : null, opts.signal.aborted);
    if (again) log(again);
  }
  // rps, mbps and reqps are pushed with repFigures, one entry per attempt that ran the load.
  const judged = markReplacedFigures(trials, repFigures);
  for (const l of judged(loadLatencies)) {
    merged.add(l.us);
    if (mergedCorrected && l.corrected) mergedCorrected.add(l.corrected);
  }
  const status: CellResult['status'] = interrupted ? 'interrupted' : 'ok';
  return {
    id: cell.id,
    params: cell.params,
    status,
    ...(interrupted ? { note: 'interrupted (Ctrl-C): figures cover the part that ran' } : {}),
    throughput: { recordsPerSec: median(judged(rps)) ?? 0, mbPerSec: median(judged(mbps)) ?? 0, requestsPerSec: median(judged(reqps)) ?? 0 },
    latencyUs: summarizeLatency(merged),
    ...(mergedCorrected ? { correctedLatencyUs: summarizeLatency(mergedCorrected) } : {}),
    errors,
    ...(cellFault ? { errorsAfterFault } : {}),
    ledger: ledgerSum,
    ...(replicas ? { replicas } : {}),
    broker,
    histograms: { latencyUs: encodeHistogram(merged), ...(mergedCorrected ? { correctedLatencyUs: encodeHistogram(mergedCorrected) } : {}) },
    repetitions: repFigures,
    ...withSteadiness(judged(repFigures)),
    timeseries,
    trials,
    ...(accelerator ? { accelerator } : {}),
    ...(preload ? { preload } : {}),
    ...(brokerProcesses?.length ? { brokerProcesses } : {}),
    ...(consumerRuns.length ? { consumers: consumerRuns, consumerChecks: sumConsumerChecks(consumerRuns) } : {}),
  };
}

function withSteadiness(reps: RepetitionFigures[]): Pick<CellResult, 'steadiness'> {
  const s = cellSteadiness(reps.map((r) => r.steadiness));
  return s ? { steadiness: s } : {};
}

export function addLedgers(a: CellResult['ledger'], b: CellResult['ledger']): CellResult['ledger'] {
  type Optional = 'offsetChanged' | 'inconsistentOffsets' | 'replicasDisagree' | 'replicasDiverged' | 'hwWentBack' | 'hwNotMeasured' | 'ackedWithoutOffset' | 'lostBeyondPrediction';
  const sum = (k: Optional) =>
    a[k] === undefined && b[k] === undefined ? {} : { [k]: (a[k] ?? 0) + (b[k] ?? 0) };
  return {
    acked: a.acked + b.acked,
    ackedLost: a.ackedLost + b.ackedLost,
    duplicates: a.duplicates + b.duplicates,
    outOfOrder: a.outOfOrder + b.outOfOrder,
    corrupt: a.corrupt + b.corrupt,
    unackedPresent: (a.unackedPresent ?? 0) + (b.unackedPresent ?? 0),
    lostOffsetsSample: [...(a.lostOffsetsSample ?? []), ...(b.lostOffsetsSample ?? [])].slice(0, 20),
    ...sum('offsetChanged'),
    ...sum('inconsistentOffsets'),
    ...sum('replicasDisagree'),
    ...sum('replicasDiverged'),
    ...sum('hwWentBack'),
    ...sum('hwNotMeasured'),
    ...sum('ackedWithoutOffset'),
    ...sum('lostBeyondPrediction'),
  };
}

/** workload.producer with the cell's library / enable.idempotence / max.in.flight settings over it. */
/** The CPU ms the cluster's broker processes (host pids) have used, null when one is unreadable. */
function brokersCpuMs(cluster: RunningCluster): Promise<number | null> {
  const pids = cluster.brokers.map((b) => b.pid);
  if (pids.some((p) => p === null)) return Promise.resolve(null);
  return processesCpuMs(pids as number[], (f) => readFile(f, 'utf8'));
}

function cellProducer(base: KafkaProducerSettings | undefined, settings: ResolvedSettings): { producer: Record<string, unknown> } | undefined {
  const v = settings.values;
  const over: Record<string, unknown> = {};
  if (typeof v.library === 'string') over.library = v.library;
  if (typeof v['enable.idempotence'] === 'boolean') over['enable.idempotence'] = v['enable.idempotence'];
  if (typeof v['max.in.flight'] === 'number') over['max.in.flight'] = v['max.in.flight'];
  if (!base && Object.keys(over).length === 0) return undefined;
  return { producer: { ...(base ?? {}), ...over } };
}
