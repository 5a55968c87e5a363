// Request and response definitions of the supported APIs, transcribed by hand from Apache
// Kafka's message JSON files (field names as Kafka spells them). Only the versions durolab
// serves are listed in API_VERSIONS; fields of later versions are left out.
import { f, structs, type MessageDef } from './schema.ts';
import * as g from './group-messages.ts';
import * as adm from './admin-messages.ts';

const MIN_INT32 = -2147483648;

export const API_KEYS = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  CreateTopics: 19,
  ApiVersions: 18,
  InitProducerId: 22,
  SaslHandshake: 17,
  DescribeConfigs: 32,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  ElectLeaders: 43,
  AlterPartitionReassignments: 45,
  DescribeCluster: 60,
} as const;

export type ApiName = keyof typeof API_KEYS;

export interface ApiSpec {
  name: ApiName;
  key: number;
  minVersion: number;
  maxVersion: number;
  request: MessageDef;
  response: MessageDef;
  /**
   * The lowest version ApiVersions advertises when it differs from minVersion (requests below
   * minVersion are still refused). Apache Kafka 4 advertises Produce from v0 though it serves
   * v3+ (KAFKA-18659): librdkafka enables gzip/snappy/lz4 only when the broker lists Produce
   * v0-v2 (librdkafka issue #4956) and otherwise sends those batches uncompressed.
   */
  advertisedMinVersion?: number;
}

const int32s = { array: 'int32' } as const;

const apiVersionsRequest: MessageDef = {
  name: 'ApiVersionsRequest',
  flexibleSince: 3,
  fields: [f('ClientSoftwareName', 'string', 3), f('ClientSoftwareVersion', 'string', 3)],
};
const apiVersionsResponse: MessageDef = {
  name: 'ApiVersionsResponse',
  flexibleSince: 3,
  fields: [
    f('ErrorCode', 'int16'),
    f('ApiKeys', structs([f('ApiKey', 'int16'), f('MinVersion', 'int16'), f('MaxVersion', 'int16')])),
    f('ThrottleTimeMs', 'int32', 1),
    f('SupportedFeatures', structs([f('Name', 'string'), f('MinVersion', 'int16'), f('MaxVersion', 'int16')]), 3, { tag: 0 }),
    f('FinalizedFeaturesEpoch', 'int64', 3, { tag: 1, default: -1 }),
    // Apache Kafka lists metadata.version, kraft.version, eligible.leader.replicas.version, ...
    // here: the only place a client learns the cluster's feature levels (and so its release).
    f('FinalizedFeatures', structs([f('Name', 'string'), f('MaxVersionLevel', 'int16'), f('MinVersionLevel', 'int16')]), 3, { tag: 2 }),
    f('ZkMigrationReady', 'bool', 3, { tag: 3, default: false }),
  ],
};

const metadataRequest: MessageDef = {
  name: 'MetadataRequest',
  flexibleSince: 9,
  fields: [
    f('Topics', structs([f('TopicId', 'uuid', 10), f('Name', 'string', 0, { nullable: 10 })]), 0, { nullable: 1 }),
    f('AllowAutoTopicCreation', 'bool', 4, { default: true }),
    f('IncludeClusterAuthorizedOperations', 'bool', 8, { until: 10 }),
    f('IncludeTopicAuthorizedOperations', 'bool', 8),
  ],
};
const metadataResponse: MessageDef = {
  name: 'MetadataResponse',
  flexibleSince: 9,
  fields: [
    f('ThrottleTimeMs', 'int32', 3),
    f('Brokers', structs([f('NodeId', 'int32'), f('Host', 'string'), f('Port', 'int32'), f('Rack', 'string', 1, { nullable: 1, default: null })])),
    f('ClusterId', 'string', 2, { nullable: 2, default: null }),
    f('ControllerId', 'int32', 1, { default: -1 }),
    f(
      'Topics',
      structs([
        f('ErrorCode', 'int16'),
        f('Name', 'string', 0, { nullable: 12 }),
        f('TopicId', 'uuid', 10),
        f('IsInternal', 'bool', 1),
        f(
          'Partitions',
          structs([
            f('ErrorCode', 'int16'),
            f('PartitionIndex', 'int32'),
            f('LeaderId', 'int32'),
            f('LeaderEpoch', 'int32', 7, { default: -1 }),
            f('ReplicaNodes', int32s),
            f('IsrNodes', int32s),
            f('OfflineReplicas', int32s, 5),
          ]),
        ),
        f('TopicAuthorizedOperations', 'int32', 8, { default: MIN_INT32 }),
      ]),
    ),
    f('ClusterAuthorizedOperations', 'int32', 8, { until: 10, default: MIN_INT32 }),
  ],
};

