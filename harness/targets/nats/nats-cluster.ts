// A running target: nats cluster: N nats-server nodes (nats-node.ts), the stream of the cell's
// topic, and the faults the target offers: SIGKILL of nodes and a restart on the same store
// dirs; on the lab's fault disk (host-fault-disks.ts: each node's store_dir on its own NBD disk
// mounted on the host) power cuts, where the servers and their disks' page caches die together
// and each disk keeps what its model says; SIGSTOP/SIGCONT pauses. The stream's leader comes
// from the stream's info (the JetStream API), polled.
import type { BrokerRecovery, ClusterLabNetwork, FaultableCluster, TargetBroker } from '../types.ts';
import type { HostFaultDisks } from '../host-fault-disks.ts';
import { HostProcessCluster } from '../host-process-cluster.ts';
import { NatsNodeProcess } from './nats-node.ts';
import { metaLeaderOf, natsServerId } from '../../drivers/nats/monitor.ts';
import { NATS_PARTITION, connectNats, createNatsStream, jetstreamManager, natsStreamInfo, type JetStreamManager, type NatsConnection, type NatsStreamSpec } from '../../drivers/nats/stream.ts';

const START_TIMEOUT_MS = 30_000;
/** SIGTERM to SIGKILL when the whole cluster stops. */
const CLUSTER_STOP_GRACE_MS = 3000;
/** The same when the final disk images are kept (a clean stop syncs every store). */
const EVIDENCE_STOP_GRACE_MS = 20_000;
/** After a restart, a stream the meta group does not know this long after it has a leader is taken as lost with the disks. */
const STREAM_GONE_AFTER_MS = 5000;

export class NatsCluster extends HostProcessCluster<NatsNodeProcess> implements FaultableCluster {
  private leaderName: string | null = null;
  private nc: NatsConnection | null = null;
  /** The manager being opened or open: one for every caller (the poller and the recovery share it). */
  private jsm: Promise<JetStreamManager> | null = null;
  /** Counts closeManager calls: a connection that finishes opening after a close is closed, not kept. */
  private closes = 0;

  constructor(
    nodes: NatsNodeProcess[],
    readonly stream: NatsStreamSpec,
    /** Each node's store_dir on the lab's fault disk (power cuts possible), or null (plain directories). */
    disks: HostFaultDisks | null = null,
    lab: ClusterLabNetwork | null = null,
  ) {
    super('nats cluster', 'NATS', nodes, disks, lab);
  }

  get topic(): string {
    return this.stream.topic;
  }

  get brokers(): Array<TargetBroker & { monitor: string }> {
    return this.nodes.map((n) => ({
      id: n.node.id,
      url: `nats://${n.node.host}:${n.node.port}`,
      monitor: `http://${n.node.host}:${n.node.httpPort}`,
      dataDir: n.node.storeDir,
      logPath: n.node.logPath,
      pid: n.running ? n.pid : null,
    }));
  }

  /**
   * The harness's own connection (stream creation and leader polling), opened once and shared:
   * callers that come while it opens wait for the same one (two callers opening their own left
   * one connection unclosed, reconnecting for ever, and one caller's close failed the other's
   * request with "connection closed"). A failed open is forgotten: the next caller tries afresh.
   */
  private manager(): Promise<JetStreamManager> {
    if (this.jsm) return this.jsm;
    const closesAtOpen = this.closes;
    const opening = (async () => {
      const nc = await connectNats(this.brokers.map((b) => b.url), 'durolab-target');
      if (this.closes !== closesAtOpen) {
        await nc.close().catch(() => undefined);
        throw new Error('nats cluster: connection closed while it opened');
      }
      this.nc = nc;
      try {
        return await jetstreamManager(nc, { timeout: 2000 });
      } catch (err) {
        if (this.nc === nc) this.nc = null;
        await nc.close().catch(() => undefined);
        throw err;
      }
    })();
    this.jsm = opening;
    opening.catch(() => {
      if (this.jsm === opening) this.jsm = null;
    });
    return opening;
  }

  private async closeManager(): Promise<void> {
    const nc = this.nc;
    this.closes++;
    this.nc = null;
    this.jsm = null;
    await nc?.close().catch(() => undefined);
  }

