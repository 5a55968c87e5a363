// Admin requests over KafkaWire (durolab's own codec): what `durolab audit` reads from a live
// cluster (ApiVersions with its feature levels, DescribeCluster, DescribeConfigs) and the two
// requests of a planned leader move (AlterPartitionReassignments with a new replica order, then
// ElectLeaders PREFERRED), as Kafka's Admin client sends them. Apache Kafka 4 and durolab's
// listener both answer them.
import { kafkaErrorName } from '../../../engine/protocol/error-codes.ts';
import { CONFIG_RESOURCE, ELECTION_TYPE } from '../../../engine/protocol/admin-messages.ts';
import type { Struct } from '../../../engine/protocol/schema.ts';
import { KafkaWireError, type KafkaWire } from './wire.ts';

export interface ApiVersionsInfo {
  /** API key -> the versions the broker serves. */
  apis: Map<number, { min: number; max: number }>;
  /** Finalized feature levels (metadata.version, kraft.version, eligible.leader.replicas.version, ...); empty when the broker lists none. */
  finalizedFeatures: Record<string, number>;
}

export async function apiVersions(w: KafkaWire): Promise<ApiVersionsInfo> {
  const body = await w.request('ApiVersions', { ClientSoftwareName: 'durolab', ClientSoftwareVersion: '0.1.0' });
  if ((body.ErrorCode as number) !== 0) {
    const name = kafkaErrorName(body.ErrorCode as number);
    throw new KafkaWireError(name, `ApiVersions on ${w.address}: ${name}`);
  }
  const apis = new Map((body.ApiKeys as Struct[]).map((a) => [a.ApiKey as number, { min: a.MinVersion as number, max: a.MaxVersion as number }]));
  const finalizedFeatures: Record<string, number> = {};
  for (const f of (body.FinalizedFeatures as Struct[] | undefined) ?? []) finalizedFeatures[f.Name as string] = f.MaxVersionLevel as number;
  return { apis, finalizedFeatures };
}

export interface ClusterDescription {
  clusterId: string;
  controllerId: number;
  brokers: Array<{ id: number; host: string; port: number; rack: string | null }>;
}

export async function describeCluster(w: KafkaWire): Promise<ClusterDescription> {
  const body = await w.request('DescribeCluster', { IncludeClusterAuthorizedOperations: false, EndpointType: 1 });
  if ((body.ErrorCode as number) !== 0) {
    const name = kafkaErrorName(body.ErrorCode as number);
    throw new KafkaWireError(name, `DescribeCluster on ${w.address}: ${name}${body.ErrorMessage ? `: ${String(body.ErrorMessage)}` : ''}`);
  }
  return {
    clusterId: body.ClusterId as string,
    controllerId: body.ControllerId as number,
    brokers: (body.Brokers as Struct[]).map((b) => ({ id: b.BrokerId as number, host: b.Host as string, port: b.Port as number, rack: (b.Rack as string | null) ?? null })),
  };
}

export type ConfigResourceKind = keyof typeof CONFIG_RESOURCE;

export interface DescribedConfigs {
  kind: ConfigResourceKind;
  name: string;
  /** Kafka's error name for this resource (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, ...), or null. */
  error: string | null;
  errorMessage: string | null;
  /** Config name -> value (null: unset) and Kafka's ConfigSource number. */
  configs: Map<string, { value: string | null; source: number }>;
}

export async function describeConfigs(w: KafkaWire, resources: Array<{ kind: ConfigResourceKind; name: string; keys: string[] | null }>): Promise<DescribedConfigs[]> {
  const body = await w.request('DescribeConfigs', {
    Resources: resources.map((r) => ({ ResourceType: CONFIG_RESOURCE[r.kind], ResourceName: r.name, ConfigurationKeys: r.keys })),
    IncludeSynonyms: false,
    IncludeDocumentation: false,
  });
  const kindOf = (t: number): ConfigResourceKind => (t === CONFIG_RESOURCE.broker ? 'broker' : 'topic');
  return (body.Results as Struct[]).map((r) => ({
    kind: kindOf(r.ResourceType as number),
    name: r.ResourceName as string,
    error: (r.ErrorCode as number) === 0 ? null : kafkaErrorName(r.ErrorCode as number),
    errorMessage: (r.ErrorMessage as string | null) ?? null,
    configs: new Map((r.Configs as Struct[]).map((c) => [c.Name as string, { value: (c.Value as string | null) ?? null, source: c.ConfigSource as number }])),
  }));
}

/** One partition's answer to a planned-move request: null, or Kafka's error name and message. */
export type MoveAnswer = { error: string; message: string } | null;

function partitionAnswer(what: string, code: number | undefined, message: unknown): MoveAnswer {
  if (code === undefined) return { error: 'UNKNOWN_SERVER_ERROR', message: `${what}: the answer names no such partition` };
  return code === 0 ? null : { error: kafkaErrorName(code), message: `${what}: ${kafkaErrorName(code)}${message ? `: ${String(message)}` : ''}` };
}

/** AlterPartitionReassignments: the partition's replicas in a new order (the first is the preferred leader). */
export async function reorderReplicas(w: KafkaWire, topic: string, partition: number, replicas: number[]): Promise<MoveAnswer> {
  const body = await w.request('AlterPartitionReassignments', { TimeoutMs: 30_000, Topics: [{ Name: topic, Partitions: [{ PartitionIndex: partition, Replicas: replicas }] }] });
  const what = `AlterPartitionReassignments ${topic}-${partition} -> [${replicas.join(',')}] on ${w.address}`;
  if ((body.ErrorCode as number) !== 0) return partitionAnswer(what, body.ErrorCode as number, body.ErrorMessage);
  const p = ((body.Responses as Struct[])[0]?.Partitions as Struct[] | undefined)?.[0];
  return partitionAnswer(what, p?.ErrorCode as number | undefined, p?.ErrorMessage);
}

/** ElectLeaders PREFERRED for one partition. */
export async function electPreferred(w: KafkaWire, topic: string, partition: number): Promise<MoveAnswer> {
  const body = await w.request('ElectLeaders', { ElectionType: ELECTION_TYPE.preferred, TopicPartitions: [{ Topic: topic, Partitions: [partition] }], TimeoutMs: 30_000 });
  const what = `ElectLeaders PREFERRED ${topic}-${partition} on ${w.address}`;
  if ((body.ErrorCode as number) !== 0) return partitionAnswer(what, body.ErrorCode as number, null);
  const p = ((body.ReplicaElectionResults as Struct[])[0]?.PartitionResult as Struct[] | undefined)?.[0];
  return partitionAnswer(what, p?.ErrorCode as number | undefined, p?.ErrorMessage);
}