const produceRequest: MessageDef = {
  name: 'ProduceRequest',
  flexibleSince: 9,
  fields: [
    f('TransactionalId', 'string', 3, { nullable: 3, default: null }),
    f('Acks', 'int16'),
    f('TimeoutMs', 'int32'),
    f('TopicData', structs([f('Name', 'string'), f('PartitionData', structs([f('Index', 'int32'), f('Records', 'records', 0, { nullable: 0 })]))])),
  ],
};
const produceResponse: MessageDef = {
  name: 'ProduceResponse',
  flexibleSince: 9,
  fields: [
    f(
      'Responses',
      structs([
        f('Name', 'string'),
        f(
          'PartitionResponses',
          structs([
            f('Index', 'int32'),
            f('ErrorCode', 'int16'),
            f('BaseOffset', 'int64'),
            f('LogAppendTimeMs', 'int64', 2, { default: -1 }),
            f('LogStartOffset', 'int64', 5, { default: -1 }),
            f('RecordErrors', structs([f('BatchIndex', 'int32'), f('BatchIndexErrorMessage', 'string', 8, { nullable: 8, default: null })]), 8),
            f('ErrorMessage', 'string', 8, { nullable: 8, default: null }),
          ]),
        ),
      ]),
    ),
    f('ThrottleTimeMs', 'int32', 1),
  ],
};

const fetchRequest: MessageDef = {
  name: 'FetchRequest',
  flexibleSince: 12,
  fields: [
    f('ClusterId', 'string', 12, { nullable: 12, tag: 0, default: null }),
    f('ReplicaId', 'int32', 0, { until: 14, default: -1 }),
    f('MaxWaitMs', 'int32'),
    f('MinBytes', 'int32'),
    f('MaxBytes', 'int32', 3, { default: 0x7fffffff }),
    f('IsolationLevel', 'int8', 4),
    f('SessionId', 'int32', 7),
    f('SessionEpoch', 'int32', 7, { default: -1 }),
    f(
      'Topics',
      structs([
        f('Topic', 'string', 0, { until: 12 }),
        f('TopicId', 'uuid', 13),
        f(
          'Partitions',
          structs([
            f('Partition', 'int32'),
            f('CurrentLeaderEpoch', 'int32', 9, { default: -1 }),
            f('FetchOffset', 'int64'),
            f('LastFetchedEpoch', 'int32', 12, { default: -1 }),
            f('LogStartOffset', 'int64', 5, { default: -1 }),
            f('PartitionMaxBytes', 'int32'),
          ]),
        ),
      ]),
    ),
    f('ForgottenTopicsData', structs([f('Topic', 'string', 7, { until: 12 }), f('TopicId', 'uuid', 13), f('Partitions', int32s, 7)]), 7),
    f('RackId', 'string', 11),
  ],
};
const fetchResponse: MessageDef = {
  name: 'FetchResponse',
  flexibleSince: 12,
  fields: [
    f('ThrottleTimeMs', 'int32', 1),
    f('ErrorCode', 'int16', 7),
    f('SessionId', 'int32', 7),
    f(
      'Responses',
      structs([
        f('Topic', 'string', 0, { until: 12 }),
        f('TopicId', 'uuid', 13),
        f(
          'Partitions',
          structs([
            f('PartitionIndex', 'int32'),
            f('ErrorCode', 'int16'),
            f('HighWatermark', 'int64'),
            f('LastStableOffset', 'int64', 4, { default: -1 }),
            f('LogStartOffset', 'int64', 5, { default: -1 }),
            f('DivergingEpoch', { struct: [f('Epoch', 'int32', 12, { default: -1 }), f('EndOffset', 'int64', 12, { default: -1 })] }, 12, { tag: 0 }),
            f('CurrentLeader', { struct: [f('LeaderId', 'int32', 12, { default: -1 }), f('LeaderEpoch', 'int32', 12, { default: -1 })] }, 12, { tag: 1 }),
            f('AbortedTransactions', structs([f('ProducerId', 'int64'), f('FirstOffset', 'int64')]), 4, { nullable: 4 }),
            f('PreferredReadReplica', 'int32', 11, { default: -1 }),
            f('Records', 'records', 0, { nullable: 0 }),
          ]),
        ),
      ]),
    ),
  ],
};

