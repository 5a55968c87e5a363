// The VM target: each broker in its own QEMU VM with its own raw ext4 data disk, the
// controller on the host (it survives the cuts, like Kafka's separate controller quorum).
// Power cut = SIGKILL of a broker's QEMU (its page cache and uncommitted ext4 transaction die);
// restart = a new VM on the same disk. Networking stays on the host's loopback (vm-network.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { startControllerServer, type ControllerServer } from '../../engine/server/controller-server.ts';
import { request } from '../../engine/server/http-client.ts';
import type { ProbeSeries } from '../probes/index.ts';
import type { VmOptions as ScenarioVmOptions } from '../scenario/types.ts';
import { buildVmImage, ensureNoOrphans, findQemusMatching, type Accel, type Vm, type VmImage } from '../vm/index.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { isAlive } from '../vm/process-registry.ts';
import type { BrokerRecovery, ClusterStartOptions, ClusterStartSteps, CutInfo, FaultableCluster, Target, TargetBroker } from './types.ts';
import { brokerSetFlags } from './types.ts';
import { capabilitiesOf } from './registry.ts';
import { VmBroker, type BootRecord, type BrokerHealth, type GuestStateAtFault } from './vm-broker.ts';
import { planNetwork } from './vm-network.ts';
import { NbdDisk } from '../disk/nbd-disk.ts';
import { diskModelId, effectiveDiskSpec } from '../disk/disk-spec.ts';
import { createDataDisk } from '../disk/nbd-disk.ts';
export { diskVariesByCell } from '../disk/disk-spec.ts';
import type { DataDisk } from '../vm/disk.ts';

export interface VmTargetOptions {
  /** The scenario's `vm:` block (accelerator, memoryMiB, diskMiB, mountOptions, disk). */
  vm?: Partial<ScenarioVmOptions>;
  /** Some cell sets vm.disk.* in settings:/matrix: (the run has no single disk model). */
  diskVariesByCell?: boolean;
  /** A built image; default: buildVmImage({cliEntry: GUEST_CLI_ENTRY}) once per target (cached on disk by content hash). */
  image?: VmImage;
  /** Controller: a broker silent this long is fenced. Default 3000 (TCG stalls heartbeats). */
  sessionTimeoutMs?: number;
  /** Broker heartbeat period (broker.heartbeat.interval.ms). Default 250; its HTTP timeout is max(1 s, 5x this). */
  heartbeatIntervalMs?: number;
  /** Guest probe period. Default 500 (each probe costs the guest an HTTP round trip under TCG). */
  probeIntervalMs?: number;
  /** QEMU spawn to agent answering, per VM. Default 90 s. */
  bootTimeoutMs?: number;
  /** Broker exec to serving, per broker. Default 60 s. */
  readyTimeoutMs?: number;
  /** Under accelerator auto: silence that counts as a hung KVM guest (default: the launcher's 5 s). */
  kvmProbeMs?: number;
  /**
   * Before a fault, wait at most this long for a fresh guest reading (dirty pages, broker
   * liveness); 0 = take the last polled one and cut at once. Default 1500 (typically 10-30 ms).
   */
  probeBeforeFaultMs?: number;
  /** Extra broker `--set k=v` pairs after the cell's settings. */
  extraBrokerSets?: string[];
  /** Makes each broker's data disk (default: a fresh ext4 file disk, createFileDisk). */
  dataDisk?: (brokerId: number, file: string, sizeMiB: number) => Promise<DataDisk>;
  log?: (line: string) => void;
}

/**
 * What the guest image bundles as its CLI: the broker command alone (see vm-guest-cli.ts).
 * Found from the repository root so it resolves from the sources and from dist/durolab.mjs alike.
 */
export const GUEST_CLI_ENTRY = path.join(repoRoot(), 'harness', 'targets', 'vm-guest-cli.ts');

const DEFAULT_VM: ScenarioVmOptions = { accelerator: 'auto', memoryMiB: 1024, diskMiB: 2048, mountOptions: '' };

