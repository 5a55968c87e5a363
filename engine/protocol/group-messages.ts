// Consumer-group request and response definitions (classic protocol), transcribed by hand from
// Apache Kafka's FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and
// OffsetFetch message JSON files, for the versions durolab serves: those kafkajs 2.2 and the
// Java client pick, and the flexible ones @platformatic/kafka needs at least (FindCoordinator
// v4 with its batched keys, JoinGroup v6, SyncGroup/Heartbeat/LeaveGroup v4, OffsetCommit v8,
// OffsetFetch v8 with its batched groups).
import { f, structs, type MessageDef } from './schema.ts';


export const findCoordinatorRequest: MessageDef = {
  name: 'FindCoordinatorRequest',
  flexibleSince: 3,
  fields: [f('Key', 'string', 0, { until: 3 }), f('KeyType', 'int8', 1, { default: 0 }), f('CoordinatorKeys', { array: 'string' }, 4)],
};
export const findCoordinatorResponse: MessageDef = {
  name: 'FindCoordinatorResponse',
  flexibleSince: 3,
  fields: [
    f('ThrottleTimeMs', 'int32', 1),
    f('ErrorCode', 'int16', 0, { until: 3 }),
    f('ErrorMessage', 'string', 1, { until: 3, nullable: 1, default: null }),
    f('NodeId', 'int32', 0, { until: 3 }),
    f('Host', 'string', 0, { until: 3 }),
    f('Port', 'int32', 0, { until: 3 }),
    f(
      'Coordinators',
      structs([f('Key', 'string'), f('NodeId', 'int32'), f('Host', 'string'), f('Port', 'int32'), f('ErrorCode', 'int16'), f('ErrorMessage', 'string', 0, { nullable: 0, default: null })]),
      4,
    ),
  ],
};

export const joinGroupRequest: MessageDef = {
  name: 'JoinGroupRequest',
  flexibleSince: 6,
  fields: [
    f('GroupId', 'string'),
    f('SessionTimeoutMs', 'int32'),
    f('RebalanceTimeoutMs', 'int32', 1, { default: -1 }),
    f('MemberId', 'string'),
    f('GroupInstanceId', 'string', 5, { nullable: 5, default: null }),
    f('ProtocolType', 'string'),
    f('Protocols', structs([f('Name', 'string'), f('Metadata', 'bytes')])),
  ],
};
export const joinGroupResponse: MessageDef = {
  name: 'JoinGroupResponse',
  flexibleSince: 6,
  fields: [
    f('ThrottleTimeMs', 'int32', 2),
    f('ErrorCode', 'int16'),
    f('GenerationId', 'int32', 0, { default: -1 }),
    f('ProtocolName', 'string'),
    f('Leader', 'string'),
    f('MemberId', 'string'),
    f('Members', structs([f('MemberId', 'string'), f('GroupInstanceId', 'string', 5, { nullable: 5, default: null }), f('Metadata', 'bytes')])),
  ],
};

export const syncGroupRequest: MessageDef = {
  name: 'SyncGroupRequest',
  flexibleSince: 4,
  fields: [
    f('GroupId', 'string'),
    f('GenerationId', 'int32'),
    f('MemberId', 'string'),
    f('GroupInstanceId', 'string', 3, { nullable: 3, default: null }),
    f('Assignments', structs([f('MemberId', 'string'), f('Assignment', 'bytes')])),
  ],
};
export const syncGroupResponse: MessageDef = {
  name: 'SyncGroupResponse',
  flexibleSince: 4,
  fields: [f('ThrottleTimeMs', 'int32', 1), f('ErrorCode', 'int16'), f('Assignment', 'bytes')],
};

export const heartbeatRequest: MessageDef = {
  name: 'HeartbeatRequest',
  flexibleSince: 4,
  fields: [f('GroupId', 'string'), f('GenerationId', 'int32'), f('MemberId', 'string'), f('GroupInstanceId', 'string', 3, { nullable: 3, default: null })],
};
export const heartbeatResponse: MessageDef = {
  name: 'HeartbeatResponse',
  flexibleSince: 4,
  fields: [f('ThrottleTimeMs', 'int32', 1), f('ErrorCode', 'int16')],
};

