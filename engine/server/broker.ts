// One broker: its partitions (opened lazily as the controller assigns them), heartbeats that
// carry leadership and ISR changes in, follower fetchers, the periodic partition tick and the
// HTTP server. Replication decisions live in engine/replication; this is the process glue.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Partition, type PartitionAssignment, BrokerError } from '../replication/index.ts';
import type { BrokerSettings } from './config.ts';
import { HttpControllerLink, LocalControllerLink, type ControllerLink, type HeartbeatAnswer } from './controller-link.ts';
import { FollowerFetcher, type FetcherStats } from './fetcher.ts';
import { newKeepAliveAgent } from './http-client.ts';
import { createBrokerHandler, JSON_BODY_SLACK } from './broker-http.ts';
import { HttpStats, type BrokerHost, type HeartbeatStats, type OpenFailure } from './broker-host.ts';
import { EventLoopDelay, type EventLoopDelaySummary } from './event-loop-delay.ts';
import { sendError } from './http-util.ts';
import { sendfileUnavailable } from './kafka/zero-copy.ts';
import { KafkaListener } from './kafka/kafka-listener.ts';
import type { KafkaBrokerView } from './kafka/handlers.ts';
import { kafkaConfigView } from './kafka/config-view.ts';
import { requestJson } from './http-client.ts';
import { StorageErrorLog } from './storage-error-log.ts';
import { previousShutdown, type PreviousShutdown } from './previous-shutdown.ts';

export interface BrokerOptions {
  id: number;
  dataDir: string;
  host?: string;
  /** 0 = any free port. */
  port: number;
  /** URL other brokers and clients use; default http://host:port once bound. */
  advertiseUrl?: string;
  /**
   * A second HTTP listener on `host` for other brokers' replica fetches (0 = any free port): its
   * URL is the one registered with the controller, so followers fetch there, on a link of their
   * own (a network partition can cut replication and leave clients alone). Absent: one listener.
   */
  replicationPort?: number;
  /** Controller base URL; without it the broker is standalone (RF 1, leads everything). */
  controllerUrl?: string;
  /** Standalone topics. */
  topics?: ReadonlyArray<{ name: string; partitions: number }>;
  settings: BrokerSettings;
  log?: (msg: string) => void;
}

const TICK_MS = 100;
/** Time a heartbeat answer may spend opening partitions and changing roles (see applyHeartbeat). */
const APPLY_BUDGET_MS = 250;

export class Broker implements BrokerHost, KafkaBrokerView {
  readonly id: number;
  readonly settings: BrokerSettings;
  readonly dataDir: string;
  readonly startedAtMs = Date.now();
  /**
   * This process's incarnation, sent with every heartbeat: a restart under the same id is a new
   * one, for which the controller fences the old one. The start time leads it because a guest
   * resumed from a saved VM template resumes its random generators' state too (the broker
   * zygote), while its clock is set from the host's before the broker starts.
   */
  readonly incarnation = `${this.startedAtMs.toString(36)}-${randomUUID({ disableEntropyCache: true })}`;
  /** Whether the previous run closed every partition log cleanly, read before any is opened; sent with the heartbeats (KIP-966). */
  readonly previousShutdown: PreviousShutdown;
  readonly httpStats = new HttpStats();
  readonly openFailures: OpenFailure[] = [];
  readonly log: (msg: string) => void;
  url = '';
  /** The replication listener's URL (replicationPort), or null: peers then fetch from `url`. */
  replicationUrl: string | null = null;
  /** The Kafka protocol listener (null with kafka.port=-1). */
  kafka: KafkaListener | null = null;