/** Figures of one start(), for the report and for tuning timeouts. */
export interface VmStartTimings {
  imageMs: number;
  controllerAndDisksMs: number;
  /** Per broker: Vm.start call to its broker serving. */
  bootToServingMs: Record<number, number>;
  /** From the first boot to every partition having a serving leader. */
  leadersMs: number;
  totalMs: number;
}

/** Contiguous stretches of start() for a trial's step timing (harness/results/trial-steps.ts). */
function startSteps(t: { t0: number; tStaged: number; tDisks: number; tBooted: number; tEnd: number }, boots: BootRecord[]): ClusterStartSteps {
  // The VMs boot in parallel: the slowest one's boot (spawn to agent, and what precedes the
  // spawn) is the boot step, the rest of that stretch (guest setup, broker start) broker start.
  const slowest = boots.reduce<BootRecord | undefined>((a, b) => ((b.toServingMs ?? 0) > (a?.toServingMs ?? -1) ? b : a), undefined);
  const bootMs = slowest?.toServingMs !== undefined ? slowest.toServingMs - (slowest.setupMs ?? 0) - (slowest.brokerStartMs ?? 0) : t.tBooted - t.tDisks;
  return {
    steps: {
      image: t.tStaged - t.t0,
      setup: t.tDisks - t.tStaged,
      boot: Math.min(bootMs, t.tBooted - t.tDisks),
      brokerStart: Math.max(0, t.tBooted - t.tDisks - bootMs),
      leaders: t.tEnd - t.tBooted,
    },
    ...(slowest?.spawnToInitMs !== undefined ? { detail: { spawnToInitMs: slowest.spawnToInitMs } } : {}),
  };
}

export interface VmCutInfo extends CutInfo {
  guestDirtyBeforeCut: Record<number, { nrDirty: number; nrWriteback: number }>;
  liveAtCut: Record<number, boolean>;
  /** Per broker: the guest reading the figures come from (fresh = taken right before the cut). */
  guestState: Record<number, GuestStateAtFault | null>;
  /** Host ms from SIGKILL to QEMU's exit (power cut only). */
  killToExitMs?: Record<number, number>;
  /** Anything that makes this cut prove less than it seems (e.g. the guest was already down). */
  notes: string[];
}

export interface VmTargetBroker extends TargetBroker {
  /** Host path of the raw ext4 data disk. */
  diskImage: string;
  /** Where the broker keeps its data inside the guest. */
  guestDataDir: string;
  /** The URL other brokers use (through their guest forwards). */
  advertisedUrl: string;
  /** Guest pid of the broker process, while its VM runs. */
  guestPid: number | null;
  boots: BootRecord[];
}

