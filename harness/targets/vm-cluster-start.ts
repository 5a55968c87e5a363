// The start sequence of a VM target's cluster (vm-target.ts): stage the guest image under the
// work dir, start the host-side controller and create the topic, make each broker's data disk,
// boot every broker's VM in parallel, wait for serving leaders; the start's step timings. A
// crash-states trial records the disks (vm-recorded-disk.ts) or boots on a state's image.
// A failed or interrupted start kills its QEMUs and removes what it made.
import fs from 'node:fs/promises';
import path from 'node:path';
import { startControllerServer, type ControllerServer } from '../../engine/server/controller-server.ts';
import type { VmOptions as ScenarioVmOptions } from '../model/scenario.ts';
import { ensureNoOrphans, findQemusMatching, prepareVmTemplate, type VmImage } from '../vm/index.ts';
import { AGENT_GUEST_PORT } from './vm-network.ts';
import type { ClusterStartOptions, ClusterStartSteps } from './types.ts';
import { brokerSetFlags } from './types.ts';
import { VmBroker, type BootRecord } from './vm-broker.ts';
import { VmCluster, type VmStartTimings } from './vm-cluster.ts';
import type { VmTargetOptions } from './vm-target.ts';
import { planNetwork } from './vm-network.ts';
import { NbdDisk } from '../disk/nbd-disk.ts';
import { effectiveDiskSpec } from '../model/disk-spec.ts';
import { createDataDisk } from '../disk/nbd-disk.ts';
import { FileDisk, type DataDisk } from '../vm/disk.ts';
import { vmRecordingDisk, type VmRecordingDisk } from './vm-recorded-disk.ts';

/** Contiguous stretches of start() for a trial's step timing (harness/results/trial-steps.ts). */
function startSteps(
  t: { t0: number; tStaged: number; tDisks: number; tBooted: number; tEnd: number; templateMs: number; templateMadeMs: number | undefined; templateError: string | undefined },
  boots: BootRecord[],
): ClusterStartSteps {
  // The VMs boot in parallel: the slowest one's boot (spawn to agent, and what precedes the
  // spawn) is the boot step, the rest of that stretch (guest setup, broker start) broker start.
  const slowest = boots.reduce<BootRecord | undefined>((a, b) => ((b.toServingMs ?? 0) > (a?.toServingMs ?? -1) ? b : a), undefined);
  const bootMs = slowest?.toServingMs !== undefined ? slowest.toServingMs - (slowest.setupMs ?? 0) - (slowest.brokerStartMs ?? 0) : t.tBooted - t.tDisks;
  return {
    steps: {
      image: t.tStaged - t.t0 + t.templateMs,
      setup: t.tDisks - t.tStaged - t.templateMs,
      boot: Math.min(bootMs, t.tBooted - t.tDisks),
      brokerStart: Math.max(0, t.tBooted - t.tDisks - bootMs),
      leaders: t.tEnd - t.tBooted,
    },
    detail: {
      ...(slowest?.spawnToInitMs !== undefined ? { spawnToInitMs: slowest.spawnToInitMs } : {}),
      resumedBoots: boots.filter((b) => b.resumed).length,
      ...(t.templateMadeMs !== undefined ? { templateMadeMs: t.templateMadeMs } : {}),
    },
    ...notResumedOf(t.templateError, boots),
  };
}

/** Which first boots did not resume a saved guest they wanted, and why (a failed save of the guest first). */
function notResumedOf(templateError: string | undefined, boots: BootRecord[]): Pick<ClusterStartSteps, 'notResumed'> {
  const cold = boots.filter((b) => !b.resumed && b.resumeFallback).map((b) => `${b.name}: ${b.resumeFallback}`);
  if (cold.length === 0) return {};
  return { notResumed: templateError ? [`saving the guest failed: ${templateError}`, ...cold] : cold };
}

/** Live clusters of this process: the orphan sweep runs only when none is left (it would kill their VMs). */
const liveClusters = new Set<object>();

/**
 * Hard links of the image's kernel and initrd under the work dir: the shared image cache keeps
 * only the newest few images and may prune ours while a cut broker still has to boot again.
 */
async function stageImage(image: VmImage, dir: string): Promise<{ image: VmImage; dir: string | null }> {
  try {
    // Left over from an interrupted earlier start in the same work dir.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir, { recursive: true });
    const kernel = path.join(dir, 'vmlinuz');
    const initrd = path.join(dir, 'initrd.cpio');
    await fs.link(image.kernel, kernel);
    await fs.link(image.initrd, initrd);
    return { image: { ...image, kernel, initrd }, dir };
  } catch {
    // Another file system: boot from the cache directly (a concurrent prune could break a reboot).
    await fs.rm(dir, { recursive: true, force: true });
    return { image, dir: null };
  }
}