  kafkaMetrics(): Record<string, unknown> | null {
    const k = this.kafka;
    return k ? { address: k.address, ...k.stats, producerStateRebuilds: k.producerStates.rebuilds } : null;
  }
  private cluster: HeartbeatAnswer = { assignments: [], brokers: [] };
  private server: http.Server | null = null;
  private replicationServer: http.Server | null = null;
  private link: ControllerLink | null = null;
  private readonly partitions = new Map<string, Map<number, Partition>>();
  private readonly fetchers = new Map<Partition, FollowerFetcher>();
  private readonly peers = new Map<number, string>();
  private readonly fetchAgent = newKeepAliveAgent(64);
  private closed = false;
  /** Each storage error's cause, logged once per errno and log dir. */
  readonly storageErrors: StorageErrorLog;
  private tickTimer: NodeJS.Timeout | null = null;
  private heartbeatLoop: Promise<void> = Promise.resolve();
  private readonly heartbeatAbort = new AbortController();
  private firstHeartbeat!: Promise<void>;
  private resolveFirstHeartbeat!: () => void;
  readonly heartbeat: HeartbeatStats = { ok: 0, failed: 0, lastOkMs: 0, lastError: null };
  private readonly loopDelay = new EventLoopDelay();

  eventLoopDelay(reset: boolean): EventLoopDelaySummary {
    return this.loopDelay.summary(reset);
  }

  private constructor(private readonly opts: BrokerOptions) {
    this.id = opts.id;
    this.settings = opts.settings;
    this.dataDir = opts.dataDir;
    this.log = opts.log ?? ((m) => process.stderr.write(`[broker ${opts.id}] ${m}\n`));
    this.storageErrors = new StorageErrorLog(this.log);
    this.previousShutdown = previousShutdown(opts.dataDir);
    const ps = this.previousShutdown;
    if (ps.logs > 0 && !ps.clean) this.log(`previous run ended without a clean shutdown (no marker in ${ps.unclean.join(', ')}): the controller is told, as Kafka's PreviousBrokerEpoch tells it`);
    this.firstHeartbeat = new Promise((r) => (this.resolveFirstHeartbeat = r));
  }

  /** Binds, learns its assignments from the controller (first heartbeat) and starts serving. */
  static async start(opts: BrokerOptions): Promise<Broker> {
    const b = new Broker(opts);
    b.loopDelay.start();
    try {
      await b.listen();
      if (opts.settings.kafkaPort >= 0) {
        const transfer = opts.settings.fetchTransfer === 'sendfile' && sendfileUnavailable !== null ? 'copy' : opts.settings.fetchTransfer;
        if (transfer !== opts.settings.fetchTransfer) b.log(`fetch.transfer=sendfile: the sendfile addon is not loaded, consumer fetches take the copy path: ${sendfileUnavailable}`);
        b.kafka = await KafkaListener.start(b, { host: opts.host ?? '127.0.0.1', port: opts.settings.kafkaPort, maxRequestBytes: opts.settings.socketRequestMaxBytes, fetchTransfer: transfer, log: b.log });
      }
      b.link = opts.controllerUrl
        ? new HttpControllerLink(opts.controllerUrl.replace(/\/+$/, ''), Math.max(1000, 5 * opts.settings.heartbeatIntervalMs))
        : new LocalControllerLink(opts.id, b.url, opts.topics ?? []);
      b.heartbeatLoop = b.runHeartbeats();
      b.tickTimer = setInterval(() => b.tickPartitions(), TICK_MS);
      await b.firstHeartbeat;
      return b;
    } catch (err) {
      await b.close().catch(() => {});
      throw err;
    }
  }

