// What a cell gathers over its attempts (run-cell.ts), and the CellResult of run.json made from it.
// What a replaced attempt contributes: its trial (ledger, errors, fault outcome) and its own
// figures (repetitions[], marked replaced) are kept, and the cell's sums (ledger, errors,
// replicas, poll checks) count it, so a loss in it shows; the cell's medians and merged latency
// (throughput, latencyUs, steadiness, compare's bands) are over the attempts not replaced.
// The first attempt's run, replaced or not, gives the cell's timeseries, preload and process
// footprint (figures of a load that ran); broker figures are the last attempt's.
import * as hdr from 'hdr-histogram-js';
import type { MatrixCell } from '../model/scenario.ts';
import type { CellResult, ReplicaAgreement, RepetitionFigures, Steadiness, Trial, UnavailableTrial } from '../results/types.ts';
import type { ProduceResult } from '../drivers/types.ts';
import type { PreloadResult } from '../workload/preload.ts';
import type { ProcessFootprint } from '../probes/process-stat.ts';
import { cellSteadiness, judgeSteadiness } from '../results/steady-state.ts';
import { summarizeLatency } from '../../engine/common/latency.ts';
import { encodeHistogram, emptyLedger, mergedThroughput } from './cell-result.ts';
import { summarizeBrokers } from './broker-figures.ts';
import { addCounts } from './trial-accounting.ts';
import { addReplicaAgreements } from '../checker/replica-bytes.ts';
import { sumConsumerChecks } from './consumer-lines.ts';
import { markReplacedFigures } from './trial-attempts.ts';

const histogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });

export class CellFigures {
  private readonly loadLatencies: Array<{ trial: number; us: hdr.Histogram; corrected?: hdr.Histogram }> = [];
  private readonly errors: Record<string, number> = {};
  private readonly errorsAfterFault: Record<string, number> = {};
  private replicas: ReplicaAgreement | undefined;
  private readonly rps: number[] = [];
  private readonly mbps: number[] = [];
  private readonly reqps: number[] = [];
  private readonly repFigures: RepetitionFigures[] = [];
  private ledgerSum = emptyLedger();
  readonly trials: Trial[] = [];
  /** Fault trials whose cluster did not come back (unavailable-trial.ts): not checked, not in the sums. */
  readonly unavailable: UnavailableTrial[] = [];
  timeseries: CellResult['timeseries'] = [];
  broker = summarizeBrokers([], []);
  accelerator: CellResult['accelerator'];
  brokerProcesses: ProcessFootprint[] | null = null;
  readonly consumerRuns: NonNullable<CellResult['consumers']> = [];
  preload: PreloadResult | null = null;

  constructor(private readonly rated: boolean) {}

  /** One attempt's load; `judgeSteady`: a whole performance window (a fault cuts it short). Returns the attempt's figures. */
  addLoad(rep: number, load: ProduceResult, judgeSteady: boolean): RepetitionFigures {
    this.loadLatencies.push({ trial: rep, us: load.latencyUs, ...(load.correctedLatencyUs ? { corrected: load.correctedLatencyUs } : {}) });
    addCounts(this.errors, load.errors);
    addCounts(this.errorsAfterFault, load.errorsAfterFault);
    // rps, mbps and reqps are pushed with repFigures, one entry per attempt that ran the load.
    this.rps.push(load.measuredRecords / load.measuredSec);
    this.reqps.push(load.measuredRequests / load.measuredSec);
    this.mbps.push(load.measuredBytes / load.measuredSec / 1e6);
    const repLatency = summarizeLatency(load.latencyUs);
    const figures: RepetitionFigures = {
      trial: rep,
      recordsPerSec: this.rps[this.rps.length - 1]!,
      mbPerSec: this.mbps[this.mbps.length - 1]!,
      p50Us: repLatency.p50,
      p99Us: repLatency.p99,
      p999Us: repLatency.p999,
      ...(judgeSteady ? { steadiness: judgeSteadiness(load.timeseries.map((p) => p.recordsPerSec)) } : {}),
    };
    this.repFigures.push(figures);
    return figures;
  }

  addTrial(trial: Trial): void {
    this.replicas = addReplicaAgreements(this.replicas, trial.replicas);
    this.trials.push(trial);
    this.ledgerSum = addLedgers(this.ledgerSum, trial.ledger);
  }

  result(cell: MatrixCell, interrupted: boolean, hasFault: boolean): CellResult {
    const merged = histogram();
    const mergedCorrected = this.rated ? histogram() : null;
    const judged = markReplacedFigures(this.trials, this.repFigures);
    for (const l of judged(this.loadLatencies)) {
      merged.add(l.us);
      if (mergedCorrected && l.corrected) mergedCorrected.add(l.corrected);
    }
    const status: CellResult['status'] = interrupted ? 'interrupted' : 'ok';
    return {
      id: cell.id,
      params: cell.params,
      status,
      ...(interrupted ? { note: 'interrupted (Ctrl-C): figures cover the part that ran' } : {}),
      ...mergedThroughput(judged(this.rps), judged(this.mbps), judged(this.reqps)),
      latencyUs: summarizeLatency(merged),
      ...(mergedCorrected ? { correctedLatencyUs: summarizeLatency(mergedCorrected) } : {}),
      errors: this.errors,
      ...(hasFault ? { errorsAfterFault: this.errorsAfterFault } : {}),
      ledger: this.ledgerSum,
      ...(this.replicas ? { replicas: this.replicas } : {}),
      broker: this.broker,
      histograms: { latencyUs: encodeHistogram(merged), ...(mergedCorrected ? { correctedLatencyUs: encodeHistogram(mergedCorrected) } : {}) },
      repetitions: this.repFigures,
      ...withSteadiness(judged(this.repFigures)),
      timeseries: this.timeseries,
      trials: this.trials,
      ...(this.unavailable.length ? { unavailableTrials: this.unavailable } : {}),
      ...(this.accelerator ? { accelerator: this.accelerator } : {}),
      ...(this.preload ? { preload: this.preload } : {}),
      ...(this.brokerProcesses?.length ? { brokerProcesses: this.brokerProcesses } : {}),
      ...(this.consumerRuns.length ? { consumers: this.consumerRuns, consumerChecks: sumConsumerChecks(this.consumerRuns) } : {}),
    };
  }
}

function withSteadiness(reps: RepetitionFigures[]): { steadiness?: Steadiness } {
  const s = cellSteadiness(reps.map((r) => r.steadiness));
  return s ? { steadiness: s } : {};
}

export function addLedgers(a: CellResult['ledger'], b: CellResult['ledger']): CellResult['ledger'] {
  type Optional = 'offsetChanged' | 'inconsistentOffsets' | 'replicasDisagree' | 'replicasDiverged' | 'hwWentBack' | 'hwNotMeasured' | 'ackedWithoutOffset' | 'ackedWhileIsrShrunk' | 'lostBeyondPrediction';
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
    ...sum('ackedWhileIsrShrunk'),
    ...sum('lostBeyondPrediction'),
  };
}
