// Runs a scenario: for each matrix cell and repetition, a fresh cluster, probes, load with an
// ack ledger, then the checker; run.json is rewritten after every cell so an interrupted run
// keeps what finished.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import * as hdr from 'hdr-histogram-js';
import type { Scenario, MatrixCell } from '../scenario/types.ts';
import type { ResolvedSettings } from '../scenario/settings.ts';
import { cellSettings, evaluateExpectations } from '../scenario/index.ts';
import { ProbeSampler, perSecond, collectEnvironment, probeNow } from '../probes/index.ts';
import { AckLedger } from '../workload/ledger.ts';
import { BatchFactory } from '../workload/batch-factory.ts';
import { runLoad, type LoadTarget } from '../workload/load.ts';
import { checkLedger } from '../checker/checker.ts';
import { consumePartition } from '../checker/consume.ts';
import { RunStore, newRunId, writeFileAtomic } from '../results/store.ts';
import type { CellResult, RunResult, Trial } from '../results/types.ts';
import type { Target, RunningCluster } from '../target/types.ts';
import { HostSysctls } from '../target/host-sysctl.ts';
import { encodeHistogram, latencySummary, mergeTimeseries, median, skippedCell, emptyLedger } from './cell-result.ts';
import { summarizeBrokers } from './broker-figures.ts';

export interface RunOptions {
  scenario: Scenario;
  target: Target;
  resultsDir: string;
  /** Process target: may the run change the host's vm.dirty_* sysctls (restored afterwards)? */
  allowHostSysctl: boolean;
  signal: AbortSignal;
  log: (line: string) => void;
  /** Keep the brokers' data directories after each cell (default: only their logs are kept). */
  keepData?: boolean;
}

export interface RunOutcome {
  run: RunResult;
  runDir: string;
  runFile: string;
}

async function gitCommit(): Promise<string | null> {
  try {
    const { stdout } = await execa('git', ['rev-parse', 'HEAD'], { reject: false, timeout: 2000 });
    return /^[0-9a-f]{40}$/.test(stdout.trim()) ? stdout.trim() : null;
  } catch {
    return null;
  }
}

export async function runScenario(opts: RunOptions): Promise<RunOutcome> {
  const { scenario, log } = opts;
  const runId = newRunId();
  const store = new RunStore(opts.resultsDir, scenario.name, runId);
  const environment = await collectEnvironment(store.dir);
  const run: RunResult = {
    schemaVersion: 1,
    scenario: { name: scenario.name, file: scenario.file, question: scenario.question, raw: scenario.raw },
    runId,
    status: 'incomplete',
    startedAt: new Date().toISOString(),
    endedAt: null,
    gitCommit: await gitCommit(),
    environment,
    settings: { ...scenario.settings, workload: scenario.workload, cluster: scenario.cluster },
    target: opts.target.kind,
    cells: [],
    expectations: [],
  };
  let runFile = store.save(run);
  const sysctls = new HostSysctls();
  const started = Date.now();
  try {
    for (const [i, cell] of scenario.matrix.entries()) {
      if (opts.signal.aborted) break;
      const settings = cellSettings(scenario, cell);
      const prefix = `[cell ${i + 1}/${scenario.matrix.length} ${cell.label}]`;
      const hasSysctls = Object.keys(settings.sysctls).length > 0;
      if (hasSysctls && opts.target.kind === 'process' && !opts.allowHostSysctl) {
        const note = `sets host sysctls (${Object.keys(settings.sysctls).join(', ')}); rerun with --allow-host-sysctl as root to change them (they are restored afterwards)`;
        log(`${prefix} skipped: ${note}`);
        run.cells.push(skippedCell(cell.id, cell.params, 'skipped', note));
        runFile = store.save(run);
        continue;
      }
      try {
        if (hasSysctls && opts.target.kind === 'process') sysctls.apply(settings.sysctls);
        const result = await runCell(opts, store, i, cell, settings, (line) => log(`${prefix} ${line}`), started);
        run.cells.push(result);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const status = opts.signal.aborted ? 'interrupted' : 'failed';
        log(`${prefix} ${status}: ${message}`);
        run.cells.push(skippedCell(cell.id, cell.params, status, message));
      } finally {
        sysctls.restore();
      }
      runFile = store.save(run);
    }
  } finally {
    sysctls.dispose();
  }
  run.expectations = evaluateExpectations(scenario, run.cells);
  const allRan = run.cells.length === scenario.matrix.length && run.cells.every((c) => c.status !== 'interrupted');
  run.status = opts.signal.aborted || !allRan ? 'incomplete' : 'complete';
  run.endedAt = new Date().toISOString();
  runFile = store.save(run);
  return { run, runDir: store.dir, runFile };
}

