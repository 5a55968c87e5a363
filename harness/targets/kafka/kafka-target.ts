// target: kafka — Apache Kafka 4 (from Maven Central, install.ts) as N KRaft nodes, each a
// combined broker + controller JVM on 127.0.0.1 (with cluster.network: namespaces, in its own
// lab node: kafka-lab.ts) with its own data dir under the cell's work dir. The topic is created with the cell's settings as Kafka topic configs (settings-map.ts);
// leaders come from Metadata, polled; faults are SIGKILL of broker JVMs and a restart on the
// same data dirs (the page cache survives, as with target: process), and, on the lab's fault
// disk (host-fault-disks.ts: each node's log.dirs, the KRaft metadata log included, on its own
// NBD disk mounted on the host), power cuts: the JVMs and their disks' page caches die
// together, and each disk keeps what its model says.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { BrokerRecovery, ClusterLabNetwork, ClusterStartOptions, CrashStateChecker, CutInfo, FaultableCluster, Target, TargetBroker } from '../types.ts';
import type { ResolvedSettings } from '../../model/settings.ts';
import { ensureRecoveryCheck, KafkaRecoveryChecker } from './recovery-check.ts';
import { kafkaStateChecker } from './kafka-check-state.ts';
import { kafkaBrokerDefaults, kafkaFormatFeatures } from './kafka-defaults.ts';
import { capabilitiesOf } from '../registry.ts';
import { KafkaWire, metadataFromAny, type PartitionMetadata } from '../../drivers/kafka/wire.ts';
import type { KafkaInstall } from './install.ts';
import { ensureKafkaRuntime } from './kafka-runtime.ts';
import { freePort } from '../../../engine/common/free-port.ts';
import { KafkaNodeProcess, clientAddress, formatNode, randomClusterId, writeNodeFiles, type KafkaNodeSpec } from './kafka-node.ts';
import type { LabNetwork } from '../../net/lab-network.ts';
import { kafkaLabLinks, labPlacement, spawnInLab } from './kafka-lab.ts';
import { kafkaBrokerConfigs, kafkaFeatureLevels, kafkaTopicConfigs } from './settings-map.ts';
import type { HostFaultDisks } from '../host-fault-disks.ts';
import { HostProcessCluster, hostClusterStartOptions, hostTargetDiskModel, startOnHostResources, type HostClusterStartOptions, type HostTargetOptions } from '../host-process-cluster.ts';
import type { StorageFailure } from '../../results/types.ts';
import { storageFailuresFromLogs } from '../broker-log-failures.ts';
import { kafkaStorageFailureLines } from './kafka-log-lines.ts';

const START_TIMEOUT_MS = 60_000;
/** SIGTERM to SIGKILL when a whole cluster stops (stop()). */
const CLUSTER_STOP_GRACE_MS = 2000;
/** The same when the final disk images are kept: a whole quorum's clean shutdown takes ~6 s here. */
const EVIDENCE_STOP_GRACE_MS = 30_000;
/** SIGTERM to SIGKILL of one node a restart finds still running (the rest of the quorum is up: its controlled shutdown can finish). */
const RESTART_STOP_GRACE_MS = 10_000;

/** Bytes of a topic's partition logs (.log files) under a data dir, per partition. */
function logBytes(dataDir: string, topic: string): Map<number, number> {
  const out = new Map<number, number>();
  if (!existsSync(dataDir)) return out;
  for (const d of readdirSync(dataDir)) {
    const m = new RegExp(`^${topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`).exec(d);
    if (!m) continue;
    let sum = 0;
    for (const f of readdirSync(path.join(dataDir, d))) if (f.endsWith('.log')) sum += statSync(path.join(dataDir, d, f)).size;
    out.set(Number(m[1]), sum);
  }
  return out;
}

/**
 * One Kafka node's log recovery after a start, from its files and its log: per partition, the
 * bytes its .log files lost between the kill and the start (Kafka's recovery truncates a torn
 * tail of the unflushed segments); for the node, Kafka's own log-loading time ("Loaded N logs in
 * X ms", `loaded`), one figure for all its partitions and none per partition. A partition whose
 * files were gone after the start, and a node whose log has no such line, measured nothing:
 * absent, never 0 (nor the restart's time in its place).
 */
