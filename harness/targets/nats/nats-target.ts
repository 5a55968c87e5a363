// target: nats — NATS JetStream (nats-server v2.12.1, `make nats`) as N nodes on 127.0.0.1 (with
// cluster.network: namespaces, each in its own lab node), a cluster block with routes between
// them (none for one node), each node's jetstream store_dir in its own data dir, or on its own
// host fault disk when the scenario cuts power or names a disk model (host-fault-disks.ts, the
// route target kafka uses). The cell's flush is each server's sync_interval (settings-map.ts).
// Once the JetStream meta group has a leader, the topic's stream is created: file storage,
// `replicas` = cluster.replicationFactor, the topic as its subject.
import path from 'node:path';
import type { ClusterLabNetwork, ClusterStartOptions, FaultableCluster, Target } from '../types.ts';
import { capabilitiesOf } from '../registry.ts';
import { freePort } from '../../../engine/common/free-port.ts';
import type { HostFaultDisks } from '../host-fault-disks.ts';
import { hostClusterStartOptions, hostTargetDiskModel, startOnHostResources, type HostClusterStartOptions, type HostTargetOptions } from '../host-process-cluster.ts';
import type { LabNetwork } from '../../net/lab-network.ts';
import { LAB_PORTS } from '../lab-links.ts';
import { ensureNats, type NatsInstall } from './install.ts';
import { NatsNodeProcess, natsNodeConfig, type NatsNodeSpec } from './nats-node.ts';
import { NatsCluster } from './nats-cluster.ts';
import { natsStreamLimits, natsSyncInterval } from './settings-map.ts';
import { TopicNotOnImageError } from '../types.ts';

export type NatsClusterStartOptions = HostClusterStartOptions;

export async function startNatsCluster(install: NatsInstall, opts: NatsClusterStartOptions): Promise<NatsCluster> {
  const spec = opts.cluster;
  if (spec.partitions !== 1) throw new Error(`nats cluster: cluster.partitions ${spec.partitions}: a JetStream stream is one sequence; target nats runs one partition (1)`);
  const { cluster, disksMs } = await startOnHostResources('nats', opts, (ids, disks, lab) => startOn(install, opts, ids, disks, lab));
  cluster.startSteps = { steps: { setup: disksMs } };
  return cluster;
}

async function nodeSpecs(opts: NatsClusterStartOptions, ids: number[], disks: HostFaultDisks | null, lab: LabNetwork | null): Promise<NatsNodeSpec[]> {
  const specs: NatsNodeSpec[] = [];
  for (const id of ids) {
    const dir = path.join(opts.workDir, `broker-${id}`);
    const where = lab
      ? { host: lab.nodes[id]!.address, port: LAB_PORTS.client, routePort: LAB_PORTS.replication, httpPort: LAB_PORTS.http }
      : { host: '127.0.0.1', port: await freePort(), routePort: await freePort(), httpPort: await freePort() };
    specs.push({ id, dir, storeDir: disks ? disks.dataDirOf(id) : path.join(dir, 'data'), logPath: path.join(opts.workDir, `broker-${id}.log`), ...where });
  }
  return specs;
}

/** What the partition kinds act on in the lab: clients on the client and monitoring ports; replication and the meta group both go over routes. */
function natsLabLinks(lab: LabNetwork, specs: NatsNodeSpec[]): ClusterLabNetwork {
  const links: ClusterLabNetwork['links'] = {};
  specs.forEach((s, i) => (links[s.id] = { node: i, ports: { client: [s.port, s.httpPort], replication: [s.routePort], controller: [s.routePort] } }));
  return { lab, links, controller: { endpoints: specs.map((_, i) => i), port: LAB_PORTS.replication } };
}

async function startOn(install: NatsInstall, opts: NatsClusterStartOptions, ids: number[], disks: HostFaultDisks | null, lab: LabNetwork | null): Promise<NatsCluster> {
  const { cluster: spec, settings } = opts;
  const specs = await nodeSpecs(opts, ids, disks, lab);
  const sync = natsSyncInterval(settings.flush);
  const nodes = specs.map((s) => new NatsNodeProcess(install.binary, s, natsNodeConfig(s, specs, sync)));
  if (lab) nodes.forEach((n, i) => (n.spawnIn = (file, args) => lab.argvIn(i, file, args)));
  const cluster = new NatsCluster(nodes, { topic: spec.topic, replicas: spec.replicationFactor, maxMsgSize: natsStreamLimits(settings).max_msg_size }, disks, lab ? natsLabLinks(lab, specs) : null);
  if (opts.log) cluster.log = opts.log;
  try {
    const t0 = Date.now();
    await Promise.all(nodes.map((n) => n.start()));
    opts.log?.(`nats-server ${install.version}: ${nodes.length} node(s) started in ${((Date.now() - t0) / 1000).toFixed(2)} s (sync_interval ${sync ?? 'default, 2 min'})`);
    if (opts.signal?.aborted) throw new Error('interrupted while starting the cluster');
    // On crash-state images the stream is the one the stores hold (none: the state predates it).
    if (opts.disks?.images === undefined) await cluster.createStream();
    else await requireStreamOnImages(cluster, spec.topic);
    await cluster.waitForLeaders(spec.topic, 30_000);
    cluster.startPolling();
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/**
 * On crash-state images: the stores must hold the topic's stream, or the start fails with
 * TopicNotOnImageError (the state serves nothing). One node has recovered its streams before it
 * says it is ready, so its first answer holds; a cluster's meta group gets a few seconds.
 */
async function requireStreamOnImages(cluster: NatsCluster, topic: string): Promise<void> {
  await cluster.waitForMetaLeader(30_000);
  const end = Date.now() + 5000;
  for (;;) {
    let answer: string | null;
    try {
      answer = await cluster.refresh();
    } catch (err) {
      // JetStream not answering yet: asked again until the end.
      if (Date.now() > end) throw new Error(`nats cluster on crash-state image(s): the stream of topic ${topic} could not be read: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    if (answer !== null) return;
    if (cluster.nodes.length === 1 || Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new TopicNotOnImageError(`nats cluster: the crash-state image(s) hold no stream of topic ${topic} (the state predates its creation, or lost it)`);
}

export interface NatsTargetOptions extends HostTargetOptions {
  /** Another nats-server binary (tests); default the one `make nats` installs. */
  binary?: string;
}

export function natsTarget(opts: NatsTargetOptions = {}): Target & { info(): Promise<Record<string, string>> } {
  let install: NatsInstall | null = null;
  const ensure = async () => (install ??= await ensureNats(opts.binary));
  return {
    kind: 'nats',
    ...hostTargetDiskModel(opts),
    capabilities: capabilitiesOf('nats'),
    async info() {
      const n = await ensure();
      return {
        engine: 'NATS JetStream',
        natsServerVersion: n.version,
        storage: opts.faultDisk
          ? "each node's jetstream store_dir on the lab's fault disk: NBD server -> qemu-storage-daemon FUSE export -> loop device -> ext4 on the host"
          : "each node's jetstream store_dir in a plain directory under the cell's work dir",
      };
    },
    async start(o: ClusterStartOptions): Promise<FaultableCluster> {
      return startNatsCluster(await ensure(), hostClusterStartOptions(opts, o));
    },
  };
}
