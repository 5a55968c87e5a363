// Admin request and response definitions, transcribed by hand from Apache Kafka 4.4's
// DescribeConfigs, DescribeCluster, ElectLeaders and AlterPartitionReassignments message JSON
// files (kafka-clients' common/message/), for the versions durolab serves. `durolab audit`
// reads a cluster's durability settings with the first two; the move-leader fault moves a
// leadership with the last two, as Kafka's Admin API does (reorder the replicas, then elect the
// preferred one).
import { f, structs, type MessageDef } from './schema.ts';

const MIN_INT32 = -2147483648;

/** DescribeConfigs resource types (org.apache.kafka.common.config.ConfigResource.Type). */
export const CONFIG_RESOURCE = { topic: 2, broker: 4 } as const;

/** DescribeConfigs config sources (DescribeConfigsResponse.ConfigSource). */
export const CONFIG_SOURCE = {
  unknown: 0,
  dynamicTopic: 1,
  dynamicBroker: 2,
  dynamicDefaultBroker: 3,
  staticBroker: 4,
  default: 5,
  dynamicBrokerLogger: 6,
  clientMetrics: 7,
  group: 8,
} as const;

export const describeConfigsRequest: MessageDef = {
  name: 'DescribeConfigsRequest',
  flexibleSince: 4,
  fields: [
    f('Resources', structs([f('ResourceType', 'int8'), f('ResourceName', 'string'), f('ConfigurationKeys', { array: 'string' }, 0, { nullable: 0 })])),
    f('IncludeSynonyms', 'bool', 1),
    f('IncludeDocumentation', 'bool', 3),
  ],
};
export const describeConfigsResponse: MessageDef = {
  name: 'DescribeConfigsResponse',
  flexibleSince: 4,
  fields: [
    f('ThrottleTimeMs', 'int32'),
    f(
      'Results',
      structs([
        f('ErrorCode', 'int16'),
        f('ErrorMessage', 'string', 0, { nullable: 0 }),
        f('ResourceType', 'int8'),
        f('ResourceName', 'string'),
        f(
          'Configs',
          structs([
            f('Name', 'string'),
            f('Value', 'string', 0, { nullable: 0 }),
            f('ReadOnly', 'bool'),
            f('ConfigSource', 'int8', 1, { default: -1 }),
            f('IsSensitive', 'bool'),
            f('Synonyms', structs([f('Name', 'string', 1), f('Value', 'string', 1, { nullable: 0 }), f('Source', 'int8', 1)]), 1),
            f('ConfigType', 'int8', 3, { default: 0 }),
            f('Documentation', 'string', 3, { nullable: 0, default: null }),
          ]),
        ),
      ]),
    ),
  ],
};

export const describeClusterRequest: MessageDef = {
  name: 'DescribeClusterRequest',
  flexibleSince: 0,
  fields: [f('IncludeClusterAuthorizedOperations', 'bool'), f('EndpointType', 'int8', 1, { default: 1 }), f('IncludeFencedBrokers', 'bool', 2)],
};
export const describeClusterResponse: MessageDef = {
  name: 'DescribeClusterResponse',
  flexibleSince: 0,
  fields: [
    f('ThrottleTimeMs', 'int32'),
    f('ErrorCode', 'int16'),
    f('ErrorMessage', 'string', 0, { nullable: 0, default: null }),
    f('EndpointType', 'int8', 1, { default: 1 }),
    f('ClusterId', 'string'),
    f('ControllerId', 'int32', 0, { default: -1 }),
    f('Brokers', structs([f('BrokerId', 'int32'), f('Host', 'string'), f('Port', 'int32'), f('Rack', 'string', 0, { nullable: 0, default: null }), f('IsFenced', 'bool', 2)])),
    f('ClusterAuthorizedOperations', 'int32', 0, { default: MIN_INT32 }),
  ],
};

/** ElectLeaders election types. */
export const ELECTION_TYPE = { preferred: 0, unclean: 1 } as const;