  private async listen(): Promise<void> {
    const host = this.opts.host ?? '127.0.0.1';
    const urlOf = (port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.server = this.httpServer();
    const port = await this.bind(this.server, host, this.opts.port, '--listen');
    this.url = this.opts.advertiseUrl?.replace(/\/+$/, '') ?? urlOf(port);
    if (this.opts.replicationPort !== undefined) {
      this.replicationServer = this.httpServer();
      this.replicationUrl = urlOf(await this.bind(this.replicationServer, host, this.opts.replicationPort, '--replication-port'));
    }
  }

  /** The broker's HTTP server (every route); not yet listening. */
  private httpServer(): http.Server {
    const h = this.settings.http;
    const server = http.createServer(
      {
        keepAliveTimeout: h.keepAliveTimeoutMs,
        headersTimeout: h.headersTimeoutMs,
        requestTimeout: h.requestTimeoutMs,
        // Node checks headersTimeout/requestTimeout only this often (default 30 s).
        connectionsCheckingInterval: Math.min(1000, h.headersTimeoutMs, h.requestTimeoutMs),
        noDelay: true,
      },
      createBrokerHandler(this),
    );
    // max.connections: node closes connections accepted beyond this at once ('drop').
    server.maxConnections = this.settings.maxConnections;
    server.on('drop', () => this.httpStats.connectionsRefused++);
    // curl sends `Expect: 100-continue` for bodies over 1 KiB: refuse an oversized one before
    // the client sends it, instead of inviting the body only to stop reading it.
    server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > this.settings.messageMaxBytes + JSON_BODY_SLACK) {
        this.httpStats.requests++;
        this.httpStats.errors.MESSAGE_TOO_LARGE = (this.httpStats.errors.MESSAGE_TOO_LARGE ?? 0) + 1;
        const e = new BrokerError('MESSAGE_TOO_LARGE', `request body of ${declared} bytes exceeds message.max.bytes (${this.settings.messageMaxBytes})`, {
          maxBytes: this.settings.messageMaxBytes,
        });
        sendError(res, e, true);
        return;
      }
      res.writeContinue();
      server.emit('request', req, res);
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      this.httpStats.clientErrors++;
      if (socket.writable && !socket.destroyed) {
        const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
        socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      } else socket.destroy();
    });
    return server;
  }

  /** Listens on host:port (0 = any free port); the port bound. */
  private async bind(server: http.Server, host: string, port: number, flag: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`${flag} ${host}:${port}: cannot listen: ${err.message}`));
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : port;
  }

  /** A KAFKA_STORAGE_ERROR answered or met: its cause (errno, file, log dir) is logged the first time only. */
  noteStorageError(e: BrokerError): void {
    this.storageErrors.note(e);
  }

  get controllerDescription(): string {
    return this.link?.description ?? 'none';
  }

  /** The local controller of a standalone broker (tests and `--topic` use it). */
  get localController(): LocalControllerLink | null {
    return this.link instanceof LocalControllerLink ? this.link : null;
  }

  partition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(topic)?.get(partition);
  }

  /** 404 UNKNOWN_TOPIC_OR_PARTITION unless this broker hosts a replica. */
  partitionOrThrow(topic: string, partition: number): Partition {
    const p = this.partition(topic, partition);
    if (!p) {
      throw new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `broker ${this.id} has no replica of ${topic}-${partition}`, { topic, partition });
    }
    return p;
  }

  allPartitions(): Partition[] {
    const out: Partition[] = [];
    for (const m of this.partitions.values()) for (const p of m.values()) out.push(p);
    return out;
  }

  peerUrl(id: number): string | undefined {
    return id === this.id ? this.url : this.peers.get(id);
  }

  fetcherStats(): FetcherStats[] {
    return [...this.fetchers.values()].map((f) => f.stats);
  }

  /** 421 answer for a partition this broker does not lead. */
  notLeader(p: Partition): BrokerError {
    const leader = p.leaderId;
    return new BrokerError('NOT_LEADER_OR_FOLLOWER', `broker ${this.id} is not the leader of ${p.topic}-${p.partition} (leader: ${leader < 0 ? 'none' : leader})`, {
      leader,
      leaderUrl: leader >= 0 ? (this.peerUrl(leader) ?? null) : null,
      leaderEpoch: p.leaderEpoch,
    });
  }

  private async runHeartbeats(): Promise<void> {
    const interval = this.settings.heartbeatIntervalMs;
    let lastLogMs = 0;
    while (!this.closed) {
      const started = Date.now();
      try {
        const answer = await this.link!.heartbeat(this.id, this.replicationUrl ?? this.url, this.kafka?.address, this.incarnation, this.previousShutdown.clean);
        if (this.closed) return;
        this.applyHeartbeat(answer);
        this.heartbeat.ok++;
        this.heartbeat.lastOkMs = Date.now();
        this.resolveFirstHeartbeat();
      } catch (err) {
        if (this.closed) return;
        this.heartbeat.failed++;
        this.heartbeat.lastError = err instanceof Error ? err.message : String(err);
        if (Date.now() - lastLogMs > 5000) {
          lastLogMs = Date.now();
          this.log(`heartbeat to ${this.link!.description} failed: ${this.heartbeat.lastError}`);
        }
      }
      const wait = interval - (Date.now() - started);
      if (wait > 0) {
        try {
          await sleep(wait, undefined, { signal: this.heartbeatAbort.signal });
        } catch {
          return;
        }
      }
    }
  }

  /** Brokers (with Kafka addresses) and every partition, from the last heartbeat answer. */
  clusterView(): { brokers: HeartbeatAnswer['brokers']; partitions: NonNullable<HeartbeatAnswer['partitions']> } {
    return { brokers: this.cluster.brokers, partitions: this.cluster.partitions ?? this.cluster.assignments };
  }

  /** CreateTopics from a Kafka client: the standalone controller, or the cluster's over HTTP. */
  async createTopic(name: string, partitions: number, replicationFactor: number): Promise<void> {
    const local = this.localController;
    if (local) {
      local.controller.createTopic(name, partitions, replicationFactor, [this.id]);
      return;
    }
    await requestJson(`${this.opts.controllerUrl!.replace(/\/+$/, '')}/v1/controller/topics`, { method: 'POST', json: { name, partitions, replicationFactor }, timeoutMs: 10_000 });
  }

  /** Planned leader moves from a Kafka admin client (AlterPartitionReassignments, ElectLeaders): the controller decides. */
  async reorderReplicas(topic: string, partition: number, replicas: number[]): Promise<void> {
    const local = this.localController;
    if (local) {
      local.controller.reorderReplicas(topic, partition, replicas);
      return;
    }
    await requestJson(`${this.opts.controllerUrl!.replace(/\/+$/, '')}/v1/controller/reassign`, { method: 'POST', json: { topic, partition, replicas }, timeoutMs: 10_000 });
  }

  async electPreferred(topic: string, partition: number): Promise<void> {
    const local = this.localController;
    if (local) {
      local.controller.electPreferred(topic, partition);
      return;
    }
    await requestJson(`${this.opts.controllerUrl!.replace(/\/+$/, '')}/v1/controller/elect-preferred`, { method: 'POST', json: { topic, partition }, timeoutMs: 10_000 });
  }

  /** DescribeConfigs: this broker's settings in Kafka's names (unclean election as the controller last said). */
  configView(): ReturnType<typeof kafkaConfigView> {
    return kafkaConfigView(this.settings, this.cluster.uncleanLeaderElection ?? null);
  }

  /**
   * Applies the controller's answer. Opening a partition or taking a new role costs fsyncs (its
   * directory, its checkpoints): thousands at once would hold the event loop for seconds, the
   * next heartbeat would come too late and the broker be fenced, over and over. So each answer
   * gets a time budget (APPLY_BUDGET_MS: a heartbeat then goes out every interval + 250 ms at
   * worst, well inside the controller's session timeout); what is left is applied from the next
   * answer, which repeats every assignment (those already applied cost nothing).
   */
  private applyHeartbeat(answer: HeartbeatAnswer): void {
    this.cluster = answer;
    for (const peer of answer.brokers) this.peers.set(peer.id, peer.url);
    const until = performance.now() + APPLY_BUDGET_MS;
    for (const a of answer.assignments) {
      if (!a.replicas.includes(this.id)) continue;
      const existing = this.partition(a.topic, a.partition);
      if (performance.now() > until && (!existing || existing.leaderEpoch !== a.leaderEpoch || existing.leaderId !== a.leader)) continue;
      const p = existing ?? this.openPartition(a);
      if (!p) continue;
      const change = p.applyAssignment(a);
      if (change === 'became-leader' || change === 'became-follower') {
        this.log(`${a.topic}-${a.partition}: ${change} (leader ${a.leader}, epoch ${a.leaderEpoch}, isr [${a.isr.join(',')}])`);
      }
    }
    this.reconcileFetchers();
  }

  private openPartition(a: PartitionAssignment): Partition | undefined {
    const s = this.settings;
    try {
      const p = Partition.open({
        topic: a.topic,
        partition: a.partition,
        brokerId: this.id,
        dataDir: this.dataDir,
        logConfig: s.log,
        minInsyncReplicas: s.minInsyncReplicas,
        replicaLagTimeMaxMs: s.replicaLagTimeMaxMs,
        proposeIsr: (req) => this.link!.alterPartition(req),
        onStorageError: (e) => this.noteStorageError(e),
      });
      let byIndex = this.partitions.get(a.topic);
      if (!byIndex) this.partitions.set(a.topic, (byIndex = new Map()));
      byIndex.set(a.partition, p);
      const r = p.log.recovery;
      this.log(
        `${a.topic}-${a.partition}: opened in ${path.join(this.dataDir, `${a.topic}-${a.partition}`)}: ` +
          `LEO ${p.logEndOffset}, HW ${p.highWatermark}, ` +
          (r.cleanShutdown ? 'after a clean shutdown' : `recovery checked ${r.batchesValidated} batches, truncated ${r.bytesTruncated} bytes`),
      );
      return p;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (!this.openFailures.some((f) => f.topic === a.topic && f.partition === a.partition && f.error === error)) {
        this.openFailures.push({ topic: a.topic, partition: a.partition, error });
        this.log(`${a.topic}-${a.partition}: cannot open: ${error}`);
      }
      return undefined;
    }
  }

  /** One fetcher per followed partition, for the current (leader, epoch); others are stopped. */
  private reconcileFetchers(): void {
    for (const p of this.allPartitions()) {
      const f = this.fetchers.get(p);
      const leaderUrl = p.role === 'follower' && p.leaderId >= 0 ? this.peers.get(p.leaderId) : undefined;
      if (f && leaderUrl === f.leaderUrl && p.leaderId === f.leaderId && p.leaderEpoch === f.leaderEpoch) continue;
      if (f) {
        this.fetchers.delete(p);
        void f.stop();
      }
      if (!leaderUrl) continue;
      const s = this.settings;
      const nf = new FollowerFetcher({
        partition: p,
        brokerId: this.id,
        leaderId: p.leaderId,
        leaderUrl,
        leaderEpoch: p.leaderEpoch,
        agent: this.fetchAgent,
        maxWaitMs: s.replicaFetchWaitMaxMs,
        maxBytes: s.replicaFetchMaxBytes,
        backoffMs: s.replicaFetchBackoffMs,
        log: this.log,
      });
      this.fetchers.set(p, nf);
      nf.start();
    }
  }

  private tickPartitions(): void {
    for (const p of this.allPartitions()) {
      try {
        void p.tick();
      } catch (err) {
        this.log(`${p.topic}-${p.partition}: tick failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /**
   * Clean shutdown: stop taking requests, stop heartbeats and fetchers, then close every
   * partition (pending acks=all fail, HW checkpoint, Log.close writes the clean marker).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.heartbeatAbort.abort();
    this.loopDelay.stop();
    if (this.tickTimer) clearInterval(this.tickTimer);
    const servers = [this.server, this.replicationServer].filter((x): x is http.Server => x !== null);
    const serversClosed = Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((r) => {
            if (!server.listening) return r();
            server.close(() => r());
          }),
      ),
    );
    for (const server of servers) server.closeIdleConnections();
    const kafkaClosed = this.kafka?.close();
    await Promise.all([...this.fetchers.values()].map((f) => f.stop()));
    this.fetchers.clear();
    await this.heartbeatLoop;
    for (const p of this.allPartitions()) {
      try {
        p.close();
      } catch (err) {
        this.log(`${p.topic}-${p.partition}: close failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Partitions answered their pending produces on close; long polls still open are cut.
    await new Promise((r) => setImmediate(r));
    for (const server of servers) server.closeAllConnections();
    await serversClosed;
    await kafkaClosed;
    this.link?.close();
    this.fetchAgent.destroy();
  }
}
