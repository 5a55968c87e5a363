// One crash-states trial on the VM target: a broker VM whose data disk records every request,
// a load with the ack ledger,
// a power cut, then N crash states built from the write log and checked on the host, and a
// sample of them booted in a VM and checked through the real broker. The two answers must agree.
//
// The recorder follows the scenario's disk: `vm.disk: { model: volatile-cache }` is the harness's
// NBD disk, whose own write log has exact host-clock submit/complete stamps (observedStamps
// false, no clock uncertainty) and marks the FLUSH/FUA a lying drive did not honour; `model:
// file` keeps QEMU's blklogwrites driver (a file disk has no volatile cache of its own, and its
// stamps are a watcher's observations: observedStamps true, 5 ms uncertainty).
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { hostClockUs } from '../../../engine/common/clock.ts';
import { checkLedger } from '../../checker/checker.ts';
import { httpDriver } from '../../drivers/http/driver.ts';
import type { ProduceResult } from '../../drivers/types.ts';
import type { ResolvedSettings } from '../../scenario/settings.ts';
import type { ClusterSpec } from '../../scenario/types.ts';
import type { CrashStateRow, CrashStatesResult } from '../../results/types.ts';
import { vmTarget, type VmTargetOptions } from '../../targets/vm-target.ts';
import { AckLedger } from '../../workload/ledger.ts';
import { BatchFactory } from '../../workload/batch-factory.ts';
import { createFileDisk, FileDisk, sparseCopy, type VmImage } from '../../vm/index.ts';
import { effectiveDiskSpec } from '../disk-spec.ts';
import { NbdDisk } from '../nbd-disk.ts';
import { BlkLogWritesDisk, convertDmLogWrites, LogWatcher } from './blklogwrites.ts';
import { ledgerAsOf } from './check-state.ts';
import { buildAndCheckCrashStates, chooseBooted, logConfigOf, verifyBootedStates, type CrashStatesBreakdown } from './run.ts';
import type { OnCutPolicy } from './plan.ts';

export interface CrashStatesTrialOptions {
  workDir: string;
  cluster: ClusterSpec;
  settings: ResolvedSettings;
  vm: VmTargetOptions['vm'];
  vmImage?: VmImage;
  workload: { recordBytes: number; recordsPerBatch: number; connections: number };
  /** The cut comes this long after the load started (ms). */
  cutAfterMs: number;
  states: number;
  policy: OnCutPolicy;
  seed: number;
  /** States also booted in a VM and checked through the real broker. */
  boot: number;
  /** See buildAndCheckCrashStates; default 5 ms for the blklogwrites watcher's stamps, 0 on the NBD disk. */
  clockUncertaintyMs?: number;
  /** Where state images are built (default: /dev/shm when present, else workDir). */
  scratchDir?: string;
  /** Checks in flight (default 2). */
  concurrency?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
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
  unseenEntries: number;
  /** Which disk recorded the write log: the NBD disk's own log, or QEMU's blklogwrites. */
  recorder: 'nbd' | 'blklogwrites';
  /** The load's figures (undefined when it failed). */
  load: ProduceResult | undefined;
  accelerator?: 'kvm' | 'tcg';
}

