// target: external — a Kafka cluster the lab did not start, reached through its bootstrap
// servers. The topic is deleted and created afresh for every cell and repetition with the
// cell's topic configs; broker configs cannot be changed from here (settings that need them
// are refused at check time). Faults run the scenario's argv templates per broker, Jepsen-style
// (which kind runs which: external-faults.ts; kill, pause, partition, powerCut at the entry's
// moment, resume and heal `duration` later and at stop() for any still in force, restart in the
// recovery); data dirs are not on this host, so replicas are seen through Fetch from leaders only.
import { mkdirSync } from 'node:fs';
import { Admin } from '@platformatic/kafka';
import type { BrokerRecovery, ClusterStartOptions, CutInfo, FaultableCluster, OwnFaultDelivery, Target, TargetBroker } from '../types.ts';
import type { FaultKind } from '../../model/kinds.ts';
import type { Fault } from '../../model/scenario.ts';
import { capabilitiesOf } from '../registry.ts';
import { KafkaWire, metadataFromAny, type ClusterMetadata } from '../../drivers/kafka/wire.ts';
import { kafkaTopicConfigs } from '../kafka/settings-map.ts';
import type { ExternalSpec, TemplateValues } from '../../model/external-spec.ts';
import { EXTERNAL_FAULTS, linkPorts, partitionSide } from './external-faults.ts';
import { runTemplate } from './external-commands.ts';

/** A partition's other side and links' ports, as {from} and {ports} render them. */
type Side = { from: string; ports: string };

/** Exported for its unit tests (external-templates.test.ts); the target starts it. */
export class ExternalCluster implements FaultableCluster {
  private md: ClusterMetadata;
  private readonly down = new Set<number>();
  private poller: NodeJS.Timeout | null = null;
  /** Lasting faults started and not yet healed: their heals, by kind and victims. */
  private readonly inForce = new Map<string, () => Promise<void>>();
  /** The {from}/{ports} each start used, by kind and victims, for its heal. */
  private readonly sides = new Map<string, Side | undefined>();

  constructor(
    private readonly spec: ExternalSpec,
    readonly topic: string,
    first: ClusterMetadata,
    private readonly workDir: string,
    private readonly log: (line: string) => void,
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

  /** The argv values for broker `id` (partition and heal: the other side and the links' ports). */
  private values(id: number, side?: Side): TemplateValues {
    const b = this.broker(id);
    return { id, host: b.host, port: b.port, ...side };
  }

  async processKill(brokerIds: number[]): Promise<CutInfo> {
    return this.startTemplated('process-kill', brokerIds, null);
  }

  ownDelivery(kind: FaultKind): OwnFaultDelivery | null {
    const d = EXTERNAL_FAULTS[kind];
    if (d.by !== 'templates') return null;
    return {
      deliver: (ids, fault) => this.startTemplated(kind, ids, fault),
      ...(d.heal ? { heal: (ids: number[], fault: Fault) => this.healTemplated(kind, ids, fault) } : {}),
    };
  }

  /** {from} and {ports} of a partition entry, resolved now (Metadata's brokers and partition 0's ISR). */
  private side(kind: FaultKind, ids: number[], fault: Fault | null): Side | undefined {
    if (kind !== 'partition' || !fault) return undefined;
    const p0 = this.md.partitions.find((p) => p.topic === this.topic && p.partition === 0);
    const other = partitionSide(fault, ids, this.all, p0 && p0.leader >= 0 ? p0 : null);
    return { from: other.map((b) => b.host).join(' '), ports: linkPorts(fault, this.spec) };
  }

  /** Phase start: the kind's start template on every victim at once; a lasting kind that fails on one is healed on all before the error. */
  private async startTemplated(kind: FaultKind, ids: number[], fault: Fault | null): Promise<CutInfo> {
    const d = EXTERNAL_FAULTS[kind];
    if (d.by !== 'templates') throw new Error(`external cluster: fault ${kind} does not go through templates`);
    for (const id of ids) this.broker(id);
    const side = this.side(kind, ids, fault);
    const key = `${kind}:${ids.join(',')}`;
    // The heal undoes exactly this start: the same {from} even when the ISR has changed since.
    this.sides.set(key, side);
    if (d.heal) this.inForce.set(key, () => this.healTemplated(kind, ids, fault));
    const atMs = Date.now();
    const results = await Promise.allSettled(ids.map((id) => runTemplate(this.spec, d.start, this.values(id, side))));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failed.length) {
      if (d.heal) await this.healTemplated(kind, ids, fault).catch((err: Error) => failed.push(`and its heal: ${err.message}`));
      throw new Error(`external cluster: ${kind} of broker(s) ${ids.join(', ')}: ${failed.join('; ')}`);
    }
    if (d.restart) for (const id of ids) this.down.add(id);
    this.log(`${kind} of broker(s) ${ids.join(', ')} through external.${d.start}${side ? ` from [${side.from}]${side.ports ? ` on ports ${side.ports}` : ''}` : ''}`);
    return { brokerIds: ids, atMs, liveAtCut: Object.fromEntries(ids.map((id) => [id, true])) };
  }

  /** Phase heal: the kind's heal template on every victim (each tried even when another fails). */
  private async healTemplated(kind: FaultKind, ids: number[], fault: Fault | null): Promise<void> {
    const d = EXTERNAL_FAULTS[kind];
    if (d.by !== 'templates' || !d.heal) throw new Error(`external cluster: fault ${kind} has no heal template`);
    const key = `${kind}:${ids.join(',')}`;
    const side = this.sides.has(key) ? this.sides.get(key) : this.side(kind, ids, fault);
    const results = await Promise.allSettled(ids.map((id) => runTemplate(this.spec, d.heal!, this.values(id, side))));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failed.length) throw new Error(`external cluster: heal of ${kind} of broker(s) ${ids.join(', ')}: ${failed.join('; ')}`);
    this.inForce.delete(key);
    this.log(`${kind} of broker(s) ${ids.join(', ')} healed through external.${d.heal}`);
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    return Promise.all(
      brokerIds.map(async (id) => {
        const t0 = Date.now();
        await runTemplate(this.spec, 'restart', this.values(id));
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

  /** Heals what is still in force (a heal the schedule could not run), then stops polling. */
  async stop(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    const heals = await Promise.allSettled([...this.inForce.values()].map((h) => h()));
    const failed = heals.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failed.length) throw new Error(`external cluster: at stop, faults still in force could not be healed: ${failed.join('; ')}`);
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

export function externalTarget(spec: ExternalSpec | undefined, log: (line: string) => void = () => undefined): Target {
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
      const cluster = new ExternalCluster(spec, opts.cluster.topic, first, opts.workDir, log);
      await cluster.waitForLeaders(opts.cluster.topic, 60_000);
      cluster.startPolling();
      return cluster;
    },
  };
}
