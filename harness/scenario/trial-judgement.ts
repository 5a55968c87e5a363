// Whether a trial can judge an expectation: one rule for the evaluator (evaluate-expectations.ts),
// which merges a trial it cannot judge as unknown, and for the runner (harness/runner/run-cell.ts),
// which runs such a trial again within workload.extraTrials.
import type { Trial } from '../results/types.ts';
import type { SettingValue } from './settings.ts';
import type { Fault } from '../model/scenario.ts';

/** The fault a cell runs under (its schedule's first entry): the scenario's, except in a cell that measures throughput (measure: throughput). */
export function faultOfCell(scenario: CellFaultSource, values: Readonly<Record<string, SettingValue>>): Fault | undefined {
  return faultsOfCell(scenario, values)[0];
}

/** What a cell's schedule is chosen from. */
export type CellFaultSource = { faults: readonly Fault[]; faultSets?: Readonly<Record<string, readonly Fault[]>> };

/**
 * The fault schedule a cell runs under: the `faultSets:` entry its `faults` setting names, else
 * the scenario's `faults:`; none in a cell that measures throughput.
 */
export function faultsOfCell(scenario: CellFaultSource, values: Readonly<Record<string, SettingValue>>): readonly Fault[] {
  if (values.measure === 'throughput') return [];
  const named = values.faults;
  if (typeof named === 'string') {
    const set = scenario.faultSets?.[named];
    if (!set) throw new Error(`faults: ${named}: no such entry of faultSets: (${Object.keys(scenario.faultSets ?? {}).join(', ') || 'none'})`);
    return set;
  }
  return scenario.faults;
}

/** Why a trial's figures cannot judge an expectation (its cell's fault did not fire in it, it is suspect), or null when they can. */
export function whyUnjudged(trial: Trial, hasFault: boolean): string | null {
  // The runner's note says why (the load ended first, Ctrl-C); without one, say what is missing.
  if (hasFault && !trial.fault) return trial.note ?? 'the fault did not fire';
  if (trial.suspect) return `suspect (${trial.note ?? 'no reason recorded'})`;
  return null;
}