export function kafkaLogRecovery(
  topic: string,
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  cleanShutdown: boolean,
  loaded: { ms: number } | null,
): Pick<BrokerRecovery, 'partitions' | 'logLoadMs'> {
  return {
    ...(loaded ? { logLoadMs: loaded.ms } : {}),
    partitions: [...before].map(([partition, bytes]) => {
      const left = after.get(partition);
      return { topic, partition, cleanShutdown, ...(left !== undefined ? { bytesTruncated: Math.max(0, bytes - left) } : {}) };
    }),
  };
}

export class KafkaCluster extends HostProcessCluster<KafkaNodeProcess> implements FaultableCluster {
  private meta = new Map<number, PartitionMetadata>();
  /** kafka-storage format of every node, ms (one short JVM per node, in parallel). */
  formatMs = 0;
  /** From starting the broker JVMs to the topic having leaders, ms. */
  readyMs = 0;
  /** The KRaft cluster id the nodes were formatted with (a node whose disk lost its format is formatted again with it). */
  clusterId = '';
  /** `--feature` levels of the format (settings-map.ts kafkaFeatureLevels), and what node formats wrote (absent: level 0). */
  formatFeatures: Record<string, number> = {};
  formattedFeatures: Record<string, number> = {};

  constructor(
    readonly install: KafkaInstall,
    nodes: KafkaNodeProcess[],
    readonly topic: string,
    /** Each node's data on the lab's fault disk (power cuts possible), or null (plain directories). */
    disks: HostFaultDisks | null = null,
    /** The lab network its nodes run in (cluster.network: namespaces), or null (loopback). */
    lab: ClusterLabNetwork | null = null,
  ) {
    super('kafka cluster', 'Kafka', nodes, disks, lab);
  }

  get brokers(): TargetBroker[] {
    return this.nodes.map((n) => ({
      id: n.node.id,
      url: `kafka://${clientAddress(n.node)}`,
      kafka: clientAddress(n.node),
      dataDir: n.node.dataDir,
      logPath: n.node.logPath,
      pid: n.running ? n.pid : null,
    }));
  }

  private liveAddresses(): string[] {
    return this.nodes.filter((n) => n.running).map((n) => clientAddress(n.node));
  }

  /** Metadata of the topic from any live broker, into the cache leaderId() reads. */
  async refresh(): Promise<Map<number, PartitionMetadata>> {
    const md = await metadataFromAny(this.liveAddresses(), [this.topic]);
    const next = new Map<number, PartitionMetadata>();
    for (const p of md.partitions) if (p.topic === this.topic) next.set(p.partition, p);
    this.meta = next;
    return next;
  }

  leaderId(topic: string, partition: number): number | null {
    if (topic !== this.topic) return null;
    const p = this.meta.get(partition);
    if (!p || p.leader < 0) return null;
    // A killed leader stays in Metadata until the controller fences it (broker.session.timeout.ms).
    return this.nodes.find((n) => n.node.id === p.leader)?.running ? p.leader : null;
  }

  partitionMetadata(): PartitionMetadata[] {
    return [...this.meta.values()];
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    await this.waitForLeaders(topic, 30_000);
    const byId = new Map(this.brokers.map((b) => [b.id, b]));
    const out = new Map<number, TargetBroker>();
    for (const [p, m] of this.meta) out.set(p, byId.get(m.leader)!);
    return out;
  }

