// The one list of fault kinds. Each kind declares the fields of its scenario entry beyond the
// common kind/target/when (none yet), the action a target must offer to deliver it, and how it
// is delivered to a running cluster. The scenario schema, validation, results types, the report
// and the runner read the kinds from here; FAULTS is a Record over FaultKind, so a kind without
// a delivery is a type error.
import * as z from 'zod';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';
import { ON_CUT_POLICIES } from '../disk/on-cut.ts';

export const FAULT_KINDS = ['power-cut', 'process-kill', 'crash-states'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * What a target's clusters can do to a broker. A target lists the actions it offers
 * (TargetCapabilities.faultActions); a fault kind names the one it needs.
 */
export const FAULT_ACTIONS = ['kill-broker-process', 'cut-power', 'record-write-log'] as const;
export type FaultAction = (typeof FAULT_ACTIONS)[number];

export interface FaultKindSpec {
  /** One line for help texts and reports. */
  summary: string;
  /** Scenario fields of this kind besides kind, target and when (a zod shape; empty today). */
  fields: z.ZodRawShape;
  /** The action a target must offer to deliver this kind. */
  needs: FaultAction;
  /** Sends the fault to the brokers; CutInfo.atMs is the moment it went out. */
  deliver(cluster: FaultableCluster, brokerIds: number[]): Promise<CutInfo>;
}

export const FAULTS: Record<FaultKind, FaultKindSpec> = {
  'power-cut': {
    summary: "power cut: SIGKILL of the broker's VM, its page cache is lost",
    fields: {},
    needs: 'cut-power',
    deliver: (cluster, ids) => cluster.powerCut(ids),
  },
  'process-kill': {
    summary: 'process kill: SIGKILL of the broker process, the page cache survives',
    fields: {},
    needs: 'kill-broker-process',
    deliver: (cluster, ids) => cluster.processKill(ids),
  },
  'crash-states': {
    summary:
      "crash states: the broker VM's disk records every WRITE/FLUSH/FUA/TRIM; after a power cut, N crash states are built from the write log " +
      'and checked on the host (harness/disk/crash-states), a sample also booted through the real broker',
    fields: {
      /** Crash states built per trial. */
      states: z.int().min(1).max(100_000),
      /** What of the unflushed writes persists in a state. */
      onCut: z.enum(ON_CUT_POLICIES),
      /** Seed of the crash points and of the policy's draws. */
      seed: z.int().min(0).max(2 ** 31 - 1),
      /** States also booted in a VM and checked through the broker (default 3). */
      boot: z.int().min(0).max(50),
    },
    needs: 'record-write-log',
    // The cut itself; the states are built afterwards by the runner (harness/disk/crash-states/cell.ts).
    deliver: (cluster, ids) => cluster.powerCut(ids),
  },
};

/** The crash-states fault's own fields, with their defaults (a scenario may leave onCut, seed and boot out). */
export interface CrashStatesFaultFields {
  states: number;
  onCut: (typeof ON_CUT_POLICIES)[number];
  seed: number;
  boot: number;
}

export function crashStatesFields(fault: object): CrashStatesFaultFields {
  const f = fault as Partial<CrashStatesFaultFields>;
  if (f.states === undefined) throw new Error('fault crash-states: states is required (how many crash states to build per trial)');
  return { states: f.states, onCut: f.onCut ?? 'drop-unflushed', seed: f.seed ?? 1, boot: f.boot ?? 3 };
}

export const faultKindSchema = z.enum(FAULT_KINDS);

/** The fault kinds a target offering these actions can deliver. */
export function deliverableKinds(actions: readonly FaultAction[]): FaultKind[] {
  return FAULT_KINDS.filter((k) => actions.includes(FAULTS[k].needs));
}

export function canDeliver(kind: FaultKind, actions: readonly FaultAction[]): boolean {
  return actions.includes(FAULTS[kind].needs);
}
