// What the runner's modules are handed: a run's options (runScenario's, passed to every cell and
// trial) and what a fault kind that runs its own cell gets (own-cell.ts). Their own module, so
// the runner's files import them without importing each other.
import type { ClientDriver } from '../drivers/types.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import type { MatrixCell, Scenario } from '../model/scenario.ts';
import type { Target } from '../targets/types.ts';

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
  /** Seed of the fault-time draws; each trial's seed derives from it (recorded in run.json). Default: random. */
  baseSeed?: number;
}

/** What a kind that runs its own cell (FaultKindSpec.ownCell) is given: the cell, its target and driver. */
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
