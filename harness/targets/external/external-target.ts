// target: external — a Kafka cluster the lab did not start, reached through its bootstrap
// servers. The topic is deleted and created afresh for every cell and repetition with the
// cell's topic configs; broker configs cannot be changed from here (settings that need them
// are refused at check time). Faults run the scenario's argv templates per broker (kill, then
// restart), Jepsen-style; data dirs are not on this host, so replicas are seen through Fetch
// from leaders only.
import { mkdirSync } from 'node:fs';
import { execa } from 'execa';
import { Admin } from '@platformatic/kafka';
import type { BrokerRecovery, ClusterStartOptions, CutInfo, FaultableCluster, Target, TargetBroker } from '../types.ts';
import { capabilitiesOf } from '../registry.ts';
import { KafkaWire, metadataFromAny, type ClusterMetadata } from '../../drivers/kafka/wire.ts';
import { kafkaTopicConfigs } from '../kafka/settings-map.ts';
import { fillArgv, type ExternalSpec } from './external-spec.ts';

class ExternalCluster implements FaultableCluster {
  private md: ClusterMetadata;
  private readonly down = new Set<number>();
  private poller: NodeJS.Timeout | null = null;

  constructor(
    private readonly spec: ExternalSpec,
    readonly topic: string,
    first: ClusterMetadata,
    private readonly workDir: string,
  ) {
    this.md = first;
    const known = new Map(first.brokers.map((b) => [b.id, b]));
    this.all = [...known.values()].sort((a, b) => a.id - b.id);
  }

  private readonly all: ClusterMetadata['brokers'];

  get brokers(): TargetBroker[] {
    return this.all.map((b) => ({ id: b.id, url: `kafka://${b.host}:${b.port}`, kafka: `${b.host}:${b.port}`, dataDir: this.workDir, logPath: '', pid: null }));
  }

  private addresses(): string[] {
    return [...this.all.filter((b) => !this.down.has(b.id)).map((b) => `${b.host}:${b.port}`), ...this.spec.bootstrap];
  }

  async refresh(): Promise<ClusterMetadata> {
    this.md = await metadataFromAny(this.addresses(), [this.topic]);
    return this.md;
  }

