// The group APIs on the listener: FindCoordinator names the cluster's coordinator (the live
// broker with the lowest id that has a Kafka listener); the other group requests are served by
// the GroupCoordinator there and answered NOT_COORDINATOR elsewhere, so a client whose
// coordinator moved (broker stopped) looks it up again.
import { kafkaErrorCode } from '../../protocol/error-codes.ts';
import type { ApiName } from '../../protocol/messages.ts';
import type { Struct } from '../../protocol/schema.ts';
import type { GroupCoordinator } from './group-coordinator.ts';
import type { KafkaBrokerView } from './handlers.ts';

export const GROUP_APIS: ReadonlySet<ApiName> = new Set(['FindCoordinator', 'JoinGroup', 'SyncGroup', 'Heartbeat', 'LeaveGroup', 'OffsetCommit', 'OffsetFetch']);

/** The coordinator broker: lowest live id with a Kafka address. */
export function coordinatorOf(broker: KafkaBrokerView): { id: number; host: string; port: number } | null {
  const live = broker
    .clusterView()
    .brokers.filter((b) => b.alive && b.kafka)
    .sort((a, b) => a.id - b.id);
  for (const b of live) {
    const i = b.kafka!.lastIndexOf(':');
    const port = Number(b.kafka!.slice(i + 1));
    if (i > 0 && Number.isInteger(port) && port > 0) return { id: b.id, host: b.kafka!.slice(0, i).replace(/^\[|\]$/g, ''), port };
  }
  return null;
}

function notCoordinator(api: ApiName, version: number, body: Struct): Struct {
  const c = kafkaErrorCode('NOT_COORDINATOR');
  switch (api) {
    case 'JoinGroup':
      return { ThrottleTimeMs: 0, ErrorCode: c, GenerationId: -1, ProtocolName: '', Leader: '', MemberId: body.MemberId, Members: [] };
    case 'SyncGroup':
      return { ThrottleTimeMs: 0, ErrorCode: c, Assignment: Buffer.alloc(0) };
    case 'Heartbeat':
      return { ThrottleTimeMs: 0, ErrorCode: c };
    case 'LeaveGroup':
      return { ThrottleTimeMs: 0, ErrorCode: c, Members: [] };
    case 'OffsetCommit': {
      const topics = body.Topics as Array<{ Name: string; Partitions: Array<{ PartitionIndex: number }> }>;
      return { ThrottleTimeMs: 0, Topics: topics.map((t) => ({ Name: t.Name, Partitions: t.Partitions.map((p) => ({ PartitionIndex: p.PartitionIndex, ErrorCode: c })) })) };
    }
    case 'OffsetFetch': {
      if (version >= 8) return { ThrottleTimeMs: 0, Groups: (body.Groups as Array<{ GroupId: string }>).map((g) => ({ GroupId: g.GroupId, Topics: [], ErrorCode: c })) };
      const topics = (body.Topics as Array<{ Name: string; PartitionIndexes: number[] }> | null) ?? [];
      // Before v2 the error can only travel per partition.
      const perPartition = version < 2 ? c : 0;
      return {
        ThrottleTimeMs: 0,
        ErrorCode: c,
        Topics: topics.map((t) => ({ Name: t.Name, Partitions: t.PartitionIndexes.map((i) => ({ PartitionIndex: i, CommittedOffset: -1, CommittedLeaderEpoch: -1, Metadata: '', ErrorCode: perPartition })) })),
      };
    }
    default:
      throw new Error(`not a group API: ${api}`);
  }
}

export function groupRequest(broker: KafkaBrokerView, coordinator: GroupCoordinator, api: ApiName, version: number, body: Struct): Promise<Struct> | Struct {
  const where = coordinatorOf(broker);
  if (api === 'FindCoordinator') {
    const found =
      (body.KeyType as number) !== 0
        ? { ErrorCode: kafkaErrorCode('COORDINATOR_NOT_AVAILABLE'), ErrorMessage: 'durolab has no transaction coordinator', NodeId: -1, Host: '', Port: -1 }
        : !where
          ? { ErrorCode: kafkaErrorCode('COORDINATOR_NOT_AVAILABLE'), ErrorMessage: 'no live broker with a Kafka listener', NodeId: -1, Host: '', Port: -1 }
          : { ErrorCode: 0, ErrorMessage: null, NodeId: where.id, Host: where.host, Port: where.port };
    // v4+ asks for several keys at once and gets one coordinator per key (one for every group here).
    if (version >= 4) return { ThrottleTimeMs: 0, Coordinators: (body.CoordinatorKeys as string[]).map((Key) => ({ Key, ...found })) };
    return { ThrottleTimeMs: 0, ...found };
  }
  if (!where || where.id !== broker.id) return notCoordinator(api, version, body);
  switch (api) {
    case 'JoinGroup':
      return coordinator.join(body);
    case 'SyncGroup':
      return coordinator.sync(body);
    case 'Heartbeat':
      return coordinator.heartbeat(body);
    case 'LeaveGroup':
      return coordinator.leave(version, body);
    case 'OffsetCommit':
      return coordinator.commit(body);
    case 'OffsetFetch':
      if (version >= 8) {
        // v8+ batches groups: each answered as an OffsetFetch of its own.
        const groups = body.Groups as Array<{ GroupId: string; Topics: Struct['Topics'] }>;
        return { ThrottleTimeMs: 0, Groups: groups.map((g) => ({ GroupId: g.GroupId, ...pick(coordinator.fetchOffsets({ GroupId: g.GroupId, Topics: g.Topics }), ['Topics', 'ErrorCode']) })) };
      }
      return coordinator.fetchOffsets(body);
    default:
      throw new Error(`not a group API: ${api}`);
  }
}

function pick(s: Struct, keys: readonly string[]): Struct {
  return Object.fromEntries(keys.map((k) => [k, s[k]]));
}
