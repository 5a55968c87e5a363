// What a fault kind's delivery and heal are handed besides the cluster and the victims: its own
// module, so each kind's code (partition.ts, slow-link.ts, ...) takes it without importing the
// registry that lists them.
import type { Fault } from '../model/scenario.ts';
import type { CutInfo } from '../targets/types.ts';
import type { IsrSource } from './victims.ts';
import type { DataFileSets } from '../targets/data-files.ts';

/**
 * What a kind's phases get besides the cluster and the victims: the scenario's topic, the
 * schedule's entry as parsed (its kind's own fields), where to read the ISR from, and `held`:
 * one object per entry, shared by its start and its heal (what the heal undoes, e.g. the rules
 * a partition added).
 */
export interface FaultContext {
  topic: string;
  fault?: Fault;
  isr?: IsrSource;
  held: { heal?: () => Promise<void> };
  /** The entry's seed (harness/runner/fault-schedule.ts entrySeed): a kind's own draws (a file fault's chunks) replay with it. */
  seed?: number;
  /** The run's Ctrl-C: a heal that runs because of it releases what it holds instead of acting. */
  signal?: AbortSignal;
  /** The target's data files (capabilities.dataFiles): what a file fault's `files:` names on this system. */
  dataFiles?: DataFileSets;
  /** What the delivery returned (set after it: a heal reads what its start did, e.g. disk-full's filler files). */
  cut?: CutInfo;
}
