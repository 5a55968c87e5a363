// The one list of fault kinds. Each kind declares the fields of its scenario entry beyond the
// common kind/target/when (none yet), the action a target must offer to deliver it, and how it
// is delivered to a running cluster. The scenario schema, validation, results types, the report
// and the runner read the kinds from here; FAULTS is a Record over FaultKind, so a kind without
// a delivery is a type error.
import * as z from 'zod';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';

export const FAULT_KINDS = ['power-cut', 'process-kill'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * What a target's clusters can do to a broker. A target lists the actions it offers
 * (TargetCapabilities.faultActions); a fault kind names the one it needs.
 */
export const FAULT_ACTIONS = ['kill-broker-process', 'cut-power'] as const;
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
};

export const faultKindSchema = z.enum(FAULT_KINDS);

/** The fault kinds a target offering these actions can deliver. */
export function deliverableKinds(actions: readonly FaultAction[]): FaultKind[] {
  return FAULT_KINDS.filter((k) => actions.includes(FAULTS[k].needs));
}

export function canDeliver(kind: FaultKind, actions: readonly FaultAction[]): boolean {
  return actions.includes(FAULTS[kind].needs);
}
