// Round trips of every supported API at its version edges (first, last, first flexible), the
// header rules (request header v2 keeps a classic client id; ApiVersions answers with header
// v0), tagged fields (unknown ones skipped, known ones read) and truncated or invalid frames
// failing with the API, version and field named.
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../records/index.ts';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, responseHeaderVersion } from './frame.ts';
import { API_VERSIONS, CLIENT_ONLY_APIS, clientApiSpec, type ApiName } from './messages.ts';
import { ProtocolError, Reader, Writer } from './primitives.ts';
import type { Struct } from './schema.ts';

const spec = (name: ApiName) => clientApiSpec(name)!;
const batch = encodeBatch({ records: [{ key: Buffer.from('k'), value: Buffer.from('v') }], firstTimestamp: 1_700_000_000_000 });

/** A request body per API, filled with every field any supported version has. */
const REQUESTS: Record<ApiName, Struct> = {
  ApiVersions: { ClientSoftwareName: 'durolab-test', ClientSoftwareVersion: '1.0' },
  Metadata: { Topics: [{ TopicId: Buffer.alloc(16, 7), Name: 'orders' }], AllowAutoTopicCreation: false, IncludeClusterAuthorizedOperations: true, IncludeTopicAuthorizedOperations: true },
  Produce: { TransactionalId: null, Acks: -1, TimeoutMs: 1500, TopicData: [{ Name: 'orders', PartitionData: [{ Index: 2, Records: batch }] }] },
  Fetch: {
    ClusterId: 'c1',
    ReplicaId: -1,
    MaxWaitMs: 500,
    MinBytes: 1,
    MaxBytes: 1 << 20,
    IsolationLevel: 1,
    SessionId: 0,
    SessionEpoch: -1,
    Topics: [{ Topic: 'orders', Partitions: [{ Partition: 0, CurrentLeaderEpoch: 3, FetchOffset: 1234, LastFetchedEpoch: 2, LogStartOffset: 0, PartitionMaxBytes: 65536 }] }],
    ForgottenTopicsData: [],
    RackId: 'rack-a',
  },
  ListOffsets: { ReplicaId: -1, IsolationLevel: 0, Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 1, CurrentLeaderEpoch: 4, Timestamp: -2 }] }] },
  InitProducerId: { TransactionalId: null, TransactionTimeoutMs: 60000, ProducerId: 17, ProducerEpoch: 2 },
  CreateTopics: { Topics: [{ Name: 'new', NumPartitions: 3, ReplicationFactor: 2, Assignments: [], Configs: [{ Name: 'segment.bytes', Value: '1048576' }] }], timeoutMs: 5000, validateOnly: true },
  FindCoordinator: { Key: 'g1', KeyType: 0 },
  JoinGroup: { GroupId: 'g1', SessionTimeoutMs: 30000, RebalanceTimeoutMs: 60000, MemberId: 'm-1', GroupInstanceId: 'static-1', ProtocolType: 'consumer', Protocols: [{ Name: 'range', Metadata: Buffer.from([0, 1, 2]) }] },
  SyncGroup: { GroupId: 'g1', GenerationId: 3, MemberId: 'm-1', GroupInstanceId: null, Assignments: [{ MemberId: 'm-1', Assignment: Buffer.from([9, 8]) }] },
  Heartbeat: { GroupId: 'g1', GenerationId: 3, MemberId: 'm-1', GroupInstanceId: null },
  LeaveGroup: { GroupId: 'g1', MemberId: 'm-1', Members: [{ MemberId: 'm-1', GroupInstanceId: null }] },
  OffsetCommit: {
    GroupId: 'g1',
    GenerationIdOrMemberEpoch: 3,
    MemberId: 'm-1',
    GroupInstanceId: null,
    RetentionTimeMs: -1,
    Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 0, CommittedOffset: 42, CommittedLeaderEpoch: -1, CommitTimestamp: -1, CommittedMetadata: null }] }],
  },
  OffsetFetch: { GroupId: 'g1', Topics: [{ Name: 'orders', PartitionIndexes: [0, 1] }], RequireStable: false },
  DescribeConfigs: {
    Resources: [
      { ResourceType: 2, ResourceName: 'orders', ConfigurationKeys: ['min.insync.replicas', 'flush.messages'] },
      { ResourceType: 4, ResourceName: '1', ConfigurationKeys: null },
    ],
    IncludeSynonyms: true,
    IncludeDocumentation: true,
  },
  DescribeCluster: { IncludeClusterAuthorizedOperations: false, EndpointType: 1, IncludeFencedBrokers: true },
  SaslHandshake: { Mechanism: 'PLAIN' },
  CreatePartitions: { Topics: [{ Name: 'scale', Count: 10000, Assignments: null }], TimeoutMs: 30000, ValidateOnly: false },
  SaslAuthenticate: { AuthBytes: Buffer.from('\0auditor\0secret') },
  ElectLeaders: { ElectionType: 0, TopicPartitions: [{ Topic: 'orders', Partitions: [0, 2] }], TimeoutMs: 30000 },
  AlterPartitionReassignments: { TimeoutMs: 30000, AllowReplicationFactorChange: false, Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 0, Replicas: [2, 1, 3] }, { PartitionIndex: 1, Replicas: null }] }] },
};

