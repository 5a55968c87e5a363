// A running cluster of the VM target (vm-target.ts): the host-side controller and one VmBroker
// (its own QEMU VM and data disk) per broker. Its fault hooks: power cut (SIGKILL of a broker's
// QEMU), process kill (the broker inside its guest), restart (a new VM on the same disk, or a
// new broker process in the running guest). Started by vm-cluster-start.ts.
import fs from 'node:fs/promises';
import type { ControllerServer } from '../../engine/server/controller-server.ts';
import { request } from '../../engine/server/http-client.ts';
import type { ProbeSeries } from '../probes/index.ts';
import type { Accel, Vm } from '../vm/index.ts';
import { isAlive } from '../vm/process-registry.ts';
import type { BrokerRecovery, ClusterStartSteps, CutInfo, FaultableCluster, TargetBroker } from './types.ts';
import type { BootRecord, BrokerHealth, GuestStateAtFault, VmBroker } from './vm-broker.ts';
import { NbdDisk } from '../disk/nbd-disk.ts';
import type { StorageFailure } from '../results/types.ts';
import { storageFailuresFromLogs } from './broker-log-failures.ts';
import { durolabStorageFailureLines } from './durolab-log-lines.ts';
import type { RecordedDisk } from './host-fault-disks.ts';

/** Figures of one start(), for the report and for tuning timeouts. */
export interface VmStartTimings {
  /** Image build or lookup, plus saving the VM guest template when this start made it. */
  imageMs: number;
  controllerAndDisksMs: number;
  /** Per broker: Vm.start call to its broker serving. */
  bootToServingMs: Record<number, number>;
  /** From the first boot to every partition having a serving leader. */
  leadersMs: number;
  totalMs: number;
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

/** How long a wait that saw every leader serve stands for leaders() (with the controller's leaders unchanged). */
const SERVING_SEEN_FOR_MS = 2000;

export class VmCluster implements FaultableCluster {
  private stopping: Promise<void> | null = null;
  /** Started with disks.record: each broker's recorded disk (vm-recorded-disk.ts). */
  readonly recordings = new Map<number, RecordedDisk>();
  /** The last time waitForLeaders saw every partition of `topic` led and served, and the leaders it saw. */
  private servingSeen: { topic: string; atMs: number; leaders: string } | null = null;

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

  recordedDisk(brokerId: number): RecordedDisk | null {
    return this.recordings.get(brokerId) ?? null;
  }

  urlOf(brokerId: number): string {
    return this.broker(brokerId).addr.hostUrl;
  }

  leaderId(topic: string, partition: number): number | null {
    const a = this.controller.controller.assignment(topic, partition);
    return a && a.leader >= 0 ? a.leader : null;
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    // Asked right after start() (or a wait) saw every leader serve, with the controller's
    // leaders and epochs unchanged since: that answer stands (one request to a TCG guest costs
    // ~130 ms).
    const seen = this.servingSeen;
    if (!(seen && seen.topic === topic && Date.now() - seen.atMs < SERVING_SEEN_FOR_MS && seen.leaders === this.leaderEpochs(topic))) {
      await this.waitForLeaders(topic, this.readyTimeoutMs);
    }
    return this.leaderMap(topic);
  }

  /** Every partition's leader as the controller has it now (no wait, no request). */
  private leaderMap(topic: string): Map<number, TargetBroker> {
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
      const leaders = this.leaderEpochs(topic);
      missing = await this.missingLeaders(topic);
      if (missing === '') {
        this.servingSeen = { topic, atMs: Date.now(), leaders };
        return;
      }
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
        for (const [partition, b] of this.leaderMap(topic)) {
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

  /** The controller's leader and leader epoch of every partition of the topic, and whether the leader's VM runs, as one string to compare. */
  private leaderEpochs(topic: string): string {
    return this.controller.controller
      .state()
      .partitions.filter((p) => p.topic === topic)
      .map((p) => `${p.partition}:${p.leader}@${p.leaderEpoch}${this.vmBrokers.get(p.leader)?.vmRunning ? '' : ' (VM down)'}`)
      .join(',');
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
    return { ...info, storageFailures: await this.storageFailures() };
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
    return { ...this.cutInfo(targets, states, kills.map((k) => ({ atMs: k.killAtMs, exitedSeen: !k.wasRunning }))), storageFailures: await this.storageFailures() };
  }

  /** The guests' durolab brokers log to host files: their storage error lines, as on the process target. */
  storageFailures(): Promise<StorageFailure[]> {
    return storageFailuresFromLogs(this.brokers, durolabStorageFailureLines);
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
            ...(r.resumed ? { resumed: true } : {}),
            ...(r.resumeFallback ? { resumeFallback: r.resumeFallback } : {}),
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
