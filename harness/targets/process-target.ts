// The process target: brokers as local child processes on loopback, the controller in this
// process (engine/server/cluster.ts). With `cluster.network: namespaces` each broker runs in
// its own lab node (a network namespace, harness/net/lab-network.ts) with three listeners at its
// node's address: the HTTP API and the Kafka listener for clients, a replication listener that
// the other brokers fetch from. The controller stays in the harness process (the runner reads
// its state directly, as on the vm target), listening on the lab bridge's address in the root
// namespace on a port of its own: a broker's controller link is cut alone by a partition
// between its node and 'harness' on that port, its clients' links by one on the client ports. Data directories live under the cell's work dir, so the
// probes watch the device that really holds them. Its one fault is a process kill: SIGKILL of
// the broker child, after which the host's page cache still holds everything it wrote (a
// crash, not a power failure). On the lab's fault disk (host-fault-disks.ts: each broker's
// data dir on its own NBD disk mounted on the host) it cuts power too: the broker and its
// disk's page cache die together, and the disk keeps what its model says.
import type { ReadErrorRange } from '../disk/disk-faults.ts';
import { defaultBrokerCommand, startCluster, type Cluster, type ClusterOptions } from '../../engine/server/cluster.ts';
import { findExecutable } from '../vm/prerequisites.ts';
import type { BrokerRecovery, ClusterLabNetwork, ClusterStartOptions, ClusterStartSteps, CutInfo, FaultableCluster, Target, TargetBroker } from './types.ts';
import type { LabNetwork } from '../net/lab-network.ts';
import { LAB_PORTS, labNetworkFor, listenablePort } from './lab-links.ts';
import { brokerSetFlags } from './types.ts';
import { capabilitiesOf } from './registry.ts';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { BrokerDiskEvidence } from '../disk/disk-evidence.ts';
import type { StorageFailure } from '../results/types.ts';
import { storageFailuresFromLogs } from './broker-log-failures.ts';
import { durolabStorageFailureLines } from './durolab-log-lines.ts';
import { HostFaultDisks, cellFaultDisk, runDiskModel, type HostDiskVm, type RecordedDisk } from './host-fault-disks.ts';

interface HealthAnswer {
  brokerId?: number;
  recovery?: Array<{ topic: string; partition: number; cleanShutdown?: boolean; bytesTruncated?: number; batchesTruncated?: number; durationMs?: number }>;
}

