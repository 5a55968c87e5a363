// One crash-states trial through the target and driver seams, for every target with a fault
// disk: a broker VM (capabilities.faultDisk 'guest': its virtio disk) or a broker on this host on
// the lab's fault disk ('host': Apache Kafka, durolab's broker as processes). The target starts
// one broker with its disk recorded (ClusterStartOptions.disks.record: a copy of the fresh image
// and a write log of every request; RunningCluster.recordedDisk hands them over); the cell's
// driver loads it with the ack ledger; the broker loses power at the drawn moment. From the
// write log the builder makes N crash states, each checked by the target's own recovery
// (Target.crashStateChecker: Kafka's UnifiedLog for target kafka; durolab's engine otherwise),
// and a sample is booted: the target starts on the state's image (disks.images), recovers it as
// a real start does, and the driver reads the partition back (boot-check.ts). The two answers
// must agree. A target with no offline recovery tool (capabilities.crashStateCheck 'boot': nats)
// has every state checked that way instead, and no sample apart.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { hostClockUs, wallClockStepMs } from '../../../engine/common/clock.ts';
import type { ClientDriver, ProduceResult } from '../../drivers/types.ts';
import type { ResolvedSettings } from '../../model/settings.ts';
import type { ClusterSpec } from '../../model/scenario.ts';
import type { CrashStateRow, CrashStatesResult, StorageFailure } from '../../results/types.ts';
import { fullDiskFindings } from '../full-disk.ts';
import type { FaultableCluster, Target } from '../../targets/types.ts';
import { AckLedger } from '../../history/ledger.ts';
import { BatchFactory } from '../../history/batch-factory.ts';
import { bootCheckState, bootingCrashStateChecker } from './boot-check.ts';
import { keepCrashStateEvidence } from '../../disk/crash-states/crash-state-evidence.ts';
import { buildAndCheckCrashStates, chooseBooted, logConfigOf, verifyBootedStates, type CrashStatesBreakdown } from '../../disk/crash-states/run.ts';
import type { OnCutPolicy } from '../../disk/crash-states/plan.ts';

export interface CrashStatesTrialOptions {
  target: Target;
  driver: ClientDriver;
  workDir: string;
  cluster: ClusterSpec;
  settings: ResolvedSettings;
  workload: { recordBytes: number; recordsPerBatch: number; connections: number; pipelining: number; producer?: Readonly<Record<string, unknown>> };
  /** The cut comes this long after the load started (ms). */
  cutAfterMs: number;
  states: number;
  policy: OnCutPolicy;
  seed: number;
  /** States also booted on the target and read back through the driver. */
  boot: number;
  /** Where state images are built (default: /dev/shm when present, else workDir). */
  scratchDir?: string;
  /** Checks in flight (default 2). */
  concurrency?: number;
  /** See buildAndCheckCrashStates; default 5 ms for the blklogwrites watcher's stamps, 0 for the NBD disk's. */
  clockUncertaintyMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Keep the base image beside the write log (workDir/base.img) whatever the states show (--keep-data). */
  keepBaseImage?: boolean;
}

export interface CrashStatesTrial {
  result: CrashStatesResult;
  breakdown: CrashStatesBreakdown;
  ackedAtCut: number;
  cutAtMs: number;
  loadStartMs: number;
  /** States booted and whether they agreed. */
  booted: CrashStateRow[];
  disagreements: string[];
  /** blklogwrites entries the watcher never saw before the cut (stamped at the cut). */
  unseenEntries: number;
  /** Which disk recorded the write log: the NBD disk's own log, or QEMU's blklogwrites. */
  recorder: 'nbd' | 'blklogwrites';
  /** The load's figures (undefined when it failed). */
  load: ProduceResult | undefined;
  accelerator?: 'kvm' | 'tcg';
  /** Whose recovery checked the states. */
  checkedBy: string;
  /** The trial's stretches, ms: broker start, load, cut, checker start, states, boot. */
  steps: Record<string, number>;
  /** What the broker's log said of a failed log dir up to the cut. */
  storageFailures: StorageFailure[];
  /** The broker's disk filled before the cut (harness/runner/full-disk.ts): the states show a full disk, not a power cut. */
  fullDisk: string[];
}

/**
 * The ack ledger's times are Date.now() (the drivers stamp them); the write log's and the cut's
 * are host clock (the disk server is on the harness's: disk-server-command.ts). The two agree to
 * Date.now()'s whole-ms rounding (ledgerAsOf allows for it) unless the wall clock was stepped
 * since the harness started (engine/common/clock.ts): refused beyond half a millisecond.
 */
function requireLedgerOnHostClock(when: string): void {
  const stepMs = wallClockStepMs();
  if (stepMs > 0.5 || stepMs < -1.5) {
    throw new Error(
      `crash-states trial: ${when}, the wall clock (Date.now(), the ack ledger's times) was ${stepMs.toFixed(1)} ms off the host clock (the write log's times) where (-1, 0] ms was expected: it was stepped (NTP, settimeofday) since the harness started, so acknowledgements and crash points would not compare; run again`,
    );
  }
}