async function runCell(
  opts: RunOptions,
  store: RunStore,
  index: number,
  cell: MatrixCell,
  settings: ResolvedSettings,
  log: (line: string) => void,
  runStartMs: number,
): Promise<CellResult> {
  const { scenario } = opts;
  const w = scenario.workload;
  const cellDir = store.cellDir(index, cell.id);
  const merged = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const mergedCorrected = w.rate ? hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 }) : null;
  const errors: Record<string, number> = {};
  const trials: Trial[] = [];
  const rps: number[] = [];
  const mbps: number[] = [];
  const reqps: number[] = [];
  let ledgerSum = emptyLedger();
  let timeseries: CellResult['timeseries'] = [];
  let broker = summarizeBrokers([], []);
  let accelerator: CellResult['accelerator'];
  let interrupted = false;

  for (let rep = 0; rep < w.repetitions; rep++) {
    if (opts.signal.aborted) {
      interrupted = true;
      break;
    }
    const repDir = path.join(cellDir, `rep-${rep + 1}`);
    let cluster: RunningCluster | null = null;
    let sampler: ProbeSampler | null = null;
    try {
      log(`rep ${rep + 1}/${w.repetitions}: starting ${scenario.cluster.brokers} broker(s)`);
      cluster = await opts.target.start({ cluster: scenario.cluster, settings, workDir: repDir, signal: opts.signal });
      accelerator = cluster.accelerator;
      const leaders = await cluster.leaders(scenario.cluster.topic);
      const targets = groupByLeader(leaders);
      const ledger = new AckLedger({
        recordsPerBatch: w.recordsPerBatch,
        producerIdBase: (Date.now() % 1_000_000) * 1000,
        partitions: [...leaders.keys()],
      });
      const factory = new BatchFactory({ recordBytes: w.recordBytes, recordsPerBatch: w.recordsPerBatch });
      sampler = new ProbeSampler({ dataDir: cluster.brokers[0].dataDir });
      await sampler.start();
      const load = await runLoad({
        targets,
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
        signal: opts.signal,
        onSecond: (p) =>
          log(`rep ${rep + 1}: ${p.t + 1}/${w.durationSec}s ${Math.round(p.recordsPerSec).toLocaleString('en-US')} records/s p99 ${p.p99Us ?? '-'} µs (run ${Math.round((Date.now() - runStartMs) / 1000)}s)`),
      });
      const series = await sampler.stop();
      sampler = null;
      interrupted ||= load.interrupted;
      merged.add(load.latencyUs);
      if (mergedCorrected && load.correctedLatencyUs) mergedCorrected.add(load.correctedLatencyUs);
      for (const [k, v] of Object.entries(load.errors)) errors[k] = (errors[k] ?? 0) + v;
      rps.push(load.measuredRecords / load.measuredSec);
      reqps.push(load.measuredRequests / load.measuredSec);
      mbps.push(load.measuredBytes / load.measuredSec / 1e6);
      if (rep === 0) timeseries = mergeTimeseries(load.timeseries, perSecond(series, load.measureStartMs));

      // The checker reads every partition back from its leader, as a consumer would.
      const logs = await Promise.all(
        [...leaders.entries()].map(([partition, b]) => consumePartition({ url: b.url, topic: scenario.cluster.topic, partition })),
      );
      const report = checkLedger(ledger, logs);
      const summary = {
        acked: report.acked,
        ackedLost: report.ackedLost,
        duplicates: report.duplicates,
        outOfOrder: report.outOfOrder,
        corrupt: report.corrupt,
        unackedPresent: report.unackedPresent,
        lostOffsetsSample: report.lostOffsetsSample,
      };
      trials.push({ index: rep, ledger: summary });
      ledgerSum = addLedgers(ledgerSum, summary);
      broker = summarizeBrokers(await cluster.metrics(), cluster.brokers.map((b) => b.dataDir));
      writeFileAtomic(path.join(repDir, 'ledger.ndjson'), [...ledger.toNdjson()].join(''));
      log(
        `rep ${rep + 1}: ${Math.round(rps[rps.length - 1]).toLocaleString('en-US')} records/s, p99 ${latencySummary(load.latencyUs).p99} µs, acked ${report.acked}, lost ${report.ackedLost}`,
      );
    } finally {
      if (sampler) await sampler.stop().catch(() => undefined);
      if (cluster) await cluster.stop();
      if (!opts.keepData && cluster) for (const b of cluster.brokers) rmSync(b.dataDir, { recursive: true, force: true });
    }
  }
  void probeNow;
  const status: CellResult['status'] = interrupted ? 'interrupted' : 'ok';
  return {
    id: cell.id,
    params: cell.params,
    status,
    ...(interrupted ? { note: 'interrupted (Ctrl-C): figures cover the part that ran' } : {}),
    throughput: { recordsPerSec: median(rps), mbPerSec: median(mbps), requestsPerSec: median(reqps) },
    latencyUs: latencySummary(merged),
    ...(mergedCorrected ? { correctedLatencyUs: latencySummary(mergedCorrected) } : {}),
    errors,
    ledger: ledgerSum,
    broker,
    histograms: { latencyUs: encodeHistogram(merged), ...(mergedCorrected ? { correctedLatencyUs: encodeHistogram(mergedCorrected) } : {}) },
    timeseries,
    trials,
    ...(accelerator ? { accelerator } : {}),
  };
}

function groupByLeader(leaders: Map<number, { url: string }>): LoadTarget[] {
  const byUrl = new Map<string, number[]>();
  for (const [p, b] of leaders) byUrl.set(b.url, [...(byUrl.get(b.url) ?? []), p]);
  return [...byUrl.entries()].map(([url, partitions]) => ({ url, partitions }));
}

function addLedgers(a: CellResult['ledger'], b: CellResult['ledger']): CellResult['ledger'] {
  return {
    acked: a.acked + b.acked,
    ackedLost: a.ackedLost + b.ackedLost,
    duplicates: a.duplicates + b.duplicates,
    outOfOrder: a.outOfOrder + b.outOfOrder,
    corrupt: a.corrupt + b.corrupt,
    unackedPresent: (a.unackedPresent ?? 0) + (b.unackedPresent ?? 0),
    lostOffsetsSample: [...(a.lostOffsetsSample ?? []), ...(b.lostOffsetsSample ?? [])].slice(0, 20),
  };
}
