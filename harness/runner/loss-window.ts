// The inputs of a fault trial's loss prediction (harness/checker/loss-prediction.ts) from what
// the runner has: the cell's settings, the cluster, the fault kind, the writeback sysctls in
// force where the brokers' page cache is (a cell's own values, else the guest kernel's defaults
// in a VM or the host's current ones), the file system's journal commit interval.
import { readFileSync } from 'node:fs';
import { predictLoss, journalCommitMsOf } from '../checker/loss-prediction.ts';
import type { CheckReport } from '../checker/checker.ts';
import { FAULTS } from '../faults/registry.ts';
import type { LossPrediction } from '../results/types.ts';
import type { ResolvedSettings } from '../scenario/settings.ts';
import type { Scenario } from '../scenario/types.ts';
import type { TargetCapabilities } from '../targets/types.ts';
import type { AckLedger } from '../workload/ledger.ts';
import type { FiredFault } from './fault-schedule.ts';
import type { IsrChange } from '../probes/isr-sampler.ts';

/** Linux's defaults (centisecs): a guest kernel's unless a cell sets them. */
const KERNEL_DEFAULT_CS = { 'vm.dirty_expire_centisecs': 3000, 'vm.dirty_writeback_centisecs': 500 } as const;

function sysctlMs(name: keyof typeof KERNEL_DEFAULT_CS, settings: ResolvedSettings, where: TargetCapabilities['sysctls']): number {
  const set = settings.sysctls[name];
  if (set !== undefined) return set * 10;
  if (where === 'host') {
    try {
      const v = Number(readFileSync(`/proc/sys/vm/${name.slice(3)}`, 'utf8').trim());
      if (Number.isFinite(v) && v > 0) return v * 10;
    } catch {
      // not Linux, or /proc hidden: the kernel's default stands in
    }
  }
  return KERNEL_DEFAULT_CS[name] * 10;
}

export function predictTrialLoss(o: {
  fired: FiredFault;
  settings: ResolvedSettings;
  scenario: Pick<Scenario, 'cluster' | 'vm'>;
  caps: TargetCapabilities;
  ledger: AckLedger;
  check: CheckReport;
  /** The ISR sampled during the load (rule 3 of the prediction). */
  isr?: readonly IsrChange[];
}): LossPrediction {
  const leaders = new Map<number, number>();
  for (const [p, id] of o.fired.leaders) if (id !== null) leaders.set(p, id);
  const partitions = o.ledger.partitions();
  return predictLoss({
    faultKind: o.fired.plan.fault.kind,
    victims: o.fired.targets,
    losesPageCache: FAULTS[o.fired.plan.fault.kind].losesPageCache,
    leaders,
    acks: o.settings.acks,
    minInsyncReplicas: o.settings.minInsyncReplicas,
    replicationFactor: o.scenario.cluster.replicationFactor,
    flush: o.settings.flush,
    io: o.settings.io,
    replicaLagTimeMaxMs: o.settings.replicaLagTimeMaxMs,
    dirtyExpireMs: sysctlMs('vm.dirty_expire_centisecs', o.settings, o.caps.sysctls),
    dirtyWritebackMs: sysctlMs('vm.dirty_writeback_centisecs', o.settings, o.caps.sysctls),
    journalCommitMs: journalCommitMsOf(o.scenario.vm?.mountOptions),
    volatileCache: (o.settings.values['vm.disk.model'] ?? o.scenario.vm?.disk?.model) === 'volatile-cache',
    batches: partitions.flatMap((p) => [...o.ledger.batches(p)]),
    cutMs: o.fired.cut.atMs,
    lost: o.check.lost,
    ...(o.isr ? { isr: o.isr } : {}),
  });
}