const listOffsetsRequest: MessageDef = {
  name: 'ListOffsetsRequest',
  flexibleSince: 6,
  fields: [
    f('ReplicaId', 'int32'),
    f('IsolationLevel', 'int8', 2),
    f(
      'Topics',
      structs([
        f('Name', 'string'),
        f('Partitions', structs([f('PartitionIndex', 'int32'), f('CurrentLeaderEpoch', 'int32', 4, { default: -1 }), f('Timestamp', 'int64'), f('MaxNumOffsets', 'int32', 0, { until: 0, default: 1 })])),
      ]),
    ),
  ],
};
const listOffsetsResponse: MessageDef = {
  name: 'ListOffsetsResponse',
  flexibleSince: 6,
  fields: [
    f('ThrottleTimeMs', 'int32', 2),
    f(
      'Topics',
      structs([
        f('Name', 'string'),
        f(
          'Partitions',
          structs([
            f('PartitionIndex', 'int32'),
            f('ErrorCode', 'int16'),
            f('OldStyleOffsets', { array: 'int64' }, 0, { until: 0 }),
            f('Timestamp', 'int64', 1, { default: -1 }),
            f('Offset', 'int64', 1, { default: -1 }),
            f('LeaderEpoch', 'int32', 4, { default: -1 }),
          ]),
        ),
      ]),
    ),
  ],
};

const initProducerIdRequest: MessageDef = {
  name: 'InitProducerIdRequest',
  flexibleSince: 2,
  fields: [
    f('TransactionalId', 'string', 0, { nullable: 0 }),
    f('TransactionTimeoutMs', 'int32'),
    f('ProducerId', 'int64', 3, { default: -1 }),
    f('ProducerEpoch', 'int16', 3, { default: -1 }),
  ],
};
const initProducerIdResponse: MessageDef = {
  name: 'InitProducerIdResponse',
  flexibleSince: 2,
  fields: [f('ThrottleTimeMs', 'int32'), f('ErrorCode', 'int16'), f('ProducerId', 'int64', 0, { default: -1 }), f('ProducerEpoch', 'int16')],
};

const createTopicsRequest: MessageDef = {
  name: 'CreateTopicsRequest',
  flexibleSince: 5,
  fields: [
    f(
      'Topics',
      structs([
        f('Name', 'string'),
        f('NumPartitions', 'int32'),
        f('ReplicationFactor', 'int16'),
        f('Assignments', structs([f('PartitionIndex', 'int32'), f('BrokerIds', int32s)])),
        f('Configs', structs([f('Name', 'string'), f('Value', 'string', 0, { nullable: 0 })])),
      ]),
    ),
    f('timeoutMs', 'int32'),
    f('validateOnly', 'bool', 1),
  ],
};
const createTopicsResponse: MessageDef = {
  name: 'CreateTopicsResponse',
  flexibleSince: 5,
  fields: [
    f('ThrottleTimeMs', 'int32', 2),
    f(
      'Topics',
      structs([
        f('Name', 'string'),
        f('TopicId', 'uuid', 7),
        f('ErrorCode', 'int16'),
        f('ErrorMessage', 'string', 1, { nullable: 0, default: null }),
        f('TopicConfigErrorCode', 'int16', 5, { tag: 0 }),
        f('NumPartitions', 'int32', 5, { default: -1 }),
        f('ReplicationFactor', 'int16', 5, { default: -1 }),
        f(
          'Configs',
          structs([f('Name', 'string'), f('Value', 'string', 5, { nullable: 5 }), f('ReadOnly', 'bool'), f('ConfigSource', 'int8', 0, { default: -1 }), f('IsSensitive', 'bool')]),
          5,
          { nullable: 5 },
        ),
      ]),
    ),
  ],
};