export async function runCrashStatesTrial(o: CrashStatesTrialOptions): Promise<CrashStatesTrial> {
  // Offline checks decode stored batches: scenario check refuses crash states with a driver that
  // decodes none (FaultKindSpec.needsDriver) unless the target boots every state.
  const bootsEveryState = o.target.capabilities.crashStateCheck === 'boot';
  const servedFromStored = o.driver.servedFromStored?.bind(o.driver);
  if (!servedFromStored && !bootsEveryState) throw new Error(`crash states: driver ${o.driver.name} decodes no stored batches (capabilities.storedBatches) and target ${o.target.kind} checks its states offline`);
  const log = o.log ?? (() => {});
  if (o.cluster.partitions !== 1 || o.cluster.brokers !== 1) throw new Error(`crash-states trial: one broker and one partition (found ${o.cluster.brokers} brokers, ${o.cluster.partitions} partitions)`);
  await fs.mkdir(o.workDir, { recursive: true });
  const steps: Record<string, number> = {};
  let t = Date.now();
  const lap = (k: string) => {
    steps[k] = Date.now() - t;
    t = Date.now();
  };
  const cluster = (await o.target.start({ cluster: o.cluster, settings: o.settings, workDir: path.join(o.workDir, 'trial'), seed: o.seed, disks: { record: true }, ...(o.signal ? { signal: o.signal } : {}) })) as FaultableCluster;
  lap('brokerStart');
  const brokerId = cluster.brokers[0]!.id;
  const ledger = new AckLedger({ recordsPerBatch: o.workload.recordsPerBatch, producerIdBase: (Date.now() % 1_000_000) * 1000, partitions: [0] });
  let cutAtMs = 0;
  let loadStartMs = 0;
  let cutUs = 0;
  let load: ProduceResult | undefined;
  let storageFailures: StorageFailure[] = [];
  let fullDisk: string[] = [];
  const recorded = cluster.recordedDisk?.(brokerId) ?? null;
  try {
    if (!recorded) throw new Error(`crash-states trial: target ${o.target.kind} kept no write log of broker ${brokerId}'s disk (it needs a fault disk: a VM's, or the host route's)`);
    const client = o.driver.connect(cluster, { dataOnHost: o.target.capabilities.dataOnHost });
    const leaders = new Map([...(await cluster.leaders(o.cluster.topic))].map(([p, b]) => [p, b.id]));
    const stop = new AbortController();
    loadStartMs = Date.now();
    requireLedgerOnHostClock('when the load started');
    const loadRun = client.produce({
      topic: o.cluster.topic,
      leaders,
      acks: o.settings.acks,
      timeoutMs: 15_000,
      connections: o.workload.connections,
      pipelining: o.workload.pipelining,
      rate: null,
      warmupSec: 0,
      durationSec: Math.ceil(o.cutAfterMs / 1000) + 30,
      ledger,
      factory: new BatchFactory({ recordBytes: o.workload.recordBytes, recordsPerBatch: o.workload.recordsPerBatch }),
      ...(o.workload.producer ? { producer: o.workload.producer } : {}),
      signal: o.signal ? AbortSignal.any([o.signal, stop.signal]) : stop.signal,
    });
    await new Promise((r) => setTimeout(r, o.cutAfterMs));
    lap('load');
    if (!cluster.powerCut) throw new Error(`crash-states trial: target ${o.target.kind} has no power cut`);
    const cut = await cluster.powerCut([brokerId]);
    cutUs = hostClockUs();
    requireLedgerOnHostClock('at the cut');
    cutAtMs = cut.atMs;
    storageFailures = cut.storageFailures ?? [];
    fullDisk = fullDiskFindings(cut);
    for (const f of fullDisk) log(`FULL DISK: ${f}`);
    // States built from a write log that stopped early would be wrong: a full log fails the trial, naming the node and its log.
    const full = Object.values(cut.diskAtCut ?? {}).map((d) => (d as { writeLogFull?: string }).writeLogFull).filter(Boolean);
    if (full.length) throw new Error(`crash-states trial: ${full.join('; ')} (raise vm.disk.writeLogLimit or shorten the load)`);
    stop.abort();
    load = await loadRun.catch((err: unknown) => {
      log(`load after the cut: ${(err as Error).message}`);
      return undefined;
    });
    lap('cut');
    log(`power cut of ${o.target.kind} broker ${brokerId} at ${cutAtMs - loadStartMs} ms; ${ledger.counts().ackedRecords} records acknowledged`);
  } catch (err) {
    // The images are scratch whatever happens (the write log stays: it is the trial's record).
    if (recorded) await fs.rm(recorded.baseImage, { force: true });
    throw err;
  } finally {
    await cluster.stop().catch((err: Error) => log(`stopping the cut cluster: ${err.message}`));
  }
  const { baseImage, writeLog, dataDirOnDisk } = recorded!;
  const recorder = recorded!.recorder ?? 'nbd';
  const sealed = await (recorded!.seal?.(cutUs) ?? Promise.resolve({ unseen: 0 })).catch(async (err: unknown) => {
    await fs.rm(baseImage, { force: true });
    throw err;
  });
  const clockUncertaintyMs = o.clockUncertaintyMs ?? (recorder === 'blklogwrites' ? 5 : 0);
  const accelerator = cluster.accelerator;
  // State images and extracted files are scratch: on tmpfs when there is one (debugfs writes
  // preallocated index files in full; the page cache alone is enough for them).
  const states = await fs.mkdtemp(path.join(o.scratchDir ?? (existsSync('/dev/shm') ? '/dev/shm' : o.workDir), 'durolab-crash-states-'));
  const scratchGone = async () => {
    await fs.rm(states, { recursive: true, force: true });
    await fs.rm(baseImage, { force: true });
  };
  const checker = bootsEveryState
    ? bootingCrashStateChecker({ target: o.target, driver: o.driver, cluster: o.cluster, settings: o.settings, brokerId, ...(o.signal ? { signal: o.signal } : {}) })
    : o.target.crashStateChecker
      ? await o.target.crashStateChecker(o.settings).catch(async (err: unknown) => {
          await scratchGone();
          throw err;
        })
      : null;
  lap('checkerStart');
  log(`crash states of ${writeLog}, checked by ${checker?.describe ?? "durolab's recovery (engine Log.open over the state's files)"}`);
  let bootSet = new Set<number>();
  const outcome = await buildAndCheckCrashStates({
    signal: o.signal,
    baseImage,
    writeLog,
    ledger,
    guestDataDir: dataDirOnDisk,
    topic: o.cluster.topic,
    logConfig: logConfigOf(o.settings),
    states: o.states,
    policy: o.policy,
    seed: o.seed,
    endUs: cutUs,
    loadStartMs,
    clockUncertaintyMs,
    observedStamps: recorder === 'blklogwrites',
    workDir: states,
    ...(servedFromStored ? { servedFromStored } : {}),
    ...(checker ? { checkState: (s) => checker.checkState(s) } : {}),
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    keep: (plan) => bootSet.has(plan.index),
    // Every state is booted already when the target has no offline check: no sample apart.
    onPlans: (plans) => (bootSet = chooseBooted(plans, bootsEveryState ? 0 : Math.max(0, o.boot), o.seed)),
  })
    .catch(async (err: unknown) => {
      await scratchGone();
      throw err;
    })
    .finally(() => checker?.close());
  lap('states');
  const verify = bootsEveryState
    ? Promise.resolve({ booted: [] as CrashStateRow[], disagreements: [] as string[] })
    : verifyBootedStates(outcome, (image, row) => bootAndRead(o, brokerId, image, row, ledger, log), o.signal);
  const { booted, disagreements } = await verify
    .catch(async (err: unknown) => {
      await scratchGone();
      throw err;
    })
    .finally(() => fs.rm(states, { recursive: true, force: true }));
  // The base image and the write log rebuild every state: the base is kept when asked or when booted states disagree.
  await keepCrashStateEvidence({ trialDir: o.workDir, baseImage, writeLog, dataDirOnDisk, result: outcome.result, ledger, keepBase: o.keepBaseImage === true || disagreements.length > 0 });
  lap('boot');
  return {
    result: outcome.result,
    breakdown: outcome.breakdown,
    ackedAtCut: ledger.counts().ackedRecords,
    cutAtMs,
    loadStartMs,
    booted,
    disagreements,
    unseenEntries: sealed.unseen,
    recorder,
    load,
    ...(accelerator ? { accelerator } : {}),
    checkedBy: checker?.describe ?? "durolab's recovery",
    steps,
    storageFailures,
    fullDisk,
  };
}

