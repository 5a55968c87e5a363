// The first client driver: durolab's own /v1 HTTP API. Produce is autocannon with RecordBatch
// bodies (producer.ts), consume is GET .../records from the leader (consumer.ts), replicas and
// broker figures come from /v1/admin/log-hash and /v1/metrics (admin.ts). This folder is the
// only place in the harness's runner, checker and workload paths that builds a /v1 URL.
import type { ConnectOptions, DriverCluster, ReplicaReadingClient, ReplicaReadingDriver } from '../types.ts';
import { brokerMetrics, logHash, readReplicaOverHttp } from './admin.ts';
import { consumeOverHttp } from './consumer.ts';
import { runHttpLoad } from './producer.ts';
import { splitBatches } from '../record-batches.ts';

function brokerOf(cluster: DriverCluster, brokerId: number): { id: number; url: string; dataDir: string } {
  const b = cluster.brokers.find((x) => x.id === brokerId);
  if (!b) throw new Error(`http driver: no broker ${brokerId} in the cluster (brokers ${cluster.brokers.map((x) => x.id).join(', ')})`);
  return b;
}

export function httpClient(cluster: DriverCluster, _opts: ConnectOptions): ReplicaReadingClient {
  return {
    driver: 'http',
    get brokers() {
      return cluster.brokers;
    },
    leaderId: (topic, partition) => cluster.leaderId(topic, partition),
    produce: (o) => runHttpLoad(cluster, o),
    consume: (o) => {
      const id = o.brokerId ?? cluster.leaderId(o.topic, o.partition);
      if (id === null) throw new Error(`consume ${o.topic}-${o.partition}: the partition has no leader`);
      return consumeOverHttp({ url: brokerOf(cluster, id).url, topic: o.topic, partition: o.partition, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) });
    },
    replicaDigest: (brokerId, topic, partition, upTo) => logHash(brokerOf(cluster, brokerId).url, brokerId, topic, partition, upTo),
    readReplicaLog: (brokerId, topic, partition, upTo) => readReplicaOverHttp(brokerOf(cluster, brokerId).url, brokerId, topic, partition, upTo),
    inSyncReplicas: async (topic, partition) => {
      const id = cluster.leaderId(topic, partition);
      if (id === null) return null;
      const p = (await brokerMetrics(brokerOf(cluster, id).url, id)).partitions.find((x) => x.topic === topic && x.partition === partition && x.role === 'leader');
      return p ? p.isr : null;
    },
    brokerMetrics: async () => {
      const settled = await Promise.allSettled(cluster.brokers.map((b) => brokerMetrics(b.url, b.id)));
      const brokers = [];
      const down = [];
      for (const [i, r] of settled.entries()) {
        if (r.status === 'fulfilled') brokers.push(r.value);
        else down.push({ brokerId: cluster.brokers[i]!.id, reason: (r.reason as Error).message });
      }
      return { brokers, down };
    },
  };
}

export function httpDriver(): ReplicaReadingDriver {
  return {
    name: 'http',
    connect: httpClient,
    // The HTTP producer's batches carry the ledger's producer id and sequences themselves.
    servedFromStored: (bytes) => {
      const split = splitBatches(bytes);
      return { batches: split.batches, corrupt: split.corrupt };
    },
  };
}