/** What a VM target hands each start: its options, the guest image (built once per target). */
export interface VmStartContext {
  opts: VmTargetOptions;
  vmOpts: ScenarioVmOptions;
  log: (line: string) => void;
  image: () => Promise<VmImage>;
}

export async function startVmCluster(o: ClusterStartOptions, ctx: VmStartContext): Promise<VmCluster> {
  const { opts, vmOpts, log } = ctx;
  const { cluster: spec, settings, signal } = o;
  if (signal?.aborted) throw new Error('interrupted before the VM cluster started');
  if (!Number.isInteger(spec.brokers) || spec.brokers < 1) throw new Error(`VM target: cluster.brokers must be an integer >= 1, got ${spec.brokers}`);
  const t0 = performance.now();
  const builtImage = await ctx.image();
  const tImage = performance.now();
  const workDir = path.resolve(o.workDir);
  await fs.mkdir(workDir, { recursive: true });
  const staged = await stageImage(builtImage, path.join(workDir, '.vm-image'));
  const tStaged = performance.now();
  const ids = Array.from({ length: spec.brokers }, (_, i) => i + 1);
  const vmBrokers = new Map<number, VmBroker>();
  const token = {};
  liveClusters.add(token);
  let controller: ControllerServer | undefined;
  const createdDisks: DataDisk[] = [];
  const recordings = new Map<number, VmRecordingDisk>();
  // Ctrl-C while VMs boot: kill their QEMUs now (Vm.start then fails at once) rather than
  // letting them finish booting first.
  const killBooting = (): void => {
    for (const pid of findQemusMatching(`${workDir}${path.sep}broker-`)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  };
  const cleanup = async (): Promise<void> => {
    killBooting();
    await Promise.all([...vmBrokers.values()].map((b) => b.dispose().catch(() => {})));
    await Promise.all(createdDisks.map((d) => d.close?.().catch(() => {})));
    await Promise.all([...recordings.values()].map((r) => r.stop()));
    await controller?.close();
    if (staged.dir) await fs.rm(staged.dir, { recursive: true, force: true });
    liveClusters.delete(token);
    if (liveClusters.size === 0) await ensureNoOrphans().catch(() => {});
  };
  const onAbort = (): void => {
    void Promise.all([...vmBrokers.values()].map((b) => b.dispose().catch(() => {})));
    killBooting();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    controller = await startControllerServer({
      port: 0,
      host: '127.0.0.1',
      sessionTimeoutMs: opts.sessionTimeoutMs ?? 3000,
      uncleanLeaderElection: settings.uncleanLeaderElectionEnable,
      eligibleLeaderReplicas: settings.eligibleLeaderReplicas,
      minInsyncReplicas: settings.minInsyncReplicas,
      tickMs: 100,
    });
    // Brokers not yet registered stay in the ISR (Kafka's assumption for a starting cluster);
    // they register with their first heartbeat, so a slow boot is not fenced.
    controller.controller.createTopic(spec.topic, spec.partitions, spec.replicationFactor, ids);
    const plan = await planNetwork(ids, Number(new URL(controller.url).port));
    const brokerSets = [...brokerSetFlags(settings), `broker.heartbeat.interval.ms=${opts.heartbeatIntervalMs ?? 250}`, ...(opts.extraBrokerSets ?? [])];
    const diskSpec = effectiveDiskSpec(vmOpts.disk, settings.values);
    // The scenario's disk model; for a crash-states trial a recorded one (o.disks.record), or a
    // crash state's image served as it is (o.disks.images: the broker recovers what it holds).
    const disks = await Promise.all(
      ids.map(async (id) => {
        const dir = path.join(workDir, `broker-${id}`);
        const seed = ((o.seed ?? 0) + id) >>> 0;
        const image = o.disks?.images?.[id];
        if (image !== undefined) return new FileDisk(image, vmOpts.diskMiB);
        if (o.disks?.record) {
          const r = await vmRecordingDisk({ dir, sizeMiB: vmOpts.diskMiB, spec: diskSpec, seed, log });
          recordings.set(id, r);
          return r.disk;
        }
        return createDataDisk(dir, vmOpts.diskMiB, diskSpec, seed, log);
      }),
    );
    createdDisks.push(...disks);
    // Under TCG every VM start resumes a guest booted once and saved (harness/vm/vm-template.ts):
    // the first start of a VM shape on this machine makes it, counted in the image step.
    const tTemplate = performance.now();
    // A failed save is tried once more (its reason logged) before every VM boots instead.
    const templateErrors: string[] = [];
    let template: Awaited<ReturnType<typeof prepareVmTemplate>>;
    for (;;) {
      try {
        template = await prepareVmTemplate(
          { image: staged.image, memoryMiB: vmOpts.memoryMiB, agentPort: AGENT_GUEST_PORT, disk: disks[0]!, accel: vmOpts.accelerator, bootTimeoutMs: opts.bootTimeoutMs ?? 90_000 },
          signal,
        );
        break;
      } catch (err) {
        if (signal?.aborted) throw new Error('interrupted while the VM guest template was made');
        templateErrors.push((err as Error).message);
        log(`VM template: ${(err as Error).message}; ${templateErrors.length === 1 ? 'trying once more' : 'each VM boots instead'}`);
        if (templateErrors.length === 2) break;
      }
    }
    const templateError = template === undefined && templateErrors.length ? templateErrors.join('; then: ') : undefined;
    const templateMs = performance.now() - tTemplate;
    if (template?.madeMs !== undefined) log(`VM template ${template.key} made in ${template.madeMs} ms`);
    for (const [i, id] of ids.entries()) {
      vmBrokers.set(
        id,
        new VmBroker({
          id,
          image: staged.image,
          disk: disks[i]!,
          plan,
          dir: path.join(workDir, `broker-${id}`),
          logDir: workDir,
          accel: vmOpts.accelerator,
          memoryMiB: vmOpts.memoryMiB,
          ...(opts.kvmProbeMs !== undefined ? { kvmProbeMs: opts.kvmProbeMs } : {}),
          sysctls: settings.sysctls,
          mountOptions: vmOpts.mountOptions,
          brokerSets,
          bootTimeoutMs: opts.bootTimeoutMs ?? 90_000,
          readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
          probeIntervalMs: opts.probeIntervalMs ?? 500,
          log,
        }),
      );
    }
    const tDisks = performance.now();
    // In parallel: measured 26 s for three TCG guests together against ~10.6 s for one
    // alone (three in a row would take ~32 s).
    const boots = await Promise.allSettled([...vmBrokers.values()].map((b) => b.bootAndStart()));
    const tBooted = performance.now();
    const failed = boots.flatMap((r, i) => (r.status === 'rejected' ? [`broker ${ids[i]}: ${(r.reason as Error).message}`] : []));
    if (signal?.aborted) throw new Error('interrupted while the VM cluster started');
    if (failed.length > 0) throw new Error(`VM target: ${failed.length} of ${ids.length} broker VM(s) failed to start:\n${failed.join('\n')}`);
    const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
    const cluster = new VmCluster(
      controller,
      vmBrokers,
      staged.dir,
      readyTimeoutMs,
      opts.probeBeforeFaultMs ?? 1500,
      { imageMs: 0, controllerAndDisksMs: 0, bootToServingMs: {}, leadersMs: 0, totalMs: 0 },
      undefined,
      async () => {
        for (const d of createdDisks) if (d instanceof NbdDisk) log(d.summaryLine());
        await Promise.all([...recordings.values()].map((r) => r.stop()));
        liveClusters.delete(token);
        if (liveClusters.size === 0) await ensureNoOrphans().catch(() => {});
      },
    );
    for (const [id, r] of recordings) cluster.recordings.set(id, r.recorded(vmBrokers.get(id)!.guestDataDir));
    await cluster.waitForLeaders(spec.topic, readyTimeoutMs);
    const tEnd = performance.now();
    Object.assign(cluster.timings, {
      imageMs: Math.round(tImage - t0 + templateMs),
      controllerAndDisksMs: Math.round(tDisks - tImage - templateMs),
      bootToServingMs: Object.fromEntries([...vmBrokers.values()].map((b) => [b.id, b.boots[0]?.toServingMs ?? -1])),
      leadersMs: Math.round(tEnd - tDisks),
      totalMs: Math.round(tEnd - t0),
    } satisfies VmStartTimings);
    cluster.startSteps = startSteps({ t0, tStaged, tDisks, tBooted, tEnd, templateMs, templateMadeMs: template?.madeMs, templateError }, [...vmBrokers.values()].map((b) => b.boots[0]!).filter(Boolean));
    log(`VM cluster up in ${Math.round(tEnd - t0)} ms (${cluster.accelerator}): ${JSON.stringify(cluster.timings.bootToServingMs)}`);
    return cluster;
  } catch (err) {
    await cleanup();
    // A full write log makes the guest fail in many ways: name the cause.
    const full = createdDisks.find((d): d is NbdDisk => d instanceof NbdDisk && d.server.writeLogFull !== null);
    if (full) throw new Error(`${full.server.writeLogFull!.message} (the cluster failed to start: ${(err as Error).message.split('\n')[0]})`);
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
