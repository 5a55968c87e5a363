// What the target registry says about the targets a run.json names: each cell's system (process
// and vm ran durolab, kafka and external ran Apache Kafka), whether its brokers ran as host
// processes or in guests, where it kept its fault disk, and the disk model a run that recorded
// none ran on. The one bridge from results (data) to the registry: the report, the frontier,
// the published pages, claims, compare, audit and the side benches read it.
import { TARGETS, DEFAULT_TARGET, capabilitiesNamed, systemOfTarget } from './registry.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { diskModelText } from '../results/disk-models.ts';
import type { FaultDiskPlace } from '../results/cycle-goals.ts';
import type { CellResult, RunResult } from '../results/types.ts';

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

/** Where a target (a kind or an axis name, as run.json records it) keeps its fault disk: the host route, a guest's, or none. */
export function faultDiskOfTarget(target: string): FaultDiskPlace {
  return capabilitiesNamed(target)?.faultDisk ?? null;
}

/** A run's disk model in one sentence (older VM runs recorded none: their target's default); null for runs without one. */
export function runDiskModelText(run: Pick<RunResult, 'target' | 'diskModel'>): string | null {
  return diskModelText(run, capabilitiesNamed(run.target)?.defaultDiskModel);
}

/** The model a target runs its brokers on: its own `diskModel` when it put them on one, else its kind's default (the file disk for VMs), none for processes. */
export function diskModelIdFor(target: { kind: string; diskModel?: string }): string | undefined {
  return target.diskModel ?? capabilitiesNamed(target.kind)?.defaultDiskModel;
}
