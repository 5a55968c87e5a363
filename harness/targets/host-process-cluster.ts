// What a running cluster of host-process nodes (host-node-process.ts: targets kafka and nats)
// does the same way whatever the system: its nodes by id, the faults on them (SIGKILL, SIGSTOP
// pauses and their SIGCONT, and on the lab's fault disk power cuts, where the processes and
// their disks' page caches die together: host-fault-disks.ts), the leader poller's timer, the
// disks' evidence, and a stop of nodes, then disks, then the lab network. How leaders are
// learnt, how a node restarts, what a broker's URL is stay with each system's cluster.
import type { BrokerDiskEvidence } from '../disk/disk-evidence.ts';
import type { HostFaultDisks, RecordedDisk } from './host-fault-disks.ts';
import type { HostNodeProcess } from './host-node-process.ts';
import type { ClusterLabNetwork, ClusterStartSteps, CutInfo } from './types.ts';

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

  async pause(brokerIds: number[]): Promise<CutInfo> {
    const { nodes, liveAtCut, atMs } = this.hit(brokerIds);
    for (const n of nodes) n.freeze();
    return { brokerIds, atMs, liveAtCut };
  }

  async resume(brokerIds: number[]): Promise<void> {
    for (const id of brokerIds) this.node(id).thaw();
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