  async waitForLeaders(topic: string, timeoutMs: number): Promise<void> {
    if (topic !== this.topic) throw new Error(`kafka cluster: topic ${topic} is not this cluster's (${this.topic})`);
    const end = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const m = await this.refresh();
        const missing = [...m.values()].filter((p) => this.leaderId(topic, p.partition) === null).map((p) => p.partition);
        if (m.size > 0 && missing.length === 0) return;
        last = m.size === 0 ? 'the topic has no partitions yet' : `partition(s) ${missing.join(', ')} without a live leader`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > end) throw new Error(`kafka cluster: topic ${topic} has no leaders after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>> {
    await this.refresh();
    return this.nodes.filter((n) => n.running).map((n) => ({ brokerId: n.node.id, metrics: { partitions: [...this.meta.values()].filter((p) => p.replicas.includes(n.node.id)) } }));
  }

  /** Kafka's own lines for a failed log dir (LogDirFailureChannel, LogManager), from each node's log. */
  storageFailures(): Promise<StorageFailure[]> {
    return storageFailuresFromLogs(this.brokers, kafkaStorageFailureLines);
  }

  /** A kill or a power cut reads Kafka's storage-failure lines once the JVMs are gone. */
  protected override async afterKill(): Promise<Pick<CutInfo, 'storageFailures'>> {
    return { storageFailures: await this.storageFailures() };
  }

  /** The topic as created (a restart on disks that lost the metadata log creates it again). */
  topicSpec: { partitions: number; replicationFactor: number; configs: Record<string, string> } | null = null;

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    const recoveries = await this.restartNodes(brokerIds);
    const note = await this.topicBackAfterRestart();
    if (note && recoveries[0]) recoveries[0].note = [recoveries[0].note, note].filter(Boolean).join('; ');
    return recoveries;
  }

  /**
   * After a cut that took the KRaft metadata log's record of the topic (a lying drive keeps
   * nothing, not even the format), the restarted cluster has no such topic: an operator creates
   * it again, and the checker then finds every acknowledged record gone. Returns the note, or null
   * when the topic survived.
   */
  private async topicBackAfterRestart(): Promise<string | null> {
    if (!this.topicSpec) return null;
    const live = this.liveAddresses();
    const end = Date.now() + 30_000;
    for (;;) {
      const md = await metadataFromAny(live, [this.topic]).catch(() => null);
      if (md && md.partitions.some((p) => p.topic === this.topic)) return null;
      if (md && md.brokers.length >= live.length) break;
      if (Date.now() > end) return null; // waitForLeaders will say what is wrong
      await new Promise((r) => setTimeout(r, 200));
    }
    const note = `topic ${this.topic} was gone after the restart (the disks kept no metadata-log record of it): created again, empty`;
    this.log(`kafka cluster: ${note}`);
    await createTopic(this, this.topic, this.topicSpec.partitions, this.topicSpec.replicationFactor, this.topicSpec.configs);
    return note;
  }

  private async restartNodes(brokerIds: number[]): Promise<BrokerRecovery[]> {
    return Promise.all(
      brokerIds.map(async (id) => {
        const n = this.node(id);
        const t0 = Date.now();
        // A node still running (a fault that left it up, e.g. a full disk it survived) is stopped as an operator
        // restarts it: SIGTERM, SIGKILL after the grace; a second JVM on its data dir would not start.
        if (n.running) await n.stop(RESTART_STOP_GRACE_MS);
        const attach = this.disks ? await this.disks.attach(id) : null;
        let reformatted: string | undefined;
        if (attach && !existsSync(path.join(n.node.dataDir, 'meta.properties'))) {
          // The disk kept nothing of its format (a lying drive loses every write since it was made):
          // the node cannot start as it is; an operator formats it again and lets it rejoin empty.
          const note = `kafka node ${id}: its disk lost meta.properties at the cut (nothing written since the format survived): formatted again, the node restarts empty`;
          this.log(note);
          reformatted = note;
          mkdirSync(n.node.dataDir, { recursive: true });
          await formatNode(this.install, n.node, n.config, n.log4j, this.clusterId, this.formatFeatures);
        }
        const clean = existsSync(path.join(n.node.dataDir, '.kafka_cleanshutdown'));
        const before = logBytes(n.node.dataDir, this.topic);
        const tStart = Date.now();
        await n.start(START_TIMEOUT_MS);
        const restartMs = Date.now() - t0;
        const after = logBytes(n.node.dataDir, this.topic);
        // Kafka's own log-loading time (recovery included), for the whole node: its figure, not the restart's.
        const loaded = n.logLoadOfLastStart();
        return {
          brokerId: id,
          restartMs,
          ...(reformatted ? { note: reformatted } : {}),
          // After a power cut: the disk's export and mount (journal replay), then the JVM to serving.
          ...(attach ? { boot: { bootMs: restartMs, setupMs: attach.exportMs + attach.mountMs, brokerStartMs: Date.now() - tStart } } : {}),
          ...kafkaLogRecovery(this.topic, before, after, clean, loaded),
        };
      }),
    );
  }

  urlOf(brokerId: number): string {
    return `kafka://${clientAddress(this.node(brokerId).node)}`;
  }

