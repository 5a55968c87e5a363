// Fault kinds whose cell is their own trial (their registry row says ownCell: crash states): which
// code runs such a cell (what it is given: run-options.ts). The registry only says that a kind runs its own
// cell; the runner, which holds the cells, dispatches it here.
import type { FaultKind } from '../model/kinds.ts';
import type { CellResult } from '../results/types.ts';
import { runCrashStatesCell } from './crash-states/cell.ts';
import type { FaultCellOptions } from './run-options.ts';

type OwnCellRunner = (o: FaultCellOptions) => Promise<CellResult>;

/** The cell runner of each kind whose registry row says ownCell. */
const OWN_CELL_RUNNERS: Partial<Record<FaultKind, OwnCellRunner>> = {
  'crash-states': runCrashStatesCell,
};

/** The cell runner of a kind whose registry row says ownCell; an error naming the kind when the runner has none. */
export function ownCellRunner(kind: FaultKind): OwnCellRunner {
  const run = OWN_CELL_RUNNERS[kind];
  if (!run) throw new Error(`fault kind ${kind}: its registry row says ownCell, but harness/runner/own-cell.ts has no cell runner for it`);
  return run;
}
