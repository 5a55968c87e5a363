// The kafka driver: the harness speaks the Kafka protocol to the system under test — Apache
// Kafka (target: kafka, external) or durolab's own Kafka listener (target: process). Produce
// through a client library of libraries.ts (producer.ts), consume for the checker through Fetch
// (consumer.ts), replicas and figures from Metadata / ListOffsets and the data dirs
// (replicas.ts), each partition's HW just before a fault (high-watermarks.ts); whatever asks a
// leader finds it through Metadata at the time (leader.ts).
import type { ConnectOptions, DriverCluster, ReplicaReadingClient, ReplicaReadingDriver } from '../types.ts';
import { consumeFromBroker, consumeFromLeader } from './consumer.ts';
import { tailOverKafka } from './tail-consumer.ts';
import { groupMember } from './group-consumer.ts';
import { bootstrapOf, runKafkaLoad } from './producer.ts';
import { servedByIdentity } from './identity.ts';
import { kafkaHighWatermarks } from './high-watermarks.ts';
import { metadataFromAny } from './wire.ts';
import { kafkaBrokerMetrics, kafkaReadReplicaLog, kafkaReplicaDigest, type ReplicaContext } from './replicas.ts';

export function kafkaClient(cluster: DriverCluster, opts: ConnectOptions): ReplicaReadingClient {
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
    consume: (o) => {
      const what = { topic: o.topic, partition: o.partition, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) };
      const leaders = { bootstrap: bootstrapOf(cluster), addressOf: address };
      // No broker named: the leader Metadata names now, followed if it moves while being read.
      return o.brokerId === undefined ? consumeFromLeader(leaders, what) : consumeFromBroker(leaders, o.brokerId, what);
    },
    replicaDigest: (brokerId, topic, partition, upTo) => kafkaReplicaDigest(ctx(), brokerId, topic, partition, upTo),
    readReplicaLog: (brokerId, topic, partition, upTo) => kafkaReadReplicaLog(ctx(), brokerId, topic, partition, upTo),
    highWatermarks: (topic, partitions, timeoutMs) => kafkaHighWatermarks(bootstrapOf(cluster), address, topic, partitions, timeoutMs),
    inSyncReplicas: async (topic, partition) => {
      const p = (await metadataFromAny(bootstrapOf(cluster), [topic])).partitions.find((x) => x.topic === topic && x.partition === partition);
      return p && p.leader >= 0 ? p.isr : null;
    },
    brokerMetrics: () => kafkaBrokerMetrics(ctx()),
    tail: (o) => tailOverKafka({ bootstrap: bootstrapOf(cluster), addressOf: address }, o),
    groupMember: (o) => groupMember(bootstrapOf(cluster), o),
  };
}

export function kafkaDriver(): ReplicaReadingDriver {
  return {
    name: 'kafka',
    connect: kafkaClient,
    // A Kafka client owns its batches' producer ids: the ledger identity is in each record's header.
    servedFromStored: (bytes) => {
      const served = servedByIdentity(bytes);
      return { batches: served.batches, corrupt: served.corrupt };
    },
  };
}