const RESPONSES: Record<ApiName, Struct> = {
  ApiVersions: { ErrorCode: 0, ApiKeys: API_VERSIONS.map((a) => ({ ApiKey: a.key, MinVersion: a.minVersion, MaxVersion: a.maxVersion })), ThrottleTimeMs: 0, SupportedFeatures: [{ Name: 'metadata.version', MinVersion: 7, MaxVersion: 33 }], FinalizedFeaturesEpoch: 5, FinalizedFeatures: [{ Name: 'metadata.version', MaxVersionLevel: 33, MinVersionLevel: 33 }], ZkMigrationReady: false },
  Metadata: {
    ThrottleTimeMs: 0,
    Brokers: [{ NodeId: 1, Host: '127.0.0.1', Port: 9092, Rack: null }],
    ClusterId: 'durolab',
    ControllerId: 1,
    Topics: [
      {
        ErrorCode: 0,
        Name: 'orders',
        TopicId: Buffer.alloc(16, 1),
        IsInternal: false,
        Partitions: [{ ErrorCode: 0, PartitionIndex: 0, LeaderId: 1, LeaderEpoch: 4, ReplicaNodes: [1, 2, 3], IsrNodes: [1, 2], OfflineReplicas: [3] }],
        TopicAuthorizedOperations: -2147483648,
      },
    ],
    ClusterAuthorizedOperations: -2147483648,
  },
  Produce: {
    Responses: [{ Name: 'orders', PartitionResponses: [{ Index: 2, ErrorCode: 0, BaseOffset: 99, LogAppendTimeMs: -1, LogStartOffset: 0, RecordErrors: [], ErrorMessage: null }] }],
    ThrottleTimeMs: 0,
  },
  Fetch: {
    ThrottleTimeMs: 0,
    ErrorCode: 0,
    SessionId: 0,
    Responses: [
      {
        Topic: 'orders',
        Partitions: [
          {
            PartitionIndex: 0,
            ErrorCode: 6,
            HighWatermark: 10,
            LastStableOffset: 10,
            LogStartOffset: 0,
            DivergingEpoch: null,
            CurrentLeader: { LeaderId: 2, LeaderEpoch: 5 },
            AbortedTransactions: [],
            PreferredReadReplica: -1,
            Records: batch,
          },
        ],
      },
    ],
  },
  ListOffsets: { ThrottleTimeMs: 0, Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 1, ErrorCode: 0, OldStyleOffsets: [], Timestamp: -1, Offset: 42, LeaderEpoch: 4 }] }] },
  InitProducerId: { ThrottleTimeMs: 0, ErrorCode: 0, ProducerId: 2 ** 41 + 5, ProducerEpoch: 3 },
  CreateTopics: {
    ThrottleTimeMs: 0,
    Topics: [{ Name: 'new', TopicId: Buffer.alloc(16, 9), ErrorCode: 36, ErrorMessage: 'exists', TopicConfigErrorCode: 0, NumPartitions: 3, ReplicationFactor: 2, Configs: [] }],
  },
  FindCoordinator: { ThrottleTimeMs: 0, ErrorCode: 0, ErrorMessage: null, NodeId: 2, Host: '127.0.0.1', Port: 9092 },
  JoinGroup: { ThrottleTimeMs: 0, ErrorCode: 0, GenerationId: 3, ProtocolName: 'range', Leader: 'm-1', MemberId: 'm-1', Members: [{ MemberId: 'm-1', GroupInstanceId: null, Metadata: Buffer.from([0, 1]) }] },
  SyncGroup: { ThrottleTimeMs: 0, ErrorCode: 0, Assignment: Buffer.from([9, 8]) },
  Heartbeat: { ThrottleTimeMs: 0, ErrorCode: 27 },
  LeaveGroup: { ThrottleTimeMs: 0, ErrorCode: 0, Members: [{ MemberId: 'm-1', GroupInstanceId: null, ErrorCode: 0 }] },
  OffsetCommit: { ThrottleTimeMs: 0, Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 0, ErrorCode: 0 }] }] },
  OffsetFetch: { ThrottleTimeMs: 0, Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 0, CommittedOffset: 42, CommittedLeaderEpoch: -1, Metadata: '', ErrorCode: 0 }] }], ErrorCode: 0 },
  DescribeConfigs: {
    ThrottleTimeMs: 0,
    Results: [
      {
        ErrorCode: 0,
        ErrorMessage: null,
        ResourceType: 2,
        ResourceName: 'orders',
        Configs: [
          { Name: 'min.insync.replicas', Value: '2', ReadOnly: false, ConfigSource: 1, IsSensitive: false, Synonyms: [{ Name: 'min.insync.replicas', Value: '2', Source: 1 }], ConfigType: 3, Documentation: null },
          { Name: 'flush.messages', Value: null, ReadOnly: false, ConfigSource: 5, IsSensitive: false, Synonyms: [], ConfigType: 5, Documentation: 'doc' },
        ],
      },
      { ErrorCode: 29, ErrorMessage: 'denied', ResourceType: 2, ResourceName: 'secret', Configs: [] },
    ],
  },
  DescribeCluster: {
    ThrottleTimeMs: 0,
    ErrorCode: 0,
    ErrorMessage: null,
    EndpointType: 1,
    ClusterId: 'c-1',
    ControllerId: 2,
    Brokers: [{ BrokerId: 1, Host: '127.0.0.1', Port: 9092, Rack: null, IsFenced: false }, { BrokerId: 2, Host: '127.0.0.1', Port: 9093, Rack: 'r1', IsFenced: true }],
    ClusterAuthorizedOperations: -2147483648,
  },
  SaslHandshake: { ErrorCode: 0, Mechanisms: ['PLAIN', 'SCRAM-SHA-512'] },
  CreatePartitions: { ThrottleTimeMs: 0, Results: [{ Name: 'scale', ErrorCode: 37, ErrorMessage: 'Topic already has 10000 partitions.' }] },
  SaslAuthenticate: { ErrorCode: 58, ErrorMessage: 'Authentication failed', AuthBytes: Buffer.alloc(0), SessionLifetimeMs: 3600000 },
  ElectLeaders: { ThrottleTimeMs: 0, ErrorCode: 0, ReplicaElectionResults: [{ Topic: 'orders', PartitionResult: [{ PartitionId: 0, ErrorCode: 84, ErrorMessage: 'not needed' }] }] },
  AlterPartitionReassignments: { ThrottleTimeMs: 0, AllowReplicationFactorChange: false, ErrorCode: 0, ErrorMessage: null, Responses: [{ Name: 'orders', Partitions: [{ PartitionIndex: 0, ErrorCode: 0, ErrorMessage: null }] }] },
};

