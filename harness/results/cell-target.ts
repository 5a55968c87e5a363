// Which target ran a cell of a run, as run.json names it: a target axis's value in
// params.target, else the cell's own target, else the run's. What the target registry says of
// that name (its system, where its brokers ran) is harness/targets/run-targets.ts.
import type { CellResult, RunResult } from './types.ts';

/** The target a cell ran on, as run.json names it: its target-axis value (durolab, kafka), else its target kind, else the run's. */
export function cellTargetName(run: Pick<RunResult, 'target'>, cell: Pick<CellResult, 'params' | 'target'>): string {
  return String(cell.params.target ?? cell.target ?? run.target);
}
