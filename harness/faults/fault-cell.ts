// What a fault kind that runs its own cell (FaultKindSpec.runCell in registry.ts) is given. Its
// own module, so that such a kind's cell (e.g. harness/disk/crash-states/cell.ts) imports this
// contract without importing the registry that loads it.
import type { ClientDriver } from '../drivers/types.ts';
import type { ResolvedSettings } from '../scenario/settings.ts';
import type { MatrixCell, Scenario } from '../scenario/types.ts';
import type { Target } from '../targets/types.ts';

/** What a kind that runs its own cell (FaultKindSpec.runCell) is given: the cell, its target and driver. */
export interface FaultCellOptions {
  scenario: Scenario;
  cell: MatrixCell;
  settings: ResolvedSettings;
  cellDir: string;
  /** Per repetition: the seed of the cut time draw. */
  trialSeed: (rep: number) => number;
  signal: AbortSignal;
  log: (line: string) => void;
  /** The cell's target and driver: the kind's trial runs through them. */
  target: Target;
  driver: ClientDriver;
  /** The cell's Kafka producer settings (the workload's with the cell's over them). */
  producer?: Readonly<Record<string, unknown>>;
  /** --keep-data: keep every trial's disk evidence (crash states: the base image beside the write log). */
  keepData?: boolean;
}