  /** Waits until the JetStream meta group has a leader (any live node knows it); a 1-node server is its own. */
  async waitForMetaLeader(timeoutMs: number): Promise<string> {
    const end = Date.now() + timeoutMs;
    let last = 'no node answered';
    for (;;) {
      for (const b of this.brokers.filter((x) => x.pid !== null)) {
        try {
          const leader = await metaLeaderOf(b.monitor);
          if (leader) return leader;
          last = `node ${b.id} knows no meta leader yet`;
        } catch (err) {
          last = `node ${b.id}: ${(err as Error).message}`;
        }
      }
      if (this.nodes.length === 1) return 'n0';
      if (Date.now() > end) throw new Error(`nats cluster: no JetStream meta leader after ${timeoutMs} ms (${last})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Creates the stream once the meta group can place it: a leader elected, and the peers it
   * needs known to it (until then the server answers "no suitable peers for placement").
   */
  async createStream(): Promise<void> {
    await this.waitForMetaLeader(START_TIMEOUT_MS);
    const end = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        await createNatsStream(await this.manager(), this.stream);
        return;
      } catch (err) {
        const message = (err as Error).message;
        if (!/no suitable peers|peer offline|temporarily unavailable|insufficient resources|connection closed|timeout/i.test(message) || Date.now() > end) throw err;
        // The connection closed under the request (the poller's refresh closes a failed one): open it again.
        if (/connection closed|timeout/i.test(message)) await this.closeManager();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The stream's leader from its info now (null: no stream, or no leader). */
  async refresh(): Promise<string | null> {
    let info;
    try {
      info = await natsStreamInfo(await this.manager(), this.topic);
    } catch (err) {
      // The server this connection reached may be cut off from the stream's leader: the next try connects afresh.
      await this.closeManager();
      throw err;
    }
    // A 1-node server answers without cluster info: it leads its streams itself.
    this.leaderName = info === null ? null : (info.cluster?.leader ?? (this.nodes.length === 1 ? 'n0' : null));
    return this.leaderName;
  }

  leaderId(topic: string, partition: number): number | null {
    if (topic !== this.topic || partition !== NATS_PARTITION || this.leaderName === null) return null;
    const id = natsServerId(this.leaderName);
    return id !== null && this.nodes.find((n) => n.node.id === id)?.running ? id : null;
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    await this.waitForLeaders(topic, 30_000);
    const id = this.leaderId(topic, NATS_PARTITION)!;
    return new Map([[NATS_PARTITION, this.brokers.find((b) => b.id === id)!]]);
  }

  async waitForLeaders(topic: string, timeoutMs: number): Promise<void> {
    if (topic !== this.topic) throw new Error(`nats cluster: topic ${topic} is not this cluster's (${this.topic})`);
    const end = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        await this.refresh();
        if (this.leaderId(topic, NATS_PARTITION) !== null) return;
        last = this.leaderName === null ? 'the stream has no leader (or does not exist)' : `its leader ${this.leaderName} is not running`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > end) throw new Error(`nats cluster: stream of topic ${topic} has no leader after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>> {
    return this.brokers.filter((b) => b.pid !== null).map((b) => ({ brokerId: b.id, metrics: { streamLeader: this.leaderName } }));
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    const recoveries = await Promise.all(brokerIds.map((id) => this.restartNode(id)));
    const note = await this.streamBackAfterRestart();
    if (note && recoveries[0]) recoveries[0].note = note;
    return recoveries;
  }

  private async restartNode(id: number): Promise<BrokerRecovery> {
    const n = this.node(id);
    const t0 = Date.now();
    if (n.running) await n.stop(5000);
    const attach = this.disks ? await this.disks.attach(id) : null;
    const tStart = Date.now();
    await n.start(START_TIMEOUT_MS);
    const restartMs = Date.now() - t0;
    return {
      brokerId: id,
      restartMs,
      ...(attach ? { boot: { bootMs: restartMs, setupMs: attach.exportMs + attach.mountMs, brokerStartMs: Date.now() - tStart } } : {}),
      // nats-server reports no per-stream recovery figures the lab reads (truncation is in its log only).
      partitions: [],
    };
  }

  /**
   * After a cut whose disks kept no record of the stream (nats-io/nats-server 7564: a cut soon
   * after the stream's creation loses it whole), the meta group has no such stream: an operator
   * creates it again, and the checker then finds every acknowledged record gone. Returns the
   * note, or null when the stream survived.
   */
  private async streamBackAfterRestart(): Promise<string | null> {
    await this.waitForMetaLeader(START_TIMEOUT_MS);
    const since = Date.now();
    for (;;) {
      // undefined: no answer yet (JetStream not ready, the connection still opening or closed by the poller).
      const info = await this.manager()
        .then((jsm) => natsStreamInfo(jsm, this.topic))
        .catch(() => undefined);
      if (info) return null;
      if (info === null && Date.now() - since > STREAM_GONE_AFTER_MS) break;
      if (Date.now() - since > START_TIMEOUT_MS) return null; // waitForLeaders will say what is wrong
      await new Promise((r) => setTimeout(r, 200));
    }
    const note = `stream of topic ${this.topic} was gone after the restart (the disks kept no record of it): created again, empty`;
    this.log(`nats cluster: ${note}`);
    await this.createStream();
    return note;
  }

  urlOf(brokerId: number): string {
    const n = this.node(brokerId).node;
    return `nats://${n.host}:${n.port}`;
  }

  async stop(): Promise<void> {
    this.stopPolling();
    await this.closeManager();
    await this.stopNodesAndDisks(CLUSTER_STOP_GRACE_MS, EVIDENCE_STOP_GRACE_MS);
  }
}