/** First, last, last classic and first flexible version of an API. */
function edgeVersions(name: ApiName): number[] {
  const s = spec(name);
  return [...new Set([s.minVersion, Math.min(s.maxVersion, Math.max(s.minVersion, s.request.flexibleSince - 1)), Math.min(s.maxVersion, s.request.flexibleSince), s.maxVersion])].filter(
    (v) => v >= s.minVersion && v <= s.maxVersion,
  );
}

describe('Kafka protocol codec', () => {
  for (const name of Object.keys(REQUESTS) as ApiName[]) {
    for (const v of edgeVersions(name)) {
      it(`${name} v${v}: request and response survive a round trip`, () => {
        const s = spec(name);
        const frame = encodeRequest(s, v, 77, 'client-1', REQUESTS[name]);
        expect(frame.readInt32BE(0)).toBe(frame.length - 4);
        const req = decodeRequest(frame.subarray(4), (key) => [...API_VERSIONS, ...CLIENT_ONLY_APIS].find((a) => a.key === key));
        expect(req.header).toMatchObject({ apiKey: s.key, apiVersion: v, correlationId: 77, clientId: 'client-1' });
        // Re-encoding what was decoded gives the same bytes: nothing was lost or invented.
        expect(encodeRequest(s, v, 77, 'client-1', req.body).equals(frame)).toBe(true);

        const resp = encodeResponse(s, v, 77, RESPONSES[name]);
        const back = decodeResponse(s, v, resp.subarray(4));
        expect(back.correlationId).toBe(77);
        expect(encodeResponse(s, v, 77, back.body).equals(resp)).toBe(true);
      });
    }
  }

  it('keeps fields of the versions that have them and defaults the others', () => {
    const p = spec('Produce');
    const v8 = decodeResponse(p, 8, encodeResponse(p, 8, 1, { ...RESPONSES.Produce, Responses: [{ Name: 't', PartitionResponses: [{ Index: 0, ErrorCode: 19, BaseOffset: -1, ErrorMessage: 'isr too small' }] }] }).subarray(4));
    const part = (v8.body.Responses as Struct[])[0].PartitionResponses as Struct[];
    expect(part[0]).toMatchObject({ ErrorCode: 19, ErrorMessage: 'isr too small', LogAppendTimeMs: -1, LogStartOffset: -1 });
    const v7 = decodeResponse(p, 7, encodeResponse(p, 7, 1, { Responses: [{ Name: 't', PartitionResponses: [{ Index: 0, ErrorCode: 19, BaseOffset: -1, ErrorMessage: 'lost' }] }] }).subarray(4));
    expect(((v7.body.Responses as Struct[])[0].PartitionResponses as Struct[])[0].ErrorMessage).toBeNull();

    const m = spec('Metadata');
    const v1 = decodeRequest(encodeRequest(m, 1, 1, null, { Topics: null }).subarray(4));
    expect(v1.body.Topics).toBeNull();
    expect(v1.body.AllowAutoTopicCreation).toBe(true);
    expect(v1.header.clientId).toBeNull();
  });

  it('writes compact encodings and tagged fields only in flexible versions', () => {
    const f = spec('Fetch');
    const flexible = encodeResponse(f, 12, 5, RESPONSES.Fetch);
    const classic = encodeResponse(f, 11, 5, RESPONSES.Fetch);
    // v12 carries CurrentLeader as tag 1; v11 has no place for it.
    expect(decodeResponse(f, 12, flexible.subarray(4)).body.Responses).toMatchObject([{ Partitions: [{ CurrentLeader: { LeaderId: 2, LeaderEpoch: 5 } }] }]);
    expect(decodeResponse(f, 11, classic.subarray(4)).body.Responses).toMatchObject([{ Partitions: [{ CurrentLeader: null }] }]);
    // Response header v1 (a tagged-field byte after the correlation id) for flexible versions only.
    expect(responseHeaderVersion(f, 12)).toBe(1);
    expect(responseHeaderVersion(f, 11)).toBe(0);
    expect(flexible.readUInt8(8)).toBe(0);
  });

  it('answers ApiVersions with response header v0 even in its flexible version', () => {
    const a = spec('ApiVersions');
    expect(responseHeaderVersion(a, 3)).toBe(0);
    const resp = encodeResponse(a, 3, 9, RESPONSES.ApiVersions);
    // Right after the correlation id comes ErrorCode (int16 0), then the compact array length.
    expect(resp.readInt32BE(4)).toBe(9);
    expect(resp.readInt16BE(8)).toBe(0);
    expect(resp.readUInt8(10)).toBe(API_VERSIONS.length + 1);
    const back = decodeResponse(a, 3, resp.subarray(4)).body;
    expect(back.FinalizedFeaturesEpoch).toBe(5);
  });

  it('keeps the request header client id a classic string in header v2', () => {
    const frame = encodeRequest(spec('Metadata'), 12, 3, 'abc', { Topics: null });
    // size, key, version, correlation id, then int16 length 3 (not a compact uvarint 4).
    expect(frame.readInt16BE(12)).toBe(3);
    expect(frame.subarray(14, 17).toString()).toBe('abc');
  });

  it('skips unknown tagged fields and rejects them out of order', () => {
    const w = new Writer();
    w.taggedFields([
      [7, Buffer.from([1, 2, 3])],
      [9, Buffer.from([])],
    ]);
    const r = new Reader(w.finish(), 'test');
    const seen: number[] = [];
    r.taggedFields((tag) => seen.push(tag));
    expect(seen).toEqual([7, 9]);
    expect(r.remaining).toBe(0);
    const bad = Buffer.from([2, 5, 0, 3, 0]);
    expect(() => new Reader(bad, 'test').taggedFields()).toThrow(/tagged fields out of order: tag 3 after 5/);
  });

  it('names the API, version and field of a truncated request', () => {
    const p = spec('Produce');
    const frame = encodeRequest(p, 9, 1, 'c', REQUESTS.Produce).subarray(4);
    for (const cut of [frame.length - 1, frame.length - 20, 20]) {
      let err: unknown;
      try {
        decodeRequest(frame.subarray(0, cut));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProtocolError);
      expect((err as Error).message).toMatch(/^Produce v9 request: /);
      expect((err as Error).message).toMatch(/truncated/);
    }
    let err: Error | undefined;
    try {
      decodeRequest(frame.subarray(0, frame.length - 20));
    } catch (e) {
      err = e as Error;
    }
    expect(err!.message).toContain('TopicData.[0].PartitionData.[0].Records');
  });

  it('rejects impossible lengths, trailing bytes and out-of-range values', () => {
    const f = spec('Fetch');
    const frame = Buffer.from(encodeRequest(f, 4, 1, 'c', REQUESTS.Fetch).subarray(4));
    // Topics array count (after the header and 5 fixed fields) claims a million entries.
    const at = 2 + 2 + 4 + 2 + 1 + 4 + 4 + 4 + 4 + 1;
    frame.writeInt32BE(1_000_000, at);
    expect(() => decodeRequest(frame)).toThrow(/Fetch v4 request: Topics: truncated: array of 1000000 elements/);
    const extra = Buffer.concat([encodeRequest(f, 4, 1, 'c', REQUESTS.Fetch).subarray(4), Buffer.from([0])]);
    expect(() => decodeRequest(extra)).toThrow(/1 bytes left after the request body/);
    const bools = encodeRequest(spec('Metadata'), 4, 1, 'c', { Topics: [], AllowAutoTopicCreation: true }).subarray(4);
    bools[bools.length - 1] = 2;
    expect(() => decodeRequest(bools)).toThrow(/Metadata v4 request: AllowAutoTopicCreation: expected a boolean/);
  });
});
