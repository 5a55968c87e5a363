// What a running cluster of host-process nodes (host-node-process.ts: targets kafka and nats)
// does the same way whatever the system: its nodes by id, the faults on them (SIGKILL, SIGSTOP
// pauses and their SIGCONT, and on the lab's fault disk power cuts, where the processes and
// their disks' page caches die together: host-fault-disks.ts), the leader poller's timer, the
// disks' evidence, and a stop of nodes, then disks, then the lab network. How leaders are
// learnt, how a node restarts, what a broker's URL is stay with each system's cluster.
import type { ReadErrorRange } from '../disk/disk-faults.ts';
import type { BrokerDiskEvidence } from '../disk/disk-evidence.ts';
import type { LabNetwork } from '../net/lab-network.ts';
import { HostFaultDisks, cellFaultDisk, runDiskModel, type HostDiskVm, type HostFaultDiskConfig, type RecordedDisk } from './host-fault-disks.ts';
import type { HostNodeProcess } from './host-node-process.ts';
import { labNetworkFor } from './lab-links.ts';
import type { ClusterLabNetwork, ClusterStartOptions, ClusterStartSteps, CutInfo } from './types.ts';

/** How a host-process cluster is started: the cell's options, and its nodes' data on the lab's fault disk or not. */
export interface HostClusterStartOptions extends ClusterStartOptions {
  log?: (line: string) => void;
  /** Put each node's data on the lab's fault disk (power cuts, disk models); absent: plain directories. */
  faultDisk?: HostFaultDiskConfig;
}

/** A host-process target's own options (targets/registry.ts passes them from the scenario). */
export interface HostTargetOptions {
  log?: (line: string) => void;
  /** The scenario's vm: block (its disk, diskMiB and mountOptions shape the fault disk). */
  vm?: HostDiskVm;
  /** Run every cell's nodes on the lab's fault disk (the scenario cuts power or names a disk model). */
  faultDisk?: boolean;
  /** Some cell sets vm.disk.* (the run has no single disk model). */
  diskVariesByCell?: boolean;
}

/** The target's diskModel field: the run's disk model when its nodes run on the fault disk, else none. */
export function hostTargetDiskModel(opts: HostTargetOptions): { diskModel?: string } {
  return opts.faultDisk ? { diskModel: runDiskModel(opts.vm, opts.diskVariesByCell ?? false) } : {};
}

/** A cell's start options with the target's log and, when its nodes run on the fault disk, the cell's disk. */
export function hostClusterStartOptions(target: HostTargetOptions, o: ClusterStartOptions): HostClusterStartOptions {
  return { ...o, ...(target.log ? { log: target.log } : {}), ...(target.faultDisk ? { faultDisk: cellFaultDisk(target.vm, o.settings.values) } : {}) };
}

/**
 * Makes what a host-process cluster of `system` (kafka, nats) runs on: each node's fault disk
 * when the options ask for one (`<system> node <id>`), then the lab network when
 * cluster.network is namespaces (`<system> cluster`), and starts the cluster on them with
 * `startOn`; a start that fails closes the network, then the disks. Answers the cluster and the
 * ms the disks took (part of the trial's setup step).
 */
export async function startOnHostResources<C>(
  system: string,
  opts: HostClusterStartOptions,
  startOn: (ids: number[], disks: HostFaultDisks | null, lab: LabNetwork | null) => Promise<C>,
): Promise<{ cluster: C; disksMs: number }> {
  const brokers = opts.cluster.brokers;
  const ids = Array.from({ length: brokers }, (_, id) => id);
  const log = opts.log ?? (() => undefined);
  const t0 = Date.now();
  const disks = opts.faultDisk ? await HostFaultDisks.create(ids, opts.workDir, opts.faultDisk, opts.seed ?? 0, log, `${system} node`, opts.disks) : null;
  const disksMs = Date.now() - t0;
  let lab: LabNetwork | null = null;
  try {
    lab = await labNetworkFor(opts, brokers, `${system} cluster`, log);
    return { cluster: await startOn(ids, disks, lab), disksMs };
  } catch (err) {
    await lab?.close().catch(() => undefined);
    await disks?.close(false).catch(() => undefined);
    throw err;
  }
}

