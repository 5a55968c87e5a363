// The admin APIs durolab's listener answers: DescribeConfigs (the broker's settings in Kafka's
// names, engine/server/kafka/config-view.ts), DescribeCluster (the brokers of the last
// heartbeat), and a planned leader move as Kafka's Admin API makes one:
// AlterPartitionReassignments with a new order of the same replicas, then ElectLeaders
// PREFERRED. Errors are per resource or partition, by Kafka's names, as Kafka answers.
import { BrokerError } from '../../replication/index.ts';
import { kafkaErrorCode } from '../../protocol/error-codes.ts';
import { CONFIG_RESOURCE, ELECTION_TYPE } from '../../protocol/admin-messages.ts';
import type { Struct } from '../../protocol/schema.ts';
import { count, DUROLAB_CLUSTER_ID, failure, type HandlerStats, type KafkaBrokerView } from './handlers.ts';

export function describeConfigs(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats): Struct {
  const view = broker.configView();
  const resources = body.Resources as Array<{ ResourceType: number; ResourceName: string; ConfigurationKeys: string[] | null }>;
  const results = resources.map((r) => {
    const base = { ResourceType: r.ResourceType, ResourceName: r.ResourceName };
    const fail = (err: BrokerError) => {
      count(stats, err.code);
      return { ...base, ErrorCode: kafkaErrorCode(err.code), ErrorMessage: err.message, Configs: [] };
    };
    let entries;
    if (r.ResourceType === CONFIG_RESOURCE.broker) {
      // Kafka: '' is the cluster-wide default, otherwise the id of the broker asked.
      if (r.ResourceName !== '' && r.ResourceName !== String(broker.id)) {
        return fail(new BrokerError('INVALID_REQUEST', `DescribeConfigs: broker resource ${JSON.stringify(r.ResourceName)} sent to broker ${broker.id} (ask each broker for its own configs)`));
      }
      entries = view.broker;
    } else if (r.ResourceType === CONFIG_RESOURCE.topic) {
      if (!broker.clusterView().partitions.some((p) => p.topic === r.ResourceName)) {
        return fail(new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `DescribeConfigs: topic ${JSON.stringify(r.ResourceName)} does not exist`));
      }
      entries = view.topic;
    } else {
      return fail(new BrokerError('INVALID_REQUEST', `DescribeConfigs: resource type ${r.ResourceType} is not served (durolab answers topic ${CONFIG_RESOURCE.topic} and broker ${CONFIG_RESOURCE.broker})`));
    }
    const keys = r.ConfigurationKeys === null ? null : new Set(r.ConfigurationKeys);
    const configs = entries
      .filter((e) => keys === null || keys.has(e.name))
      .map((e) => ({
        Name: e.name,
        Value: e.value,
        ReadOnly: e.readOnly,
        ConfigSource: e.source,
        IsSensitive: false,
        Synonyms: body.IncludeSynonyms ? [{ Name: e.name, Value: e.value, Source: e.source }] : [],
        ConfigType: 0,
        Documentation: null,
      }));
    return { ...base, ErrorCode: 0, ErrorMessage: null, Configs: configs };
  });
  void version;
  return { ThrottleTimeMs: 0, Results: results };
}

export function describeCluster(broker: KafkaBrokerView, version: number, body: Struct): Struct {
  const view = broker.clusterView();
  const live = view.brokers.filter((b) => b.kafka && (b.alive || body.IncludeFencedBrokers === true));
  const brokers = live
    .map((b) => {
      const i = b.kafka!.lastIndexOf(':');
      return { BrokerId: b.id, Host: b.kafka!.slice(0, i), Port: Number(b.kafka!.slice(i + 1)), Rack: null, IsFenced: !b.alive };
    })
    .sort((a, b) => a.BrokerId - b.BrokerId);
  void version;
  if (body.EndpointType !== undefined && body.EndpointType !== 1) {
    return { ThrottleTimeMs: 0, ErrorCode: kafkaErrorCode('INVALID_REQUEST'), ErrorMessage: `DescribeCluster: endpoint type ${String(body.EndpointType)}: durolab's brokers describe brokers (1) only`, EndpointType: body.EndpointType, ClusterId: DUROLAB_CLUSTER_ID, ControllerId: -1, Brokers: [] };
  }
  return { ThrottleTimeMs: 0, ErrorCode: 0, ErrorMessage: null, EndpointType: 1, ClusterId: DUROLAB_CLUSTER_ID, ControllerId: brokers.length ? brokers[0].BrokerId : -1, Brokers: brokers };
}

type TopicPartitions = Array<{ Topic: string; Partitions: number[] }>;

/** One partition's outcome of an admin action: no error, or the broker error's Kafka code and message (counted). */
async function outcome(action: () => Promise<void>, stats: HandlerStats): Promise<{ ErrorCode: number; ErrorMessage: string | null }> {
  try {
    await action();
    return { ErrorCode: 0, ErrorMessage: null };
  } catch (err) {
    const f = failure(err);
    count(stats, f.name);
    return { ErrorCode: f.code, ErrorMessage: f.message };
  }
}

export async function electLeaders(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats): Promise<Struct> {
  const type = version >= 1 ? (body.ElectionType as number) : ELECTION_TYPE.preferred;
  const asked = (body.TopicPartitions as TopicPartitions | null) ?? groupByTopic(broker.clusterView().partitions.map((p) => ({ topic: p.topic, partition: p.partition })));
  const results = await Promise.all(
    asked.map(async (t) => ({
      Topic: t.Topic,
      PartitionResult: await Promise.all(
        t.Partitions.map(async (id) => ({
          PartitionId: id,
          ...(await outcome(async () => {
            if (type !== ELECTION_TYPE.preferred) throw new BrokerError('INVALID_REQUEST', `ElectLeaders: election type ${type}: durolab runs preferred elections (0) only; an unclean one is unclean.leader.election.enable`);
            await broker.electPreferred(t.Topic, id);
          }, stats)),
        })),
      ),
    })),
  );
  return { ThrottleTimeMs: 0, ErrorCode: 0, ReplicaElectionResults: results };
}

export async function alterPartitionReassignments(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats): Promise<Struct> {
  const topics = body.Topics as Array<{ Name: string; Partitions: Array<{ PartitionIndex: number; Replicas: number[] | null }> }>;
  void version;
  const responses = await Promise.all(
    topics.map(async (t) => ({
      Name: t.Name,
      Partitions: await Promise.all(
        t.Partitions.map(async (p) =>
          // null cancels a reassignment in progress: durolab's complete at once, so none is.
          p.Replicas === null
            ? { PartitionIndex: p.PartitionIndex, ErrorCode: kafkaErrorCode('NO_REASSIGNMENT_IN_PROGRESS'), ErrorMessage: `${t.Name}-${p.PartitionIndex}: no reassignment in progress` }
            : { PartitionIndex: p.PartitionIndex, ...(await outcome(() => broker.reorderReplicas(t.Name, p.PartitionIndex, p.Replicas!), stats)) },
        ),
      ),
    })),
  );
  return { ThrottleTimeMs: 0, AllowReplicationFactorChange: false, ErrorCode: 0, ErrorMessage: null, Responses: responses };
}

function groupByTopic(parts: Array<{ topic: string; partition: number }>): TopicPartitions {
  const byTopic = new Map<string, number[]>();
  for (const p of parts) {
    let list = byTopic.get(p.topic);
    if (!list) byTopic.set(p.topic, (list = []));
    list.push(p.partition);
  }
  return [...byTopic].map(([Topic, Partitions]) => ({ Topic, Partitions }));
}