  async stop(): Promise<void> {
    this.stopPolling();
    // All at once: each broker's controlled shutdown needs the quorum, which is stopping too. A
    // whole quorum's clean shutdown takes 5.7-6.0 s here (three nodes; Raft's graceful resignation
    // waits), for data no check reads after the cell: a node still going after 2 s is killed.
    // Final images kept as evidence must be a clean stop's (Kafka's own shutdown: flush, checkpoints).
    await this.stopNodesAndDisks(CLUSTER_STOP_GRACE_MS, EVIDENCE_STOP_GRACE_MS);
    // The comma-free symlinks (commaFreePath), not the data they point to.
    for (const n of this.nodes) if (n.node.logDir !== undefined && n.node.logDir !== n.node.dataDir) rmSync(n.node.logDir, { force: true });
  }
}

/**
 * Kafka splits log.dirs at commas, and a cell's work dir has them (`target=kafka,flush=never`):
 * such a data dir is reached through a comma-free symlink under the temp dir instead (the data
 * stays on the cell's device, where the probes look).
 */
function commaFreePath(dir: string): string {
  mkdirSync(dir, { recursive: true });
  if (!dir.includes(',')) return dir;
  const links = path.join(os.tmpdir(), 'durolab-kafka-dirs');
  mkdirSync(links, { recursive: true });
  const link = path.join(links, `${process.pid}-${randomUUID().slice(0, 8)}`);
  symlinkSync(dir, link);
  return link;
}

export interface KafkaClusterStartOptions extends HostClusterStartOptions {
  /** More server.properties per node, over the cell's (tests: an authorizer, a SASL listener). */
  extraBrokerConfigs?: (node: { id: number; port: number; controllerPort: number }) => Record<string, string>;
}

export async function startKafkaCluster(install: KafkaInstall, opts: KafkaClusterStartOptions): Promise<KafkaCluster> {
  const { cluster, disksMs } = await startOnHostResources('kafka', opts, (ids, disks, lab) => startOn(install, opts, ids, disks, lab));
  // The trial's setup step: the fault disks made (mkfs, export, loop, mount) and every node formatted; the JVMs are the broker start.
  cluster.startSteps = { steps: { setup: disksMs + cluster.formatMs } };
  return cluster;
}