/** Starts the target on a kept state's image, reads the partition through the driver and checks it as the offline check did. */
async function bootAndRead(o: CrashStatesTrialOptions, brokerId: number, image: string, row: CrashStateRow, ledger: AckLedger, log: (line: string) => void): Promise<NonNullable<CrashStateRow['booted']>> {
  // The kept image is served as it is (no write log, write-through): the broker's start replays the journal and recovers.
  const b = await bootCheckState({ target: o.target, driver: o.driver, cluster: o.cluster, settings: o.settings, brokerId, image, workDir: path.join(o.workDir, `boot-${row.state}`), ledger, cutMs: row.ackCutMs });
  if (b.startFailure) log(`state ${row.state}: the ${o.target.kind} broker did not start on it (${b.startFailure}): serves nothing`);
  const { ackedLost: lostAcked, corrupt } = b.report;
  const agrees = lostAcked === row.lostAcked && b.served === row.served && corrupt === row.corrupt;
  return {
    lostAcked,
    served: b.served,
    agrees,
    ...(agrees
      ? {}
      : {
          detail: `offline check: ${row.lostAcked} lost, ${row.served} served, ${row.corrupt} corrupt; booted broker: ${lostAcked} lost, ${b.served} served, ${corrupt} corrupt${b.startFailure ? ` (did not start: ${b.startFailure})` : ''}`,
        }),
  };
}