class VmCluster implements FaultableCluster {
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly controller: ControllerServer,
    private readonly vmBrokers: Map<number, VmBroker>,
    private readonly stagedImageDir: string | null,
    private readonly readyTimeoutMs: number,
    private readonly probeBeforeFaultMs: number,
    readonly timings: VmStartTimings,
    public startSteps: ClusterStartSteps | undefined,
    private readonly onStop: () => Promise<void>,
  ) {}

  get controllerUrl(): string {
    return this.controller.url;
  }

  get accelerator(): Accel | undefined {
    return [...this.vmBrokers.values()][0]?.accel;
  }

  get brokers(): VmTargetBroker[] {
    return [...this.vmBrokers.values()].map((b) => ({
      id: b.id,
      url: b.addr.hostUrl,
      // The host directory holding the disk image: removing it removes the broker's data and
      // keeps its logs (serial logs sit beside it, as broker-<id>[-bootN].serial.log).
      dataDir: b.hostDir,
      logPath: b.logPath,
      pid: b.qemuPid,
      diskImage: b.diskImage,
      guestDataDir: b.guestDataDir,
      advertisedUrl: b.addr.guestUrl,
      guestPid: b.vmRunning ? b.guestPid : null,
      boots: [...b.boots],
    }));
  }

  private broker(id: number): VmBroker {
    const b = this.vmBrokers.get(id);
    if (!b) throw new Error(`VM target: no broker ${id} (brokers: ${[...this.vmBrokers.keys()].join(', ')})`);
    return b;
  }

  /** The broker's current VM (guest agent access: exec, probe, files), or null while it is cut. */
  vmOf(brokerId: number): Vm | null {
    const b = this.broker(brokerId);
    return b.vmRunning ? b.vm : null;
  }

  urlOf(brokerId: number): string {
    return this.broker(brokerId).addr.hostUrl;
  }

  leaderId(topic: string, partition: number): number | null {
    const a = this.controller.controller.assignment(topic, partition);
    return a && a.leader >= 0 ? a.leader : null;
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    await this.waitForLeaders(topic, this.readyTimeoutMs);
    const byId = new Map(this.brokers.map((b) => [b.id, b]));
    const out = new Map<number, TargetBroker>();
    for (const p of this.controller.controller.state().partitions) {
      if (p.topic !== topic) continue;
      const b = byId.get(p.leader);
      if (!b) throw new Error(`topic ${topic} partition ${p.partition} has no leader`);
      out.set(p.partition, b);
    }
    if (out.size === 0) throw new Error(`topic ${topic} has no partitions on this cluster`);
    return out;
  }

  async metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>> {
    const live = [];
    for (const b of this.vmBrokers.values()) if (await b.brokerRunning()) live.push(b);
    return Promise.all(
      live.map(async (b) => {
        const url = `${b.addr.hostUrl}/v1/metrics`;
        const a = await request(url, { timeoutMs: 10_000 });
        if (a.status !== 200) throw new Error(`GET ${url} (broker ${b.id}) answered ${a.status}: ${a.body.toString('utf8').slice(0, 200)}`);
        return { brokerId: b.id, metrics: JSON.parse(a.body.toString('utf8')) as unknown };
      }),
    );
  }

  /** Every partition of the topic has a leader whose broker serves it at the controller's current epoch. */
  async waitForLeaders(topic: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let missing = '';
    for (;;) {
      missing = await this.missingLeaders(topic);
      if (missing === '') return;
      if (Date.now() > deadline) throw new Error(`VM target: topic ${topic}: partitions without a serving leader after ${timeoutMs} ms: ${missing}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Waits until every partition's leader has its high watermark at its log end (every ISR
   * member fetched everything). A newly elected leader keeps the HW it learnt as a follower
   * until the other ISR members fetch from it, so a consumer read right after an election can
   * stop short of records that are safely replicated: call this, with the load stopped,
   * before the checker reads. Returns per partition the leader's {hw, leo} when done.
   */
  async waitForHighWatermarks(topic: string, timeoutMs: number): Promise<Map<number, { leader: number; hw: number; leo: number }>> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      const out = new Map<number, { leader: number; hw: number; leo: number }>();
      const behind: string[] = [];
      try {
        await this.waitForLeaders(topic, Math.max(1, deadline - Date.now()));
        for (const [partition, b] of await this.leaders(topic)) {
          const a = await request(`${b.url}/v1/metrics`, { timeoutMs: 3000 });
          const m = JSON.parse(a.body.toString('utf8')) as { partitions: Array<{ topic: string; partition: number; hw: number; leo: number }> };
          const pm = m.partitions.find((x) => x.topic === topic && x.partition === partition);
          if (!pm) behind.push(`${topic}-${partition}: no metrics from leader ${b.id}`);
          else if (pm.hw < pm.leo) behind.push(`${topic}-${partition}: leader ${b.id} HW ${pm.hw} < LEO ${pm.leo}`);
          else out.set(partition, { leader: b.id, hw: pm.hw, leo: pm.leo });
        }
        if (behind.length === 0) return out;
        last = behind.join(', ');
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`VM target: topic ${topic}: high watermarks not at the log end after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async missingLeaders(topic: string): Promise<string> {
    const parts = this.controller.controller.state().partitions.filter((p) => p.topic === topic);
    if (parts.length === 0) return `no partitions of ${topic} on the controller`;
    const missing: string[] = [];
    const byLeader = new Map<number, typeof parts>();
    for (const p of parts) {
      if (p.leader < 0) missing.push(`${topic}-${p.partition} (offline)`);
      else byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p]);
    }
    for (const [id, ps] of byLeader) {
      const b = this.vmBrokers.get(id);
      if (!b?.vmRunning) {
        missing.push(...ps.map((p) => `${topic}-${p.partition} (leader ${id}: VM not running)`));
        continue;
      }
      try {
        const a = await request(`${b.addr.hostUrl}/v1/metrics`, { timeoutMs: 3000 });
        const m = JSON.parse(a.body.toString('utf8')) as { partitions: Array<{ topic: string; partition: number; role: string; leaderEpoch: number }> };
        for (const p of ps) {
          const pm = m.partitions.find((x) => x.topic === topic && x.partition === p.partition);
          if (!pm || pm.role !== 'leader' || pm.leaderEpoch !== p.leaderEpoch) missing.push(`${topic}-${p.partition} (leader ${id} not yet leading epoch ${p.leaderEpoch})`);
        }
      } catch (err) {
        missing.push(...ps.map((p) => `${topic}-${p.partition} (leader ${id}: ${(err as Error).message})`));
      }
    }
    return missing.join(', ');
  }

  private faultTargets(ids: number[], what: string): VmBroker[] {
    if (ids.length === 0) throw new Error(`VM target: ${what}: no broker ids given`);
    if (new Set(ids).size !== ids.length) throw new Error(`VM target: ${what}: broker ids repeat: ${ids.join(', ')}`);
    return ids.map((id) => {
      const b = this.broker(id);
      if (!b.vmRunning) throw new Error(`VM target: ${what}: broker ${id}'s VM is not running (cut earlier and not restarted?)`);
      return b;
    });
  }

  async powerCut(brokerIds: number[]): Promise<VmCutInfo> {
    const targets = this.faultTargets(brokerIds, 'power cut');
    this.checkDisks();
    // Readings first, in parallel, then every SIGKILL in the same tick.
    const states = await Promise.all(targets.map((b) => b.stateBeforeFault(this.probeBeforeFaultMs)));
    const cuts = await Promise.all(targets.map((b) => b.powerCut()));
    const info = this.cutInfo(targets, states, cuts.map((c) => ({ atMs: c.cutAtMs, killToExitMs: c.killToExitMs, exitedSeen: c.brokerExitedSeen, error: c.error })));
    cuts.forEach((c, i) => {
      if (c.diskAtCut !== undefined) (info.diskAtCut ??= {})[targets[i]!.id] = c.diskAtCut;
    });
    return info;
  }

  /** The NBD disks of the brokers (empty on the file disk). */
  nbdDisks(): Map<number, NbdDisk> {
    return new Map([...this.vmBrokers.values()].flatMap((b) => (b.disk instanceof NbdDisk ? [[b.id, b.disk] as [number, NbdDisk]] : [])));
  }

  /** A full write log fails the trial with its message (the guest got ENOSPC; what the log holds is intact). */
  checkDisks(): void {
    for (const [id, d] of this.nbdDisks()) if (d.server.writeLogFull) throw new Error(`broker ${id}: ${d.server.writeLogFull.message}`);
  }

  async processKill(brokerIds: number[]): Promise<VmCutInfo> {
    const targets = this.faultTargets(brokerIds, 'process kill');
    const states = await Promise.all(targets.map((b) => b.stateBeforeFault(this.probeBeforeFaultMs)));
    const kills = await Promise.all(targets.map((b) => b.killBroker()));
    return this.cutInfo(targets, states, kills.map((k) => ({ atMs: k.killAtMs, exitedSeen: !k.wasRunning })));
  }

  private cutInfo(
    targets: VmBroker[],
    states: Array<GuestStateAtFault | undefined>,
    ends: Array<{ atMs: number; killToExitMs?: number; exitedSeen: boolean; error?: string | undefined }>,
  ): VmCutInfo {
    const info: VmCutInfo = {
      brokerIds: targets.map((b) => b.id),
      atMs: Math.min(...ends.map((e) => e.atMs)),
      guestDirtyBeforeCut: {},
      liveAtCut: {},
      guestState: {},
      notes: [],
    };
    targets.forEach((b, i) => {
      const s = states[i];
      const e = ends[i]!;
      info.guestState[b.id] = s ?? null;
      if (s) info.guestDirtyBeforeCut[b.id] = { nrDirty: s.nrDirty, nrWriteback: s.nrWriteback };
      const live = (s?.brokerRunning ?? false) && !e.exitedSeen && !e.error;
      info.liveAtCut[b.id] = live;
      if (e.killToExitMs !== undefined) (info.killToExitMs ??= {})[b.id] = e.killToExitMs;
      if (e.error) info.notes.push(`broker ${b.id}: ${e.error}`);
      else if (!live) info.notes.push(`broker ${b.id}: the broker process was not running at the fault: what survived proves nothing`);
      if (s && !s.fresh) info.notes.push(`broker ${b.id}: no fresh guest reading before the fault; figures from ${Math.round(e.atMs - s.tMs)} ms earlier`);
    });
    return info;
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    if (brokerIds.length === 0) throw new Error('VM target: restart: no broker ids given');
    this.checkDisks();
    return Promise.all(
      brokerIds.map(async (id) => {
        const b = this.broker(id);
        const t0 = performance.now();
        let health: BrokerHealth;
        let boot: BrokerRecovery['boot'];
        if (!b.vmRunning) {
          // After a power cut: a new VM on the same disk; the guest's mount replays the journal.
          const r = await b.bootAndStart();
          health = await b.waitServing(this.readyTimeoutMs);
          boot = {
            bootMs: (r.toServingMs ?? 0) - (r.setupMs ?? 0) - (r.brokerStartMs ?? 0),
            ...(r.spawnToInitMs !== undefined ? { spawnToInitMs: r.spawnToInitMs } : {}),
            ...(r.setupMs !== undefined ? { setupMs: r.setupMs } : {}),
            ...(r.brokerStartMs !== undefined ? { brokerStartMs: r.brokerStartMs } : {}),
          };
        } else if (!(await b.brokerRunning())) {
          b.mark('broker-restart');
          health = await b.startBroker();
        } else {
          throw new Error(`VM target: restart: broker ${id} is running (power-cut or kill it first)`);
        }
        return {
          brokerId: id,
          restartMs: Math.round(performance.now() - t0),
          ...(boot ? { boot } : {}),
          partitions: health.recovery.map((r) => ({
            topic: r.topic,
            partition: r.partition,
            cleanShutdown: r.cleanShutdown,
            bytesTruncated: r.bytesTruncated,
            batchesTruncated: r.batchesTruncated,
            durationMs: r.durationMs,
          })),
        };
      }),
    );
  }

  /** The guest probe series of the broker's first boot (the one the load ran against), marks included. */
  guestProbes(brokerId: number): ProbeSeries {
    const all = this.broker(brokerId).probeSeries();
    if (all.length === 0) throw new Error(`VM target: broker ${brokerId} has no probe series (it never booted)`);
    return all[0]!;
  }

  /** One probe series per boot of the broker's VM, oldest first (a reboot resets the guest's counters). */
  guestProbeBoots(brokerId: number): ProbeSeries[] {
    return this.broker(brokerId).probeSeries();
  }

  /**
   * The controller's brokers, partitions and events. A 'fenced' event for a broker no fault
   * touched means TCG stalled its heartbeats past the session timeout: the trial saw a
   * spurious failover.
   */
  controllerState(): ReturnType<ControllerServer['controller']['state']> {
    return this.controller.controller.state();
  }

  /** GET /v1/health of a broker (recovery reports, heartbeat). */
  async health(brokerId: number): Promise<BrokerHealth> {
    const url = `${this.urlOf(brokerId)}/v1/health`;
    const a = await request(url, { timeoutMs: 10_000 });
    if (a.status !== 200) throw new Error(`GET ${url} answered ${a.status}`);
    return JSON.parse(a.body.toString('utf8')) as BrokerHealth;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const pids = [...this.vmBrokers.values()].flatMap((b) => b.boots.map((x) => x.qemuPid));
      const full = [...this.nbdDisks()].find(([, d]) => d.server.writeLogFull);
      await Promise.all([...this.vmBrokers.values()].map((b) => b.dispose().catch(() => {})));
      await this.controller.close();
      if (this.stagedImageDir) await fs.rm(this.stagedImageDir, { recursive: true, force: true });
      await this.onStop();
      const left = pids.filter(isAlive);
      if (left.length > 0) throw new Error(`VM target: QEMU pids ${left.join(', ')} still alive after stop`);
      if (full) throw new Error(`broker ${full[0]}: ${full[1].server.writeLogFull!.message}`);
    })();
    return this.stopping;
  }
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