async function startOn(install: KafkaInstall, opts: KafkaClusterStartOptions, ids: number[], disks: HostFaultDisks | null, lab: LabNetwork | null): Promise<KafkaCluster> {
  const { cluster: spec, settings } = opts;
  const specs: KafkaNodeSpec[] = [];
  for (const id of ids) {
    // On a fault disk the data dir is below its mount point (a private temp path, free of commas).
    const dataDir = disks ? disks.dataDirOf(id) : path.join(opts.workDir, `broker-${id}`, 'data');
    specs.push({
      id,
      dir: path.join(opts.workDir, `broker-${id}`),
      dataDir,
      logDir: commaFreePath(dataDir),
      logPath: path.join(opts.workDir, `broker-${id}.log`),
      ...(lab ? labPlacement(lab, specs.length) : { port: await freePort(), controllerPort: await freePort() }),
    });
  }
  const brokerConfigs = kafkaBrokerConfigs(settings);
  // On existing disk images (a crash state booted) a node keeps the format and cluster id it has;
  // the topic is the one its metadata log holds.
  const onImages = opts.disks?.images !== undefined;
  const formatted = specs.map((s) => (onImages ? formattedClusterId(s.dataDir) : null));
  const clusterId = formatted.find((c) => c !== null) ?? randomClusterId();
  const files = specs.map((s) => writeNodeFiles(s, specs, { ...brokerConfigs, ...opts.extraBrokerConfigs?.(s) }));
  const tFormat = Date.now();
  // Never on images: a state without meta.properties is a disk Kafka refuses to start on, as the offline check says.
  const features = kafkaFeatureLevels(settings);
  const written = await Promise.all(specs.map(async (s, i) => (onImages ? undefined : formatNode(install, s, files[i]!.config, files[i]!.log4j, clusterId, features))));
  const formatMs = Date.now() - tFormat;
  const nodes = specs.map((s, i) => new KafkaNodeProcess(install, s, files[i]!.config, files[i]!.log4j, spec.brokers, opts.workDir));
  if (lab) spawnInLab(lab, nodes);
  const cluster = new KafkaCluster(install, nodes, spec.topic, disks, lab ? kafkaLabLinks(lab, nodes) : null);
  cluster.clusterId = clusterId;
  cluster.formatFeatures = features;
  cluster.formattedFeatures = written[0] ?? {};
  if (opts.log) cluster.log = opts.log;
  try {
    const t0 = Date.now();
    await Promise.all(nodes.map((n) => n.start(START_TIMEOUT_MS)));
    opts.log?.(`Apache Kafka ${install.version}: ${spec.brokers} KRaft node(s) started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (opts.signal?.aborted) throw new Error('interrupted while starting the cluster');
    if (!onImages) {
      cluster.topicSpec = { partitions: spec.partitions, replicationFactor: spec.replicationFactor, configs: kafkaTopicConfigs(settings) };
      await createTopic(cluster, spec.topic, spec.partitions, spec.replicationFactor, cluster.topicSpec.configs);
    }
    await cluster.waitForLeaders(spec.topic, 30_000);
    cluster.formatMs = formatMs;
    cluster.readyMs = Date.now() - t0;
    cluster.startPolling();
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** The cluster.id of a node's meta.properties, or null when it has none (never formatted, or the disk lost it). */
function formattedClusterId(dataDir: string): string | null {
  const file = path.join(dataDir, 'meta.properties');
  if (!existsSync(file)) return null;
  const m = /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'));
  return m ? m[1]!.trim() : null;
}

/** CreateTopics once every broker registered (a replication factor of N needs N registered brokers). */
async function createTopic(cluster: KafkaCluster, topic: string, partitions: number, replicationFactor: number, configs: Record<string, string>): Promise<void> {
  const address = clientAddress(cluster.nodes[0]!.node);
  const end = Date.now() + 30_000;
  for (;;) {
    const md = await metadataFromAny([address], null).catch(() => null);
    if (md && md.brokers.length >= cluster.nodes.length) break;
    if (Date.now() > end) throw new Error(`kafka cluster: only ${md?.brokers.length ?? 0} of ${cluster.nodes.length} brokers registered after 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // KRaft's controller refuses a request of more than 10,000 records ("excessively large batch
  // operation"): a topic of more partitions is created in steps, then grown with CreatePartitions.
  const w = new KafkaWire(address, 120_000);
  try {
    let made = Math.min(partitions, PARTITIONS_PER_REQUEST);
    await w.createTopic({ topic, partitions: made, replicationFactor, configs, timeoutMs: 120_000 });
    while (made < partitions) {
      made = Math.min(partitions, made + PARTITIONS_PER_REQUEST);
      await w.createPartitions(topic, made, 120_000);
    }
  } finally {
    w.close();
  }
}

/** Partitions per CreateTopics / CreatePartitions request (their records stay below KRaft's 10,000 per operation). */
const PARTITIONS_PER_REQUEST = 4000;

export type KafkaTargetOptions = HostTargetOptions;

export function kafkaTarget(opts: KafkaTargetOptions = {}): Target & { info(): Promise<Record<string, string>> } {
  let install: KafkaInstall | null = null;
  const ensure = async () => (install ??= await ensureKafkaRuntime({ ...(opts.log ? { log: opts.log } : {}) }));
  return {
    kind: 'kafka',
    ...hostTargetDiskModel(opts),
    capabilities: capabilitiesOf('kafka'),
    async info() {
      const k = await ensure();
      const [defaults, features] = await Promise.all([kafkaBrokerDefaults(k, opts.log), kafkaFormatFeatures(k)]);
      return {
        engine: 'Apache Kafka',
        kafkaVersion: k.version,
        java: k.javaVersion,
        brokerDefaults: defaults,
        formatFeatures: features,
        storage: opts.faultDisk
          ? "each node's log.dirs (with the KRaft metadata log) on the lab's fault disk: NBD server -> qemu-storage-daemon FUSE export -> loop device -> ext4 on the host"
          : "each node's log.dirs in a plain directory under the cell's work dir",
      };
    },
    async crashStateChecker(settings: ResolvedSettings): Promise<CrashStateChecker> {
      const k = await ensure();
      const checker = await KafkaRecoveryChecker.start(k, await ensureRecoveryCheck(opts.log));
      return {
        describe: `Apache Kafka ${checker.kafkaVersion}'s own log recovery (UnifiedLog.create as LogManager.loadLog calls it; harness/targets/kafka/recovery-check)`,
        checkState: kafkaStateChecker({ checker, topicConfig: kafkaTopicConfigs(settings) }),
        close: () => checker.close(),
      };
    },
    async start(o: ClusterStartOptions): Promise<FaultableCluster> {
      return startKafkaCluster(await ensure(), hostClusterStartOptions(opts, o));
    },
  };
}
