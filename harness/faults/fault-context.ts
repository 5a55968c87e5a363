// What a fault kind's delivery and heal are handed besides the cluster and the victims: its own
// module, so each kind's code (partition.ts, slow-link.ts, ...) takes it without importing the
// registry that lists them.
import type { Fault } from '../model/scenario.ts';
import type { CutInfo } from '../targets/types.ts';
import type { IsrSource } from './victims.ts';

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
  /** What the delivery returned (set after it: a heal reads what its start did, e.g. disk-full's filler files). */
  cut?: CutInfo;
}
