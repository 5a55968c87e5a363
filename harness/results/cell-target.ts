// Which target and which system ran a cell of a run: the one answer the report, the frontier,
// the published pages, claims, compare, audit and the side benches read (a target axis's value
// in params.target, else the cell's own target, else the run's; its system from the target
// registry's row: process and vm ran durolab, kafka and external ran Apache Kafka).
import { TARGETS, DEFAULT_TARGET, capabilitiesNamed, systemOfTarget } from '../targets/registry.ts';
import type { CellResult, RunResult } from './types.ts';

/** The target a cell ran on, as run.json names it: its target-axis value (durolab, kafka), else its target kind, else the run's. */
export function cellTargetName(run: Pick<RunResult, 'target'>, cell: Pick<CellResult, 'params' | 'target'>): string {
  return String(cell.params.target ?? cell.target ?? run.target);
}

/** The system under test of a cell (durolab, kafka, ...): what reports and claims name it by. */
export function cellSystem(run: Pick<RunResult, 'target'>, cell: Pick<CellResult, 'params' | 'target'>): string {
  return systemOfTarget(cellTargetName(run, cell));
}

/** The lab's own system (its default target's: durolab), the base other systems' figures are put against. */
export function labSystem(): string {
  return TARGETS[DEFAULT_TARGET].system;
}

/** A target (as run.json names it) whose brokers ran as processes of this host: no accelerator applies, a kill left the host's page cache. */
export function ranAsHostProcesses(target: string): boolean {
  return capabilitiesNamed(target)?.hostProcesses ?? false;
}

/** A target (as run.json names it) whose brokers ran in QEMU guests of this host (the accelerator applies). */
export function ranInGuests(target: string): boolean {
  return capabilitiesNamed(target)?.vmOptions ?? false;
}