/** GET /v1/health of a broker: its partitions' recovery reports from the last start. */
export async function readRecovery(url: string, brokerId: number, restartMs: number): Promise<BrokerRecovery> {
  const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`GET ${url}/v1/health (broker ${brokerId}) answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const h = (await res.json()) as HealthAnswer;
  if (!Array.isArray(h.recovery)) throw new Error(`GET ${url}/v1/health (broker ${brokerId}): expected a recovery array in the answer`);
  return {
    brokerId,
    restartMs,
    // A figure the answer leaves out was not reported: absent, never 0.
    partitions: h.recovery.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      cleanShutdown: r.cleanShutdown === true,
      ...(typeof r.bytesTruncated === 'number' ? { bytesTruncated: r.bytesTruncated } : {}),
      ...(typeof r.batchesTruncated === 'number' ? { batchesTruncated: r.batchesTruncated } : {}),
      ...(typeof r.durationMs === 'number' ? { durationMs: r.durationMs } : {}),
    })),
  };
}

class ProcessCluster implements FaultableCluster {
  startSteps: ClusterStartSteps | undefined;

  constructor(
    private readonly cluster: Cluster,
    /** Each broker's data dir on the lab's fault disk, or null (plain directories: no power cut). */
    private readonly disks: HostFaultDisks | null = null,
    /** The lab network its brokers run in (cluster.network: namespaces), or null (loopback). */
    private readonly lab: ClusterLabNetwork | null = null,
  ) {}

  labNetwork(): ClusterLabNetwork | null {
    return this.lab;
  }

  recordedDisk(brokerId: number): RecordedDisk | null {
    return this.disks?.recordedDisk(brokerId) ?? null;
  }

  get brokers(): TargetBroker[] {
    return this.cluster.brokers.map((b) => ({ id: b.id, url: b.url, ...(b.kafka ? { kafka: b.kafka } : {}), dataDir: b.dataDir, logPath: b.logPath, pid: b.pid }));
  }

  storageFailures(): Promise<StorageFailure[]> {
    return storageFailuresFromLogs(this.brokers, durolabStorageFailureLines);
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    await this.cluster.waitForLeaders();
    const out = new Map<number, TargetBroker>();
    const byId = new Map(this.brokers.map((b) => [b.id, b]));
    for (const p of this.cluster.controller.state().partitions) {
      if (p.topic !== topic) continue;
      const leader = this.cluster.leaderOf(topic, p.partition);
      const b = leader ? byId.get(leader.id) : undefined;
      if (!b) throw new Error(`topic ${topic} partition ${p.partition} has no leader`);
      out.set(p.partition, b);
    }
    if (out.size === 0) throw new Error(`topic ${topic} has no partitions on this cluster`);
    return out;
  }

  async metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>> {
    const live = this.cluster.brokers.filter((b) => b.running);
    return Promise.all(
      live.map(async (b) => {
        const res = await fetch(`${b.url}/v1/metrics`);
        if (!res.ok) throw new Error(`GET ${b.url}/v1/metrics answered ${res.status}`);
        return { brokerId: b.id, metrics: (await res.json()) as unknown };
      }),
    );
  }

  leaderId(topic: string, partition: number): number | null {
    return this.cluster.leaderOf(topic, partition)?.id ?? null;
  }

  async powerCut(brokerIds: number[]): Promise<CutInfo> {
    const disks = this.disks;
    if (!disks) {
      throw new Error(
        `power-cut of broker(s) ${brokerIds.join(', ')}: these brokers run on plain directories (the host's page cache would survive); ` +
          "the scenario's faults put them on the fault disk at start",
      );
    }
    for (const id of brokerIds) this.cluster.broker(id); // unknown id: throw before cutting anything
    const liveAtCut = Object.fromEntries(brokerIds.map((id) => [id, this.cluster.broker(id).running]));
    const atMs = Date.now();
    const diskAtCut = await disks.cut(brokerIds, {
      freeze: () => brokerIds.forEach((id) => void this.cluster.killBroker(id, 'SIGSTOP')),
      kill: async () => void (await Promise.all(brokerIds.map((id) => this.cluster.killBroker(id, 'SIGKILL')))),
    });
    return { brokerIds, atMs, liveAtCut, diskAtCut, storageFailures: await this.storageFailures() };
  }

  processKill(brokerIds: number[]): Promise<CutInfo> {
    return this.signalAll(brokerIds, 'SIGKILL');
  }

  pause(brokerIds: number[]): Promise<CutInfo> {
    return this.signalAll(brokerIds, 'SIGSTOP');
  }

  /** The broker's own shutdown (SIGTERM: its logs closed, checkpoints and the clean-shutdown marker written). */
  stopCleanly(brokerIds: number[]): Promise<CutInfo> {
    return this.signalAll(brokerIds, 'SIGTERM');
  }

  private async signalAll(brokerIds: number[], signal: 'SIGKILL' | 'SIGSTOP' | 'SIGTERM'): Promise<CutInfo> {
    for (const id of brokerIds) this.cluster.broker(id); // unknown id: throw before signalling anything
    const liveAtCut = Object.fromEntries(brokerIds.map((id) => [id, this.cluster.broker(id).running]));
    const atMs = Date.now();
    // All signals go out before any exit is awaited, so "all" is one correlated crash (or pause).
    await Promise.all(brokerIds.map((id) => this.cluster.killBroker(id, signal)));
    // A kill's broker logs may name a storage failure from before it; a pause's broker is still writing its log.
    return { brokerIds, atMs, liveAtCut, ...(signal === 'SIGKILL' ? { storageFailures: await this.storageFailures() } : {}) };
  }

  async resume(brokerIds: number[]): Promise<void> {
    // killBroker leaves a broker that is not running alone (a killed one; a restarted one is not paused).
    await Promise.all(brokerIds.filter((id) => this.cluster.broker(id).paused).map((id) => this.cluster.killBroker(id, 'SIGCONT')));
  }

  setReadErrors(brokerId: number, ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): Promise<ReadErrorRange[]> {
    if (!this.disks) return Promise.reject(new Error(`read errors on broker ${brokerId}: it runs on a plain directory, not on a fault disk; the scenario's faults put the brokers on the fault disk at start`));
    return this.disks.setReadErrors(brokerId, ranges);
  }

  readErrorHits(brokerId: number): Promise<ReadErrorRange[]> {
    return this.disks ? this.disks.readErrorHits(brokerId) : Promise.resolve([]);
  }

  faultDiskRoot(brokerId: number): string | null {
    this.cluster.broker(brokerId); // an unknown id throws
    return this.disks?.rootOf(brokerId) ?? null;
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    return Promise.all(
      brokerIds.map(async (id) => {
        const t0 = Date.now();
        const attach = this.disks ? await this.disks.attach(id) : null;
        // A drive that lost everything since the mount (flush ignored) lost the data dir too: the broker starts empty.
        if (this.disks) mkdirSync(this.disks.dataDirOf(id), { recursive: true });
        const tStart = Date.now();
        const b = await this.cluster.restartBroker(id);
        const r = await readRecovery(b.url, id, Date.now() - t0);
        return attach ? { ...r, boot: { bootMs: r.restartMs, setupMs: attach.exportMs + attach.mountMs, brokerStartMs: Date.now() - tStart } } : r;
      }),
    );
  }

  waitForLeaders(_topic: string, timeoutMs: number): Promise<void> {
    return this.cluster.waitForLeaders(timeoutMs);
  }

  urlOf(brokerId: number): string {
    return this.cluster.broker(brokerId).url;
  }

  keepFinalDiskImages(): void {
    this.disks?.keepFinalImages();
  }

  diskEvidence(): { brokers: BrokerDiskEvidence[]; incomplete: string[] } {
    return this.disks?.evidenceKept() ?? { brokers: [], incomplete: [] };
  }

  async stop(): Promise<void> {
    await this.cluster.stop();
    try {
      await this.disks?.close(this.cluster.brokers.every((b) => !b.running));
    } finally {
      // After the brokers: their namespaces go with it.
      await this.lab?.lab.close();
    }
  }
}