export const leaveGroupRequest: MessageDef = {
  name: 'LeaveGroupRequest',
  flexibleSince: 4,
  fields: [
    f('GroupId', 'string'),
    f('MemberId', 'string', 0, { until: 2 }),
    f('Members', structs([f('MemberId', 'string', 3), f('GroupInstanceId', 'string', 3, { nullable: 3, default: null })]), 3),
  ],
};
export const leaveGroupResponse: MessageDef = {
  name: 'LeaveGroupResponse',
  flexibleSince: 4,
  fields: [
    f('ThrottleTimeMs', 'int32', 1),
    f('ErrorCode', 'int16'),
    f('Members', structs([f('MemberId', 'string', 3), f('GroupInstanceId', 'string', 3, { nullable: 3 }), f('ErrorCode', 'int16', 3)]), 3),
  ],
};

export const offsetCommitRequest: MessageDef = {
  name: 'OffsetCommitRequest',
  flexibleSince: 8,
  fields: [
    f('GroupId', 'string'),
    f('GenerationIdOrMemberEpoch', 'int32', 1, { default: -1 }),
    f('MemberId', 'string', 1),
    f('GroupInstanceId', 'string', 7, { nullable: 7, default: null }),
    f('RetentionTimeMs', 'int64', 2, { until: 4, default: -1 }),
    f(
      'Topics',
      structs([
        f('Name', 'string'),
        f(
          'Partitions',
          structs([
            f('PartitionIndex', 'int32'),
            f('CommittedOffset', 'int64'),
            f('CommittedLeaderEpoch', 'int32', 6, { default: -1 }),
            f('CommitTimestamp', 'int64', 1, { until: 1, default: -1 }),
            f('CommittedMetadata', 'string', 0, { nullable: 0 }),
          ]),
        ),
      ]),
    ),
  ],
};
export const offsetCommitResponse: MessageDef = {
  name: 'OffsetCommitResponse',
  flexibleSince: 8,
  fields: [
    f('ThrottleTimeMs', 'int32', 3),
    f('Topics', structs([f('Name', 'string'), f('Partitions', structs([f('PartitionIndex', 'int32'), f('ErrorCode', 'int16')]))])),
  ],
};

export const offsetFetchRequest: MessageDef = {
  name: 'OffsetFetchRequest',
  flexibleSince: 6,
  fields: [
    f('GroupId', 'string', 0, { until: 7 }),
    f('Topics', structs([f('Name', 'string'), f('PartitionIndexes', { array: 'int32' })]), 0, { until: 7, nullable: 2 }),
    f('Groups', structs([f('GroupId', 'string'), f('Topics', structs([f('Name', 'string'), f('PartitionIndexes', { array: 'int32' })]), 0, { nullable: 8 })]), 8),
    f('RequireStable', 'bool', 7),
  ],
};
const offsetFetchPartitions = structs([
  f('PartitionIndex', 'int32'),
  f('CommittedOffset', 'int64'),
  f('CommittedLeaderEpoch', 'int32', 5, { default: -1 }),
  f('Metadata', 'string', 0, { nullable: 0 }),
  f('ErrorCode', 'int16'),
]);
export const offsetFetchResponse: MessageDef = {
  name: 'OffsetFetchResponse',
  flexibleSince: 6,
  fields: [
    f('ThrottleTimeMs', 'int32', 3),
    f('Topics', structs([f('Name', 'string'), f('Partitions', offsetFetchPartitions)]), 0, { until: 7 }),
    f('ErrorCode', 'int16', 2, { until: 7, default: 0 }),
    f('Groups', structs([f('GroupId', 'string'), f('Topics', structs([f('Name', 'string'), f('Partitions', offsetFetchPartitions)])), f('ErrorCode', 'int16', 0, { default: 0 })]), 8),
  ],
};