export async function runCrashStatesTrial(o: CrashStatesTrialOptions): Promise<CrashStatesTrial> {
  const log = o.log ?? (() => {});
  await fs.mkdir(o.workDir, { recursive: true });
  const baseImage = path.join(o.workDir, 'base.img');
  const dmLog = path.join(o.workDir, 'disk.dmlog');
  const writeLog = path.join(o.workDir, 'disk.wlog');
  const diskSpec = effectiveDiskSpec(o.vm?.disk, o.settings.values);
  const recorder = diskSpec.model === 'volatile-cache' ? 'nbd' : 'blklogwrites';
  let watcher: LogWatcher | null = null;
  let nbd: NbdDisk | null = null;
  const target = vmTarget({
    vm: o.vm,
    ...(o.vmImage ? { image: o.vmImage } : {}),
    log,
    dataDisk: async (id, file, sizeMiB) => {
      const disk = await createFileDisk(file, sizeMiB);
      // The base image: the disk before the guest ever saw it.
      await sparseCopy(disk.path, baseImage);
      if (recorder === 'nbd') {
        nbd = await NbdDisk.create({ file, sizeMiB, spec: diskSpec, seed: (o.seed + id) >>> 0, writeLogPath: writeLog, log, existing: true });
        log(nbd.describe());
        return nbd;
      }
      const d = new BlkLogWritesDisk(file, dmLog, sizeMiB);
      const w = new LogWatcher(dmLog);
      watcher = w;
      await w.ready;
      return d;
    },
  });
  const cluster = await target.start({ cluster: o.cluster, settings: o.settings, workDir: path.join(o.workDir, 'trial'), ...(o.signal ? { signal: o.signal } : {}) });
  const ledger = new AckLedger({ recordsPerBatch: o.workload.recordsPerBatch, producerIdBase: 7000, partitions: [0] });
  let cutAtMs = 0;
  let loadStartMs = 0;
  let cutUs = 0;
  let load: ProduceResult | undefined;
  const accelerator = cluster.accelerator;
  try {
    if (o.cluster.partitions !== 1 || o.cluster.brokers !== 1) throw new Error(`crash-states trial: one broker and one partition (found ${o.cluster.brokers} brokers, ${o.cluster.partitions} partitions)`);
    const client = httpDriver().connect(cluster, { dataOnHost: false });
    const stop = new AbortController();
    loadStartMs = Date.now();
    const loadRun = client.produce({
      topic: o.cluster.topic,
      leaders: new Map([[0, 1]]),
      acks: o.settings.acks,
      timeoutMs: 15_000,
      connections: o.workload.connections,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: Math.ceil(o.cutAfterMs / 1000) + 30,
      ledger,
      factory: new BatchFactory({ recordBytes: o.workload.recordBytes, recordsPerBatch: o.workload.recordsPerBatch }),
      signal: stop.signal,
    });
    await new Promise((r) => setTimeout(r, o.cutAfterMs));
    const cut = await cluster.powerCut([1]);
    cutUs = hostClockUs();
    cutAtMs = cut.atMs;
    stop.abort();
    load = await loadRun.catch((err: unknown) => {
      log(`load after the cut: ${(err as Error).message}`);
      return undefined;
    });
    log(`power cut at ${cutAtMs - loadStartMs} ms; ${ledger.counts().ackedRecords} records acknowledged`);
  } finally {
    await cluster.stop().catch(() => undefined);
    await (watcher as LogWatcher | null)?.stop();
  }
  let unseen = 0;
  if (recorder === 'nbd') {
    // The broker's disposal closed the NBD disk and its write log.
    const d = nbd as NbdDisk | null;
    if (!d) throw new Error('crash-states trial: the NBD data disk was never made');
    if (d.server.writeLogFull) throw d.server.writeLogFull;
    log(`write log ${writeLog}: ${d.writeLog?.records ?? 0} records from the NBD disk (exact host-clock stamps)`);
  } else {
    const w = watcher as LogWatcher | null;
    if (!w) throw new Error('crash-states trial: the data disk was never made');
    const conv = convertDmLogWrites(dmLog, w.seen, writeLog, { endUs: cutUs });
    unseen = conv.unseen;
    log(`write log: ${conv.records} records (${conv.unseen} stamped at the cut: written after the watcher's last look)`);
  }
  const clockUncertaintyMs = o.clockUncertaintyMs ?? (recorder === 'nbd' ? 0 : 5);
  const bootCount = Math.max(0, o.boot);
  // State images and extracted files are scratch: on tmpfs when there is one (debugfs writes
  // preallocated index files in full; the page cache alone is enough for them).
  const statesDir = await fs.mkdtemp(path.join(o.scratchDir ?? (existsSync('/dev/shm') ? '/dev/shm' : o.workDir), 'durolab-crash-states-'));
  let bootSet = new Set<number>(); // chosen once the states are planned
  const outcome = await buildAndCheckCrashStates({
    signal: o.signal,
    baseImage,
    writeLog,
    ledger,
    guestDataDir: cluster.brokers[0]!.guestDataDir,
    topic: o.cluster.topic,
    logConfig: logConfigOf(o.settings),
    states: o.states,
    policy: o.policy,
    seed: o.seed,
    endUs: cutUs,
    loadStartMs,
    clockUncertaintyMs,
    observedStamps: recorder === 'blklogwrites',
    workDir: statesDir,
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    keep: (plan) => bootSet.has(plan.index),
    onPlans: (plans) => (bootSet = chooseBooted(plans, bootCount, o.seed)),
  }).catch(async (err: unknown) => {
    await fs.rm(statesDir, { recursive: true, force: true });
    throw err;
  });
  const { booted, disagreements } = await verifyBootedStates(outcome, (image, row) => bootAndCheck({ ...o, image, row, ledger, clockUncertaintyMs, log }), o.signal).finally(() =>
    fs.rm(statesDir, { recursive: true, force: true }),
  );
  return {
    result: outcome.result,
    breakdown: outcome.breakdown,
    ackedAtCut: ledger.counts().ackedRecords,
    cutAtMs,
    loadStartMs,
    booted,
    disagreements,
    unseenEntries: unseen,
    recorder,
    load,
    ...(accelerator ? { accelerator } : {}),
  };
}

/** Boots a broker VM on a crash-state image, reads the partition through the broker, checks it like the host did. */
async function bootAndCheck(
  o: CrashStatesTrialOptions & { image: string; row: CrashStateRow; ledger: AckLedger; clockUncertaintyMs: number; log: (l: string) => void },
): Promise<NonNullable<CrashStateRow['booted']>> {
  const sizeMiB = o.vm?.diskMiB ?? 256;
  const target = vmTarget({ vm: o.vm, ...(o.vmImage ? { image: o.vmImage } : {}), log: o.log, dataDisk: async (_id, _file) => new FileDisk(o.image, sizeMiB) });
  const cluster = await target.start({ cluster: o.cluster, settings: o.settings, workDir: path.join(o.workDir, `boot-${o.row.state}`) });
  try {
    const client = httpDriver().connect(cluster, { dataOnHost: false });
    await cluster.waitForHighWatermarks(o.cluster.topic, 60_000);
    const consumed = await client.consume({ topic: o.cluster.topic, partition: 0, brokerId: 1, timeoutMs: 60_000 });
    const cutMs = o.row.ackCutMs;
    const report = checkLedger(ledgerAsOf(o.ledger, cutMs), [consumed], { cutMs });
    const served = report.perPartition.reduce((a, p) => a + p.served, 0);
    const agrees = report.ackedLost === o.row.lostAcked && served === o.row.served && report.corrupt === o.row.corrupt;
    return {
      lostAcked: report.ackedLost,
      served,
      agrees,
      ...(agrees ? {} : { detail: `host check: ${o.row.lostAcked} lost, ${o.row.served} served, ${o.row.corrupt} corrupt; booted broker: ${report.ackedLost} lost, ${served} served, ${report.corrupt} corrupt` }),
    };
  } finally {
    await cluster.stop();
  }
}
