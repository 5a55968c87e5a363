// The crash-states fault's own scenario fields (their schema is the kind's entry in
// harness/faults/registry.ts), read with their defaults.
import type { OnCutPolicy } from '../on-cut.ts';

/** The crash-states fault's own fields, with their defaults (a scenario may leave onCut, seed and boot out). */
export interface CrashStatesFaultFields {
  states: number;
  onCut: OnCutPolicy;
  seed: number;
  boot: number;
}

export function crashStatesFields(fault: object): CrashStatesFaultFields {
  const f = fault as Partial<CrashStatesFaultFields>;
  if (f.states === undefined) throw new Error('fault crash-states: states is required (how many crash states to build per trial)');
  return { states: f.states, onCut: f.onCut ?? 'drop-unflushed', seed: f.seed ?? 1, boot: f.boot ?? 3 };
}