  startPolling(): void {
    let busy = false;
    this.poller = setInterval(() => {
      if (busy) return;
      busy = true;
      this.refresh()
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, 250);
    this.poller.unref();
  }

  leaderId(topic: string, partition: number): number | null {
    const p = this.md.partitions.find((x) => x.topic === topic && x.partition === partition);
    return p && p.leader >= 0 && !this.down.has(p.leader) ? p.leader : null;
  }

  async leaders(topic: string): Promise<Map<number, TargetBroker>> {
    await this.waitForLeaders(topic, 30_000);
    const byId = new Map(this.brokers.map((b) => [b.id, b]));
    return new Map(this.md.partitions.filter((p) => p.topic === topic).map((p) => [p.partition, byId.get(p.leader)!]));
  }

  async waitForLeaders(topic: string, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const md = await this.refresh();
        const parts = md.partitions.filter((p) => p.topic === topic);
        const missing = parts.filter((p) => this.leaderId(topic, p.partition) === null).map((p) => p.partition);
        if (parts.length > 0 && missing.length === 0) return;
        last = parts.length === 0 ? `topic ${topic} not in Metadata yet` : `partition(s) ${missing.join(', ')} without a leader`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > end) throw new Error(`external cluster: no leaders for ${topic} after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>> {
    const md = await this.refresh();
    return md.brokers.map((b) => ({ brokerId: b.id, metrics: { partitions: md.partitions.filter((p) => p.replicas.includes(b.id)) } }));
  }

  private broker(id: number): ClusterMetadata['brokers'][number] {
    const b = this.all.find((x) => x.id === id);
    if (!b) throw new Error(`external cluster: no broker ${id} (brokers ${this.all.map((x) => x.id).join(', ')})`);
    return b;
  }

  private async runCommand(kind: 'kill' | 'restart', id: number): Promise<void> {
    const template = this.spec[kind];
    if (!template) throw new Error(`external cluster: no external.${kind} command in the scenario, so broker ${id} cannot be ${kind === 'kill' ? 'killed' : 'restarted'}`);
    const argv = fillArgv(template, this.broker(id));
    const r = await execa(argv[0]!, argv.slice(1), { reject: false, all: true, timeout: this.spec.commandTimeoutSec * 1000, stdin: 'ignore' });
    if (r.exitCode !== 0) throw new Error(`external.${kind} for broker ${id} (${argv.join(' ')}) failed (exit ${r.exitCode ?? r.signal}): ${String(r.all ?? '').slice(-400)}`);
  }

  async processKill(brokerIds: number[]): Promise<CutInfo> {
    for (const id of brokerIds) this.broker(id);
    const atMs = Date.now();
    await Promise.all(brokerIds.map((id) => this.runCommand('kill', id)));
    for (const id of brokerIds) this.down.add(id);
    return { brokerIds, atMs, liveAtCut: Object.fromEntries(brokerIds.map((id) => [id, true])) };
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    return Promise.all(
      brokerIds.map(async (id) => {
        const t0 = Date.now();
        await this.runCommand('restart', id);
        const b = this.broker(id);
        // Serving again once its listener answers Metadata listing itself.
        const end = Date.now() + 120_000;
        for (;;) {
          const md = await metadataFromAny([`${b.host}:${b.port}`], [this.topic], 2000).catch(() => null);
          if (md?.brokers.some((x) => x.id === id)) break;
          if (Date.now() > end) throw new Error(`external cluster: broker ${id} (${b.host}:${b.port}) did not answer Metadata within 120 s of external.restart`);
          await new Promise((r) => setTimeout(r, 200));
        }
        this.down.delete(id);
        // What its log recovery did is not visible from a client.
        return { brokerId: id, restartMs: Date.now() - t0, partitions: [] };
      }),
    );
  }

  urlOf(brokerId: number): string {
    const b = this.broker(brokerId);
    return `kafka://${b.host}:${b.port}`;
  }

  async stop(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }
}

/** Deletes the topic when it exists, then creates it with the cell's configs (a fresh log per cell and repetition). */
async function freshTopic(spec: ExternalSpec, opts: ClusterStartOptions): Promise<void> {
  const { topic, partitions, replicationFactor } = opts.cluster;
  const md = await metadataFromAny(spec.bootstrap, null);
  if (md.partitions.some((p) => p.topic === topic)) {
    const admin = new Admin({ clientId: 'durolab-external', bootstrapBrokers: spec.bootstrap });
    try {
      await admin.deleteTopics({ topics: [topic] });
    } finally {
      await admin.close();
    }
  }
  const end = Date.now() + 60_000;
  for (;;) {
    const w = new KafkaWire(spec.bootstrap[0]!, 30_000);
    try {
      await w.createTopic({ topic, partitions, replicationFactor, configs: kafkaTopicConfigs(opts.settings) });
      return;
    } catch (err) {
      // Deletion is asynchronous: TOPIC_ALREADY_EXISTS until the controller finished it.
      if (!/TOPIC_ALREADY_EXISTS|UNKNOWN_ERROR_CODE_36/.test((err as Error).message) || Date.now() > end) throw err;
    } finally {
      w.close();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function externalTarget(spec: ExternalSpec | undefined): Target {
  if (!spec) throw new Error('target: external needs an external: block with bootstrap servers');
  return {
    kind: 'external',
    capabilities: capabilitiesOf('external'),
    async info() {
      const md = await metadataFromAny(spec.bootstrap, null);
      return { engine: 'external Kafka cluster', bootstrap: spec.bootstrap.join(','), brokers: String(md.brokers.length), clusterController: String(md.controllerId) };
    },
    async start(opts: ClusterStartOptions): Promise<FaultableCluster> {
      mkdirSync(opts.workDir, { recursive: true });
      await freshTopic(spec, opts);
      const first = await metadataFromAny(spec.bootstrap, [opts.cluster.topic]);
      if (first.brokers.length < opts.cluster.brokers) {
        throw new Error(`target external: the cluster at ${spec.bootstrap.join(',')} has ${first.brokers.length} broker(s), the scenario's cluster.brokers is ${opts.cluster.brokers}`);
      }
      const cluster = new ExternalCluster(spec, opts.cluster.topic, first, opts.workDir);
      await cluster.waitForLeaders(opts.cluster.topic, 60_000);
      cluster.startPolling();
      return cluster;
    },
  };
}