export interface VmTarget extends Target {
  readonly kind: 'vm';
  /** The disk model id of the run (harness/results/disk-models.ts), 'per-cell' when cells set vm.disk.*. */
  readonly diskModel: string;
  start(opts: ClusterStartOptions): Promise<VmCluster>;
}

export function vmTarget(opts: VmTargetOptions = {}): VmTarget {
  const vmOpts: ScenarioVmOptions = { ...DEFAULT_VM, ...opts.vm };
  const log = opts.log ?? (() => {});
  let imagePromise: Promise<VmImage> | null = opts.image ? Promise.resolve(opts.image) : null;
  return {
    kind: 'vm',
    diskModel: opts.diskVariesByCell ? 'per-cell' : diskModelId(effectiveDiskSpec(vmOpts.disk, {})),
    capabilities: capabilitiesOf('vm'),
    async start(o: ClusterStartOptions): Promise<VmCluster> {
      const { cluster: spec, settings, signal } = o;
      if (signal?.aborted) throw new Error('interrupted before the VM cluster started');
      if (!Number.isInteger(spec.brokers) || spec.brokers < 1) throw new Error(`VM target: cluster.brokers must be an integer >= 1, got ${spec.brokers}`);
      const t0 = performance.now();
      imagePromise ??= buildVmImage({ log, cliEntry: GUEST_CLI_ENTRY });
      const builtImage = await imagePromise.catch((err: unknown) => {
        imagePromise = null;
        throw err;
      });
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
          tickMs: 100,
        });
        // Brokers not yet registered stay in the ISR (Kafka's assumption for a starting cluster);
        // they register with their first heartbeat, so a slow boot is not fenced.
        controller.controller.createTopic(spec.topic, spec.partitions, spec.replicationFactor, ids);
        const plan = await planNetwork(ids, Number(new URL(controller.url).port));
        const brokerSets = [...brokerSetFlags(settings), `broker.heartbeat.interval.ms=${opts.heartbeatIntervalMs ?? 250}`, ...(opts.extraBrokerSets ?? [])];
        const diskSpec = effectiveDiskSpec(vmOpts.disk, settings.values);
        // A crash-states trial brings its own recording disk (opts.dataDisk); otherwise the scenario's disk model.
        const disks = await Promise.all(
          ids.map((id) =>
            opts.dataDisk
              ? opts.dataDisk(id, path.join(workDir, `broker-${id}`, 'disk.img'), vmOpts.diskMiB)
              : createDataDisk(path.join(workDir, `broker-${id}`), vmOpts.diskMiB, diskSpec, ((o.seed ?? 0) + id) >>> 0, log),
          ),
        );
        createdDisks.push(...disks);
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
            liveClusters.delete(token);
            if (liveClusters.size === 0) await ensureNoOrphans().catch(() => {});
          },
        );
        await cluster.waitForLeaders(spec.topic, readyTimeoutMs);
        const tEnd = performance.now();
        Object.assign(cluster.timings, {
          imageMs: Math.round(tImage - t0),
          controllerAndDisksMs: Math.round(tDisks - tImage),
          bootToServingMs: Object.fromEntries([...vmBrokers.values()].map((b) => [b.id, b.boots[0]?.toServingMs ?? -1])),
          leadersMs: Math.round(tEnd - tDisks),
          totalMs: Math.round(tEnd - t0),
        } satisfies VmStartTimings);
        cluster.startSteps = startSteps({ t0, tStaged, tDisks, tBooted, tEnd }, [...vmBrokers.values()].map((b) => b.boots[0]!).filter(Boolean));
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
    },
  };
}

export type { VmCluster };

