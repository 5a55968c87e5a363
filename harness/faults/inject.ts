// Delivers a fault to a cluster: a power cut (SIGKILL of the brokers' QEMU processes, the guest
// page cache dies with them) or a process kill (SIGKILL of the broker process only, the page
// cache survives). The CutInfo's atMs is the moment the kill was sent.
import type { Fault } from '../scenario/types.ts';
import type { CutInfo, FaultableCluster, RunningCluster } from '../targets/types.ts';

export function isFaultable(c: RunningCluster): c is FaultableCluster {
  const f = c as Partial<FaultableCluster>;
  return typeof f.processKill === 'function' && typeof f.restart === 'function' && typeof f.powerCut === 'function';
}

/** Throws before anything starts when a target cannot deliver the scenario's faults. */
export function assertCanInject(faults: Fault[], cluster: RunningCluster, targetKind: string): asserts cluster is FaultableCluster {
  if (faults.length === 0) return;
  if (!isFaultable(cluster)) throw new Error(`target ${targetKind}: its clusters cannot take faults (no processKill/powerCut/restart)`);
  for (const f of faults) {
    if (f.kind === 'power-cut' && !cluster.supportsPowerCut) {
      throw new Error(`fault power-cut: target ${targetKind} cannot cut power (a process kill keeps the page cache); use target: vm or kind: process-kill`);
    }
  }
}

export async function injectFault(kind: Fault['kind'], cluster: FaultableCluster, brokerIds: number[]): Promise<CutInfo> {
  if (brokerIds.length === 0) throw new Error(`fault ${kind}: no broker to hit`);
  if (kind === 'power-cut') {
    if (!cluster.supportsPowerCut) throw new Error(`fault power-cut of broker(s) ${brokerIds.join(', ')}: this target cannot cut power; use target: vm`);
    return cluster.powerCut(brokerIds);
  }
  return cluster.processKill(brokerIds);
}