export interface ProcessTargetOptions {
  /** The scenario's vm: block (its disk, diskMiB and mountOptions shape the fault disk). */
  vm?: HostDiskVm;
  /** Every cell's brokers on the lab's fault disk (the scenario cuts power or names a disk model). */
  faultDisk?: boolean;
  /** Some cell sets vm.disk.* (the run has no single disk model). */
  diskVariesByCell?: boolean;
  log?: (line: string) => void;
  /** The lab network's lines (cluster.network: namespaces). */
  netLog?: (line: string) => void;
}

/**
 * Broker ids[i] in lab node i: its listeners at the node's address (HTTP API, Kafka, replication:
 * LAB_PORTS), spawned inside the node's namespace; the controller on the bridge's address.
 */
async function placeInLab(lab: LabNetwork, ids: number[]): Promise<{ options: Partial<ClusterOptions>; links: ClusterLabNetwork }> {
  const controllerPort = await listenablePort(lab.harnessAddress, LAB_PORTS.controller);
  const nodeOf = (id: number): number => {
    const node = ids.indexOf(id);
    if (node < 0) throw new Error(`durolab cluster: no lab node for broker ${id} (brokers ${ids.join(', ')})`);
    return node;
  };
  const ports = { client: [LAB_PORTS.http, LAB_PORTS.client], replication: [LAB_PORTS.replication], controller: [controllerPort] };
  return {
    options: {
      controllerHost: lab.harnessAddress,
      controllerPort,
      placeBroker: (id) => ({
        host: lab.nodes[nodeOf(id)]!.address,
        port: LAB_PORTS.http,
        kafkaPort: LAB_PORTS.client,
        replicationPort: LAB_PORTS.replication,
        spawn: (file, args) => lab.argvIn(nodeOf(id), file, args),
      }),
    },
    links: { lab, links: Object.fromEntries(ids.map((id, node) => [id, { node, ports }])), controller: { endpoints: ['harness'], port: controllerPort } },
  };
}

