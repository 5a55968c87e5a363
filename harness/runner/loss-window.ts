// The inputs of a fault trial's loss prediction (harness/checker/loss-prediction.ts) from what
// the runner has: the cell's settings, the cluster, the fault kind, the writeback sysctls in
// force where the brokers' page cache is (a cell's own values, else the guest kernel's defaults
// in a VM or the host's current ones), the file system's journal commit interval.
import { readFileSync } from 'node:fs';
import { predictLoss, journalCommitMsOf } from '../checker/loss-prediction.ts';
import type { CheckReport } from '../checker/checker.ts';
import { FAULTS } from '../faults/registry.ts';
import type { LossPrediction } from '../results/types.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import type { Scenario } from '../model/scenario.ts';
import type { TargetCapabilities } from '../targets/types.ts';
import type { AckLedger } from '../history/ledger.ts';
import type { FiredFault, ScheduledEntry } from './fault-schedule.ts';
import { isrAt, type IsrChange } from '../probes/isr-sampler.ts';
import { cutsLeaderFromFollowers } from '../faults/partition.ts';

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
  /** The trial's schedule as run: a partition entry that cut the leader from its followers feeds rule 3's isolatedAtMs. */
  entries?: readonly ScheduledEntry[];
}): LossPrediction {
  const isolatedAtMs = o.entries ? leaderIsolatedAt(o.entries, o.fired, o.isr) : undefined;
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
    ...(isolatedAtMs !== undefined ? { isolatedAtMs } : {}),
    eligibleLeaderReplicas: o.settings.eligibleLeaderReplicas,
  });
}

/**
 * When a partition entry that started by the trial's fault cut the leader of partition 0 (at the
 * fault) from every one of its in-sync followers on the replication link (cutsLeaderFromFollowers):
 * from then on what it acknowledged alone is on it alone (a zombie, when the controller lost it
 * too). The followers are the ISR sampled just before the cut, less the leader; unknown ISR: none.
 */
export function leaderIsolatedAt(entries: readonly ScheduledEntry[], fired: FiredFault, isr: readonly IsrChange[] | undefined): number | undefined {
  const leader = fired.leaders.get(0);
  if (leader === null || leader === undefined || !isr) return undefined;
  for (const e of entries) {
    const cut = e.fired?.cut;
    if (!cut?.partition || cut.atMs > fired.cut.atMs) continue;
    const inSync = isrAt(isr, 0, cut.atMs - 1)?.isr;
    if (!inSync) continue;
    if (cutsLeaderFromFollowers(cut.partition, leader, inSync.filter((id) => id !== leader))) return cut.atMs;
  }
  return undefined;
}