export abstract class HostProcessCluster<Node extends HostNodeProcess> {
  startSteps: ClusterStartSteps | undefined;
  log: (line: string) => void = () => undefined;
  private poller: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    /** `kafka cluster`, `nats cluster`: names it in errors. */
    private readonly label: string,
    /** `Kafka`, `NATS`: the system as a power cut's refusal names it. */
    private readonly systemTitle: string,
    readonly nodes: Node[],
    /** Each node's data on the lab's fault disk (power cuts possible), or null (plain directories). */
    readonly disks: HostFaultDisks | null,
    /** The lab network its nodes run in (cluster.network: namespaces), or null (loopback). */
    private readonly lab: ClusterLabNetwork | null,
  ) {}

  labNetwork(): ClusterLabNetwork | null {
    return this.lab;
  }

  /** Reads the leaders into the cache leaderId() answers from. */
  abstract refresh(): Promise<unknown>;

  /** What a kill or a power cut adds to its CutInfo once the nodes are gone (the system's own storage-failure lines). */
  protected async afterKill(): Promise<Pick<CutInfo, 'storageFailures'>> {
    return {};
  }

  protected node(id: number): Node {
    const n = this.nodes.find((x) => x.node.id === id);
    if (!n) throw new Error(`${this.label}: no broker ${id} (brokers ${this.nodes.map((x) => x.node.id).join(', ')})`);
    return n;
  }

  startPolling(intervalMs = 250): void {
    this.poller = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      this.refresh()
        .catch(() => undefined) // every node down (a kill of all): the cache keeps the last view
        .finally(() => (this.polling = false));
    }, intervalMs);
    this.poller.unref();
  }

  protected stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  /** The nodes and what each was doing when `brokerIds` were hit. */
  private hit(brokerIds: number[]): { nodes: Node[]; liveAtCut: Record<number, boolean>; atMs: number } {
    const nodes = brokerIds.map((id) => this.node(id));
    const liveAtCut = Object.fromEntries(nodes.map((n) => [n.node.id, n.running]));
    return { nodes, liveAtCut, atMs: Date.now() };
  }

  async powerCut(brokerIds: number[]): Promise<CutInfo> {
    const disks = this.disks;
    if (!disks) {
      throw new Error(`power-cut of broker(s) ${brokerIds.join(', ')}: this ${this.systemTitle} cluster runs on plain directories (no fault disk); the scenario's faults decide that at start`);
    }
    const { nodes, liveAtCut, atMs } = this.hit(brokerIds);
    const diskAtCut = await disks.cut(brokerIds, {
      freeze: () => nodes.forEach((n) => n.freeze()),
      kill: async () => void (await Promise.all(nodes.map((n) => n.kill()))),
    });
    return { brokerIds, atMs, liveAtCut, diskAtCut, ...(await this.afterKill()) };
  }

  async processKill(brokerIds: number[]): Promise<CutInfo> {
    const { nodes, liveAtCut, atMs } = this.hit(brokerIds);
    await Promise.all(nodes.map((n) => n.kill()));
    return { brokerIds, atMs, liveAtCut, ...(await this.afterKill()) };
  }

  /** A node's own shutdown (SIGTERM), SIGKILL after this long (a file fault's `stop: clean`). */
  static readonly CLEAN_STOP_GRACE_MS = 30_000;

  async stopCleanly(brokerIds: number[]): Promise<CutInfo> {
    const { nodes, liveAtCut, atMs } = this.hit(brokerIds);
    const how = await Promise.all(nodes.map((n) => n.stop(HostProcessCluster.CLEAN_STOP_GRACE_MS)));
    const killed = brokerIds.filter((_, i) => how[i] === 'killed');
    if (killed.length) this.log(`broker ${killed.join(', ')} did not stop within ${HostProcessCluster.CLEAN_STOP_GRACE_MS / 1000} s of SIGTERM: killed`);
    return { brokerIds, atMs, liveAtCut };
  }

  async pause(brokerIds: number[]): Promise<CutInfo> {
    const { nodes, liveAtCut, atMs } = this.hit(brokerIds);
    for (const n of nodes) n.freeze();
    return { brokerIds, atMs, liveAtCut };
  }

  async resume(brokerIds: number[]): Promise<void> {
    for (const id of brokerIds) this.node(id).thaw();
  }

  setReadErrors(brokerId: number, ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): Promise<ReadErrorRange[]> {
    if (!this.disks) return Promise.reject(new Error(`read errors on broker ${brokerId}: it runs on a plain directory, not on a fault disk; the scenario's faults put the brokers on the fault disk at start`));
    return this.disks.setReadErrors(brokerId, ranges);
  }

  readErrorHits(brokerId: number): Promise<ReadErrorRange[]> {
    return this.disks ? this.disks.readErrorHits(brokerId) : Promise.resolve([]);
  }

  faultDiskRoot(brokerId: number): string | null {
    this.node(brokerId); // an unknown id throws
    return this.disks?.rootOf(brokerId) ?? null;
  }

  recordedDisk(brokerId: number): RecordedDisk | null {
    return this.disks?.recordedDisk(brokerId) ?? null;
  }

  keepFinalDiskImages(): void {
    this.disks?.keepFinalImages();
  }

  diskEvidence(): { brokers: BrokerDiskEvidence[]; incomplete: string[] } {
    return this.disks?.evidenceKept() ?? { brokers: [], incomplete: [] };
  }

  /**
   * Stops every node at once (SIGTERM, SIGKILL after the grace: `evidenceGraceMs` when the final
   * disk images are kept, which must be a clean stop's, else `graceMs`), then the disks (a clean
   * unmount writes back and flushes what is left; evidence only after clean stops), then the lab
   * network's namespaces.
   */
  protected async stopNodesAndDisks(graceMs: number, evidenceGraceMs: number): Promise<void> {
    const grace = this.disks?.keepsFinalImages ? evidenceGraceMs : graceMs;
    const how = await Promise.all(this.nodes.map((n) => n.stop(grace)));
    try {
      await this.disks?.close(how.every((h) => h === 'clean'));
    } finally {
      await this.lab?.lab.close();
    }
  }
}