/** What durolab serves, ordered by API key; ApiVersions answers with exactly this. */
export const API_VERSIONS: readonly ApiSpec[] = [
  { name: 'Produce', key: 0, minVersion: 3, advertisedMinVersion: 0, maxVersion: 9, request: produceRequest, response: produceResponse },
  { name: 'Fetch', key: 1, minVersion: 4, maxVersion: 13, request: fetchRequest, response: fetchResponse },
  { name: 'ListOffsets', key: 2, minVersion: 1, maxVersion: 7, request: listOffsetsRequest, response: listOffsetsResponse },
  { name: 'Metadata', key: 3, minVersion: 1, maxVersion: 12, request: metadataRequest, response: metadataResponse },
  { name: 'OffsetCommit', key: 8, minVersion: 2, maxVersion: 8, request: g.offsetCommitRequest, response: g.offsetCommitResponse },
  { name: 'OffsetFetch', key: 9, minVersion: 1, maxVersion: 8, request: g.offsetFetchRequest, response: g.offsetFetchResponse },
  { name: 'FindCoordinator', key: 10, minVersion: 0, maxVersion: 4, request: g.findCoordinatorRequest, response: g.findCoordinatorResponse },
  { name: 'JoinGroup', key: 11, minVersion: 0, maxVersion: 6, request: g.joinGroupRequest, response: g.joinGroupResponse },
  { name: 'Heartbeat', key: 12, minVersion: 0, maxVersion: 4, request: g.heartbeatRequest, response: g.heartbeatResponse },
  { name: 'LeaveGroup', key: 13, minVersion: 0, maxVersion: 4, request: g.leaveGroupRequest, response: g.leaveGroupResponse },
  { name: 'SyncGroup', key: 14, minVersion: 0, maxVersion: 4, request: g.syncGroupRequest, response: g.syncGroupResponse },
  { name: 'ApiVersions', key: 18, minVersion: 0, maxVersion: 3, request: apiVersionsRequest, response: apiVersionsResponse },
  { name: 'CreateTopics', key: 19, minVersion: 2, maxVersion: 7, request: createTopicsRequest, response: createTopicsResponse },
  { name: 'InitProducerId', key: 22, minVersion: 0, maxVersion: 4, request: initProducerIdRequest, response: initProducerIdResponse },
  { name: 'DescribeConfigs', key: 32, minVersion: 1, maxVersion: 4, request: adm.describeConfigsRequest, response: adm.describeConfigsResponse },
  { name: 'ElectLeaders', key: 43, minVersion: 0, maxVersion: 2, request: adm.electLeadersRequest, response: adm.electLeadersResponse },
  { name: 'AlterPartitionReassignments', key: 45, minVersion: 0, maxVersion: 1, request: adm.alterPartitionReassignmentsRequest, response: adm.alterPartitionReassignmentsResponse },
  { name: 'DescribeCluster', key: 60, minVersion: 0, maxVersion: 2, request: adm.describeClusterRequest, response: adm.describeClusterResponse },
];

export function apiSpec(key: number): ApiSpec | undefined {
  return API_VERSIONS.find((a) => a.key === key);
}

/** APIs durolab's clients send but its listener does not serve (so ApiVersions does not list them). */
export const CLIENT_ONLY_APIS: readonly ApiSpec[] = [
  { name: 'SaslHandshake', key: 17, minVersion: 0, maxVersion: 1, request: adm.saslHandshakeRequest, response: adm.saslHandshakeResponse },
  { name: 'SaslAuthenticate', key: 36, minVersion: 0, maxVersion: 2, request: adm.saslAuthenticateRequest, response: adm.saslAuthenticateResponse },
  { name: 'CreatePartitions', key: 37, minVersion: 2, maxVersion: 3, request: adm.createPartitionsRequest, response: adm.createPartitionsResponse },
];

/** A client's view: every API it can encode, served by durolab or not. */
export function clientApiSpec(name: ApiName): ApiSpec | undefined {
  return API_VERSIONS.find((a) => a.name === name) ?? CLIENT_ONLY_APIS.find((a) => a.name === name);
}
