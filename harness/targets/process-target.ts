// The process target: brokers as local child processes on loopback, the controller in this
// process (engine/server/cluster.ts). Data directories live under the cell's work dir, so the
// probes watch the device that really holds them. Its one fault is a process kill: SIGKILL of
// the broker child, after which the host's page cache still holds everything it wrote (a
// crash, not a power failure: power cuts need the VM target).
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import type { BrokerRecovery, ClusterStartOptions, CutInfo, FaultableCluster, Target, TargetBroker } from './types.ts';
import { brokerSetFlags } from './types.ts';
import { capabilitiesOf } from './registry.ts';

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
    partitions: h.recovery.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      cleanShutdown: r.cleanShutdown === true,
      bytesTruncated: r.bytesTruncated ?? 0,
      batchesTruncated: r.batchesTruncated ?? 0,
      durationMs: r.durationMs ?? 0,
    })),
  };
}

class ProcessCluster implements FaultableCluster {
  constructor(private readonly cluster: Cluster) {}

  get brokers(): TargetBroker[] {
    return this.cluster.brokers.map((b) => ({ id: b.id, url: b.url, ...(b.kafka ? { kafka: b.kafka } : {}), dataDir: b.dataDir, logPath: b.logPath, pid: b.pid }));
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
    throw new Error(
      `power-cut of broker(s) ${brokerIds.join(', ')}: the process target cannot cut power (the host's page cache would survive); ` +
        'use target: vm, or fault kind process-kill',
    );
  }

  async processKill(brokerIds: number[]): Promise<CutInfo> {
    for (const id of brokerIds) this.cluster.broker(id); // unknown id: throw before killing anything
    const liveAtCut = Object.fromEntries(brokerIds.map((id) => [id, this.cluster.broker(id).running]));
    const atMs = Date.now();
    // All signals go out before any exit is awaited, so "all" is one correlated crash.
    await Promise.all(brokerIds.map((id) => this.cluster.killBroker(id, 'SIGKILL')));
    return { brokerIds, atMs, liveAtCut };
  }

  async restart(brokerIds: number[]): Promise<BrokerRecovery[]> {
    return Promise.all(
      brokerIds.map(async (id) => {
        const t0 = Date.now();
        const b = await this.cluster.restartBroker(id);
        return readRecovery(b.url, id, Date.now() - t0);
      }),
    );
  }

  waitForLeaders(_topic: string, timeoutMs: number): Promise<void> {
    return this.cluster.waitForLeaders(timeoutMs);
  }

  urlOf(brokerId: number): string {
    return this.cluster.broker(brokerId).url;
  }

  stop(): Promise<void> {
    return this.cluster.stop();
  }
}

export function processTarget(): Target {
  return {
    kind: 'process',
    capabilities: capabilitiesOf('process'),
    async start(opts: ClusterStartOptions): Promise<FaultableCluster> {
      const { cluster: spec, settings } = opts;
      const cluster = await startCluster({
        brokers: spec.brokers,
        dir: opts.workDir,
        port: 0,
        topics: [{ name: spec.topic, partitions: spec.partitions, replicationFactor: spec.replicationFactor }],
        set: brokerSetFlags(settings),
        controller: { uncleanLeaderElection: settings.uncleanLeaderElectionEnable },
      });
      if (opts.signal?.aborted) {
        await cluster.stop();
        throw new Error('interrupted while starting the cluster');
      }
      return new ProcessCluster(cluster);
    },
  };
}
