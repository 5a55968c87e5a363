// The kafka driver: the harness speaks the Kafka protocol to the system under test — Apache
// Kafka (target: kafka, external) or durolab's own Kafka listener (target: process). Produce
// through a client library of libraries.ts (producer.ts), consume for the checker through Fetch
// (consumer.ts), replicas and figures from Metadata / ListOffsets and the data dirs
// (replicas.ts).
import type { ClientDriver, ClusterClient, ConnectOptions, DriverCluster } from '../types.ts';
import { consumeOverKafka } from './consumer.ts';
import { bootstrapOf, runKafkaLoad } from './producer.ts';
import { kafkaBrokerMetrics, kafkaReadReplicaLog, kafkaReplicaDigest, type ReplicaContext } from './replicas.ts';
import { KafkaWireError } from './wire.ts';

/** Answers of a broker that is about to take (or has just lost) a partition's leadership. */
const SETTLING = new Set(['NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'FENCED_LEADER_EPOCH']);
const LEADER_SETTLE_MS = 15_000;

export function kafkaClient(cluster: DriverCluster, opts: ConnectOptions): ClusterClient {
  const ctx = (): ReplicaContext => ({ bootstrap: bootstrapOf(cluster), brokers: cluster.brokers, dataOnHost: opts.dataOnHost });
  const address = (brokerId: number): string => {
    const b = cluster.brokers.find((x) => x.id === brokerId);
    if (!b?.kafka) throw new Error(`kafka driver: no broker ${brokerId} with a Kafka address (brokers ${cluster.brokers.map((x) => x.id).join(', ')})`);
    return b.kafka;
  };
  return {
    driver: 'kafka',
    get brokers() {
      return cluster.brokers;
    },
    leaderId: (topic, partition) => cluster.leaderId(topic, partition),
    produce: (o) => runKafkaLoad(cluster, o),
    consume: async (o) => {
      const id = o.brokerId ?? cluster.leaderId(o.topic, o.partition);
      if (id === null) throw new Error(`consume ${o.topic}-${o.partition}: the partition has no leader`);
      // Right after a failover the controller may name a leader that has not yet taken the role
      // (it answers NOT_LEADER_OR_FOLLOWER for a moment): ask again for a while before failing.
      const until = Date.now() + LEADER_SETTLE_MS;
      for (;;) {
        try {
          return await consumeOverKafka({ address: address(id), topic: o.topic, partition: o.partition, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) });
        } catch (err) {
          if (!(err instanceof KafkaWireError && SETTLING.has(err.errorName)) || Date.now() > until) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    replicaDigest: (brokerId, topic, partition, upTo) => kafkaReplicaDigest(ctx(), brokerId, topic, partition, upTo),
    readReplicaLog: (brokerId, topic, partition, upTo) => kafkaReadReplicaLog(ctx(), brokerId, topic, partition, upTo),
    brokerMetrics: () => kafkaBrokerMetrics(ctx()),
  };
}

export function kafkaDriver(): ClientDriver {
  return { name: 'kafka', connect: kafkaClient };
}
