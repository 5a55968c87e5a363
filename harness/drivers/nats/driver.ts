// Driver nats: the harness speaks NATS JetStream (@nats-io/jetstream) to target nats. The load
// publishes one message per record and takes each PubAck as its acknowledgement (producer.ts);
// the checker reads the stream back through an ordered consumer (consumer.ts); replicas, their
// stored messages and figures come from each server's /jsz and its store_dir (replicas.ts).
// Not given (Kafka's shapes): tail and group consumers (absent), a read from a named replica
// other than the leader, stored bytes decoded as ledger batches (servedFromStored: crash states
// and recount read Kafka RecordBatches), leader epochs and flush counts in the broker figures.
// readReplicaLog gives each replica's stored messages for the replica-bytes comparison.
import type { ClientDriver, ConnectOptions, DriverCluster, ReplicaReadingClient } from '../types.ts';
import { runNatsLoad } from './producer.ts';
import { consumeNatsStream } from './consumer.ts';
import { natsBrokerMetrics, natsCurrentReplicas, natsHighWatermarks, natsReadReplicaLog, natsReplicaDigest } from './replicas.ts';

export function natsClient(cluster: DriverCluster, opts: ConnectOptions): ReplicaReadingClient {
  const ctx = { cluster, dataOnHost: opts.dataOnHost };
  return {
    driver: 'nats',
    get brokers() {
      return cluster.brokers;
    },
    leaderId: (topic, partition) => cluster.leaderId(topic, partition),
    produce: (o) => runNatsLoad(cluster, o),
    consume: (o) => consumeNatsStream(cluster, o),
    replicaDigest: (brokerId, topic, partition, upTo) => natsReplicaDigest(ctx, brokerId, topic, partition, upTo),
    readReplicaLog: (brokerId, topic, partition, upTo) => natsReadReplicaLog(ctx, brokerId, topic, partition, upTo),
    highWatermarks: (topic, partitions, timeoutMs) => natsHighWatermarks(cluster, topic, partitions, timeoutMs),
    inSyncReplicas: (topic, partition) => natsCurrentReplicas(cluster, topic, partition),
    brokerMetrics: () => natsBrokerMetrics(ctx),
  };
}

/** Its clients read replicas (digests, stored messages, the current replicas); it decodes no stored batches. */
export function natsDriver(): Omit<ClientDriver, 'connect'> & { connect: typeof natsClient } {
  return {
    name: 'nats',
    connect: natsClient,
  };
}
