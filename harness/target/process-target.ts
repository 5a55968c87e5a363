// The process target: brokers as local child processes on loopback, the controller in this
// process (engine/server/cluster.ts). Data directories live under the cell's work dir, so the
// probes watch the device that really holds them.
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import type { ClusterStartOptions, RunningCluster, Target, TargetBroker } from './types.ts';
import { brokerSetFlags } from './types.ts';

class ProcessCluster implements RunningCluster {
  constructor(private readonly cluster: Cluster) {}

  get brokers(): TargetBroker[] {
    return this.cluster.brokers.map((b) => ({ id: b.id, url: b.url, dataDir: b.dataDir, logPath: b.logPath, pid: b.pid }));
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

  stop(): Promise<void> {
    return this.cluster.stop();
  }
}

export function processTarget(): Target {
  return {
    kind: 'process',
    async start(opts: ClusterStartOptions): Promise<RunningCluster> {
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
