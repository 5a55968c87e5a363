// A crash state checked by booting the system under test on it: the target starts one broker on
// the state's image (ClusterStartOptions.disks.images; the host route's mount replays the ext4
// journal, the broker recovers its store as a real start does), the driver reads the partition
// back, and the checker compares it with the acknowledgements made before the crash point
// (ledgerAsOf). trial.ts uses it for the booted sample of an offline-checked target, and for
// every state of a target that has no offline recovery tool (capabilities.crashStateCheck 'boot').
import path from 'node:path';
import { checkLedger, type CheckReport } from '../../checker/checker.ts';
import { waitForReplicasCaughtUp } from '../../checker/replicas.ts';
import type { ClientDriver } from '../../drivers/types.ts';
import type { ResolvedSettings } from '../../model/settings.ts';
import type { ClusterSpec } from '../../model/scenario.ts';
import { TopicNotOnImageError, type CrashStateChecker, type FaultableCluster, type Target } from '../../targets/types.ts';
import type { AckLedger } from '../../history/ledger.ts';
import { ledgerAsOf, type CheckStateOptions, type StateCheck } from '../../disk/crash-states/check-state.ts';

export interface BootCheckOptions {
  target: Target;
  driver: ClientDriver;
  cluster: ClusterSpec;
  settings: ResolvedSettings;
  brokerId: number;
  /** The state's image (served as it is, written through; the target's disk removes it at stop). */
  image: string;
  /** The booted broker's files (its logs, the disk's run dir). */
  workDir: string;
  ledger: AckLedger;
  /** Host clock ms of the crash point (acknowledgements after it are pending). */
  cutMs: number;
  signal?: AbortSignal;
}

export interface BootCheck {
  report: CheckReport;
  served: number;
  /** Why the broker did not start on the state (it then serves nothing), or null. */
  startFailure: string | null;
  /** The state holds no copy of the topic (TopicNotOnImageError). */
  noTopic: boolean;
  /** Broker start on the image (disk attach, journal replay, recovery), and the read-back with the check, ms. */
  startMs: number;
  readMs: number;
}

/** Boots the target on one state's image, reads the partition through the driver and checks it against the ledger at the cut. */
export async function bootCheckState(o: BootCheckOptions): Promise<BootCheck> {
  const t0 = performance.now();
  let cluster: FaultableCluster | null = null;
  let startFailure: string | null = null;
  let noTopic = false;
  try {
    cluster = (await o.target.start({ cluster: o.cluster, settings: o.settings, workDir: o.workDir, disks: { images: { [o.brokerId]: o.image } }, ...(o.signal ? { signal: o.signal } : {}) })) as FaultableCluster;
  } catch (err) {
    noTopic = err instanceof TopicNotOnImageError;
    startFailure = (err as Error).message.split('\n')[0]!;
  }
  const startMs = performance.now() - t0;
  try {
    const asOf = ledgerAsOf(o.ledger, o.cutMs);
    let report: CheckReport;
    if (cluster) {
      const client = o.driver.connect(cluster, { dataOnHost: o.target.capabilities.dataOnHost });
      // A leader that recovered may advance its HW to its log end only after a moment: read once it did.
      await waitForReplicasCaughtUp(client, o.cluster.topic, [0], 30_000, 0);
      const consumed = await client.consume({ topic: o.cluster.topic, partition: 0, brokerId: o.brokerId, timeoutMs: 60_000 });
      report = checkLedger(asOf, [consumed], { cutMs: o.cutMs });
    } else {
      // The broker would not start on this state (Kafka halts on a log dir it cannot load; no stream in a NATS store): it serves nothing.
      report = checkLedger(asOf, [], { cutMs: o.cutMs });
    }
    const served = report.perPartition.reduce((a, p) => a + p.served, 0);
    return { report, served, startFailure, noTopic, startMs: Math.round(startMs), readMs: Math.round(performance.now() - t0 - startMs) };
  } finally {
    await cluster?.stop().catch(() => undefined);
  }
}

/**
 * The checker of a target that boots every state (capabilities.crashStateCheck 'boot'): each
 * state's image booted in its own scratch directory. Timings: the boot (disk attach with its
 * journal replay, the server's recovery) counts as recover, the read-back and check as check.
 * A broker that does not start on a state (other than for a missing topic) fails the state.
 */
export function bootingCrashStateChecker(o: Omit<BootCheckOptions, 'image' | 'workDir' | 'ledger' | 'cutMs'>): CrashStateChecker {
  return {
    describe: `${o.target.kind} booted on every state (no offline recovery tool: the broker starts on the state's image, the driver reads it back)`,
    async checkState(s: CheckStateOptions): Promise<StateCheck> {
      const b = await bootCheckState({ ...o, image: s.image, workDir: path.join(s.scratch, 'boot'), ledger: s.ledger, cutMs: s.cutMs });
      if (b.startFailure && !b.noTopic) throw new Error(`the ${o.target.kind} broker did not start on it: ${b.startFailure}`);
      return { report: b.report, recoveries: [], journalExit: 0, noDataDir: b.noTopic, timings: { journalMs: 0, extractMs: 0, recoverMs: b.startMs, checkMs: b.readMs } };
    },
    close: async () => {},
  };
}