export const electLeadersRequest: MessageDef = {
  name: 'ElectLeadersRequest',
  flexibleSince: 2,
  fields: [
    f('ElectionType', 'int8', 1),
    f('TopicPartitions', structs([f('Topic', 'string'), f('Partitions', { array: 'int32' })]), 0, { nullable: 0 }),
    f('TimeoutMs', 'int32', 0, { default: 60_000 }),
  ],
};
export const electLeadersResponse: MessageDef = {
  name: 'ElectLeadersResponse',
  flexibleSince: 2,
  fields: [
    f('ThrottleTimeMs', 'int32'),
    f('ErrorCode', 'int16', 1),
    f(
      'ReplicaElectionResults',
      structs([f('Topic', 'string'), f('PartitionResult', structs([f('PartitionId', 'int32'), f('ErrorCode', 'int16'), f('ErrorMessage', 'string', 0, { nullable: 0 })]))]),
    ),
  ],
};

export const alterPartitionReassignmentsRequest: MessageDef = {
  name: 'AlterPartitionReassignmentsRequest',
  flexibleSince: 0,
  fields: [
    f('TimeoutMs', 'int32', 0, { default: 60_000 }),
    f('AllowReplicationFactorChange', 'bool', 1, { default: true }),
    f('Topics', structs([f('Name', 'string'), f('Partitions', structs([f('PartitionIndex', 'int32'), f('Replicas', { array: 'int32' }, 0, { nullable: 0, default: null })]))])),
  ],
};
export const alterPartitionReassignmentsResponse: MessageDef = {
  name: 'AlterPartitionReassignmentsResponse',
  flexibleSince: 0,
  fields: [
    f('ThrottleTimeMs', 'int32'),
    f('AllowReplicationFactorChange', 'bool', 1, { default: true }),
    f('ErrorCode', 'int16'),
    f('ErrorMessage', 'string', 0, { nullable: 0 }),
    f(
      'Responses',
      structs([f('Name', 'string'), f('Partitions', structs([f('PartitionIndex', 'int32'), f('ErrorCode', 'int16'), f('ErrorMessage', 'string', 0, { nullable: 0 })]))]),
    ),
  ],
};

// CreatePartitions (client side only: the Kafka target grows a topic past the controller's
// 10,000 records per request in steps; durolab's listener does not serve it).
export const createPartitionsRequest: MessageDef = {
  name: 'CreatePartitionsRequest',
  flexibleSince: 2,
  fields: [
    f('Topics', structs([f('Name', 'string'), f('Count', 'int32'), f('Assignments', structs([f('BrokerIds', { array: 'int32' })]), 0, { nullable: 0, default: null })])),
    f('TimeoutMs', 'int32'),
    f('ValidateOnly', 'bool'),
  ],
};
export const createPartitionsResponse: MessageDef = {
  name: 'CreatePartitionsResponse',
  flexibleSince: 2,
  fields: [f('ThrottleTimeMs', 'int32'), f('Results', structs([f('Name', 'string'), f('ErrorCode', 'int16'), f('ErrorMessage', 'string', 0, { nullable: 0, default: null })]))],
};

// SASL (client side only: `durolab audit --sasl-user` authenticates with PLAIN; durolab's
// listener has no SASL and does not advertise these).
export const saslHandshakeRequest: MessageDef = { name: 'SaslHandshakeRequest', flexibleSince: Number.POSITIVE_INFINITY, fields: [f('Mechanism', 'string')] };
export const saslHandshakeResponse: MessageDef = {
  name: 'SaslHandshakeResponse',
  flexibleSince: Number.POSITIVE_INFINITY,
  fields: [f('ErrorCode', 'int16'), f('Mechanisms', { array: 'string' })],
};
export const saslAuthenticateRequest: MessageDef = { name: 'SaslAuthenticateRequest', flexibleSince: 2, fields: [f('AuthBytes', 'bytes')] };
export const saslAuthenticateResponse: MessageDef = {
  name: 'SaslAuthenticateResponse',
  flexibleSince: 2,
  fields: [f('ErrorCode', 'int16'), f('ErrorMessage', 'string', 0, { nullable: 0 }), f('AuthBytes', 'bytes'), f('SessionLifetimeMs', 'int64', 1, { default: 0 })],
};