/**
 * The broker command under `setpriv --pdeathsig CONT` where setpriv is present: a broker paused
 * (fault pause: SIGSTOP) when the harness is SIGKILLed gets SIGCONT from the kernel, sees its
 * parent gone (--parent-pid) and shuts down; without it, it would stay stopped for good.
 */
function brokerCommand(): string[] {
  const setpriv = findExecutable('setpriv');
  return setpriv ? [setpriv, '--pdeathsig', 'CONT', '--', ...defaultBrokerCommand()] : defaultBrokerCommand();
}

/** The cluster's broker ids (engine/server/cluster.ts numbers them from 1). */
const brokerIds = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

export function processTarget(opts: ProcessTargetOptions = {}): Target {
  return {
    kind: 'process',
    ...(opts.faultDisk ? { diskModel: runDiskModel(opts.vm, opts.diskVariesByCell ?? false) } : {}),
    capabilities: capabilitiesOf('process'),
    async start(o: ClusterStartOptions): Promise<FaultableCluster> {
      const { cluster: spec, settings } = o;
      const ids = brokerIds(spec.brokers);
      const t0 = Date.now();
      const disks = opts.faultDisk
        ? await HostFaultDisks.create(ids, path.join(o.workDir, 'disks'), cellFaultDisk(opts.vm, settings.values), o.seed ?? 0, opts.log ?? (() => undefined), 'durolab broker', o.disks)
        : null;
      // The engine keeps a broker's data in <dir>/broker-<id>: there, a link to its disk. On fault
      // disks <dir> is workDir/cluster: workDir/broker-<id>/ holds the disk's evidence (cut.img, final.img).
      const clusterDir = disks ? path.join(o.workDir, 'cluster') : o.workDir;
      if (disks) {
        mkdirSync(clusterDir, { recursive: true });
        for (const id of ids) {
          mkdirSync(disks.dataDirOf(id), { recursive: true });
          symlinkSync(disks.dataDirOf(id), path.join(clusterDir, `broker-${id}`));
        }
      }
      const disksMs = Date.now() - t0;
      let cluster: Cluster;
      let lab: LabNetwork | null = null;
      let inLab: { options: Partial<ClusterOptions>; links: ClusterLabNetwork } | null = null;
      try {
        lab = await labNetworkFor(o, spec.brokers, 'durolab cluster', opts.netLog ?? (() => undefined));
        inLab = lab ? await placeInLab(lab, ids) : null;
        cluster = await startCluster({
          brokers: spec.brokers,
          dir: clusterDir,
          port: 0,
          firstBrokerId: ids[0]!,
          topics: [{ name: spec.topic, partitions: spec.partitions, replicationFactor: spec.replicationFactor }],
          set: brokerSetFlags(settings),
          brokerCommand: brokerCommand(),
          controller: { uncleanLeaderElection: settings.uncleanLeaderElectionEnable, eligibleLeaderReplicas: settings.eligibleLeaderReplicas, minInsyncReplicas: settings.minInsyncReplicas },
          ...inLab?.options,
        });
      } catch (err) {
        await lab?.close().catch(() => undefined);
        await disks?.close(false).catch(() => undefined);
        throw err;
      }
      const c = new ProcessCluster(cluster, disks, inLab?.links ?? null);
      // The trial's setup step: the fault disks made (mkfs, export, loop, mount); the broker processes are the broker start.
      if (disks) c.startSteps = { steps: { setup: disksMs } };
      if (o.signal?.aborted) {
        await c.stop();
        throw new Error('interrupted while starting the cluster');
      }
      return c;
    },
  };
}
