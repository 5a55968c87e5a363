// Delivers a fault to a cluster through the fault registry (harness/faults/registry.ts): a
// power cut (SIGKILL of the brokers' QEMU processes, the guest page cache dies with them) or a
// process kill (SIGKILL of the broker process only, the page cache survives), or by the cluster
// itself where it delivers a kind its own way (FaultableCluster.ownDelivery: target external's
// command templates); a lasting kind's heal goes the same way. The CutInfo's atMs is the moment
// the fault was sent.
import type { Fault } from '../model/scenario.ts';
import type { Target, CutInfo, FaultableCluster, RunningCluster } from '../targets/types.ts';
import { type FaultContext } from './fault-context.ts';
import { FAULTS, canDeliver, deliverableKinds, type FaultKind } from './registry.ts';

export function isFaultable(c: RunningCluster): c is FaultableCluster {
  const f = c as Partial<FaultableCluster>;
  return typeof f.processKill === 'function' && typeof f.restart === 'function';
}

/** Why a target cannot deliver a fault kind, or null when it can. */
export function refusal(kind: FaultKind, target: Pick<Target, 'kind' | 'capabilities'>): string | null {
  if (canDeliver(kind, target.capabilities.faultActions)) return null;
  const can = deliverableKinds(target.capabilities.faultActions);
  const why = target.capabilities.lacksFaultAction?.[FAULTS[kind].needs];
  return `target ${target.kind} cannot deliver fault ${kind} (it needs ${FAULTS[kind].needs})${why ? `: ${why}` : ''}; target ${target.kind} delivers ${can.length ? can.join(', ') : 'no fault'}`;
}

/** Throws before anything starts when a target cannot deliver the scenario's faults. */
export function assertCanInject(faults: Fault[], cluster: RunningCluster, target: Pick<Target, 'kind' | 'capabilities'>): asserts cluster is FaultableCluster {
  if (faults.length === 0) return;
  if (!isFaultable(cluster)) throw new Error(`target ${target.kind}: its clusters cannot take faults (no processKill/restart)`);
  for (const f of faults) {
    const why = refusal(f.kind, target);
    if (why) throw new Error(`fault ${f.kind}: ${why}`);
  }
}

/**
 * Phase start of a schedule entry: the cluster's own delivery of its kind when it has one (target
 * external's templates), else the kind's. `ctx` is the entry's context, the same object its heal gets.
 */
export async function injectFault(fault: Fault, cluster: FaultableCluster, brokerIds: number[], ctx: FaultContext): Promise<CutInfo> {
  if (brokerIds.length === 0) throw new Error(`fault ${fault.kind}: no broker to hit`);
  const own = cluster.ownDelivery?.(fault.kind);
  return own ? own.deliver(brokerIds, fault, { topic: ctx.topic }) : FAULTS[fault.kind].deliver(cluster, brokerIds, ctx);
}

/** Phase heal of a lasting entry, by the same hand that delivered it (injectFault), with the same context. */
export async function healFault(fault: Fault, cluster: FaultableCluster, brokerIds: number[], ctx: FaultContext): Promise<void> {
  const own = cluster.ownDelivery?.(fault.kind);
  if (own) {
    if (!own.heal) throw new Error(`fault ${fault.kind}: this cluster delivers it without a heal`);
    return own.heal(brokerIds, fault, { topic: ctx.topic });
  }
  const heal = FAULTS[fault.kind].heal;
  if (!heal) throw new Error(`fault ${fault.kind}: it does not last, there is nothing to heal`);
  return heal(cluster, brokerIds, ctx);
}
