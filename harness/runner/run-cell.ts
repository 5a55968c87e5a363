// One matrix cell of a scenario run (run-scenario.ts): for each repetition a fresh cluster,
// probes, load with an ack ledger, the fault if the scenario has one, then recovery and the
// checker (run-trial.ts); the repetitions' figures merged into the cell's CellResult
// (cell-figures.ts). A trial that cannot be judged (the fault did not fire, suspect) is run
// again within workload.extraTrials (trial-attempts.ts); every attempt is kept. A fault trial whose
// cluster did not come back is kept as unavailable, a finding, and the next attempt runs
// (unavailable-trial.ts).
import type { MatrixCell } from '../model/scenario.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import type { ClientDriver } from '../drivers/types.ts';
import type { RunStore } from '../results/store.ts';
import type { CellResult } from '../results/types.ts';
import { FAULTS } from '../faults/registry.ts';
import { ownCellRunner } from './own-cell.ts';
import { trialSeed } from './fault-trial.ts';
import type { RunOptions } from './run-options.ts';
import { ensureOpenFiles } from '../targets/partition-limits.ts';
import { TARGETS, TARGET_KINDS } from '../targets/registry.ts';
import { faultsOfCell } from '../scenario/trial-judgement.ts';
import { TrialAttempts } from './trial-attempts.ts';
import { CellFigures } from './cell-figures.ts';
import { cellCluster } from '../scenario/cell-cluster.ts';
import { cellProducer } from './trial-load.ts';
import { runAttempt } from './run-trial.ts';
import type { CellContext } from './trial-cluster.ts';

export { addLedgers } from './cell-figures.ts';

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
  // The partitions and replication.factor settings override cluster's in this cell (partitions-scale, durability-frontier).
  const scenario = { ...opts.scenario, cluster: cellCluster(opts.scenario.cluster, settings.values) };
  const w = scenario.workload;
  const cellDir = store.cellDir(index, cell.id);
  // A fault kind whose cell is its own trial (crash states) runs it through the same target and driver.
  // measure: throughput (a frontier's performance cell) runs without the scenario's fault.
  const cellFaults = faultsOfCell(scenario, settings.values);
  const cellFault = cellFaults[0];
  // A kind with its own cell is alone in its schedule (scenario check: schedule-checks.ts).
  const ownCell = cellFault && FAULTS[cellFault.kind].ownCell ? ownCellRunner(cellFault.kind) : undefined;
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
  const raised = await ensureOpenFiles({ ...scenario.cluster, unbufferedIo: settings.io !== 'buffered' }, TARGET_KINDS.flatMap((k) => TARGETS[k].capabilities.partitionCost ?? []));
  if (raised) log(raised);
  const figures = new CellFigures(w.rate !== null && w.rate !== 0);
  const attempts = new TrialAttempts(w.repetitions, w.extraTrials, cellFault !== undefined);
  const ctx: CellContext = { opts, driver, scenario, caps: opts.target.capabilities, cell, index, cellDir, settings, log, runStartMs, cellFaults, figures, attempts };
  let interrupted = false;
  try {
    for (let rep = 0; attempts.wanted; rep++) {
      if (opts.signal.aborted) {
        interrupted = true;
        break;
      }
      const outcome = await runAttempt(ctx, rep);
      interrupted ||= outcome.interrupted;
      if (outcome.stop) break;
      const again = attempts.settle(rep, outcome.trial, opts.signal.aborted);
      if (again) log(again);
    }
  } catch (err) {
    // A failed attempt fails the cell, but the trials that finished before it stay in run.json, marked.
    const kept = figures.trials.length + figures.unavailable.length;
    if (opts.signal.aborted || kept === 0) throw err;
    const note = `${(err as Error).message}; the ${kept} trial(s) that finished before it are kept`;
    log(`failed: ${note}`);
    return { ...figures.result(cell, false, cellFault !== undefined), status: 'failed', note };
  }
  return figures.result(cell, interrupted, cellFault !== undefined);
}
