// Consumer groups through @platformatic/kafka, which speaks only the flexible versions of the
// group APIs and names topics by id in Fetch: FindCoordinator v4 (batched keys), JoinGroup v6,
// SyncGroup, Heartbeat and LeaveGroup v4, OffsetCommit v8, OffsetFetch v8 (batched groups),
// Fetch v13 (topic ids). Two members of one group on one broker read everything produced,
// byte-identical, each partition in offset order; the versions each request went out with are
// read from the client's own diagnostics channel; the committed offsets (OffsetFetch v8 through
// the client's admin) are the log ends. And what a Fetch v13 with an unknown topic id and a
// FindCoordinator v4 of several keys get, on the wire.
import diagnostics from 'node:diagnostics_channel';
import { rmSync } from 'node:fs';
import { Admin, Consumer, MessagesStreamFallbackModes, MessagesStreamModes, Producer } from '@platformatic/kafka';
import { afterAll, describe, expect, it } from 'vitest';
import { startBrokerProcess, tempDir, waitFor, type BrokerProcess } from '../test-support.ts';
import { call } from './kafka-client-support.ts';
import { topicId } from './handlers.ts';
import { kafkaErrorCode } from '../../protocol/error-codes.ts';

const TOPIC = 'flex';
const PARTITIONS = 3;
const RECORDS = 900;

/** API key -> versions the client sent (diagnostics channel plt:kafka:connections:api). */
const sent = new Map<number, Set<number>>();
diagnostics.tracingChannel('plt:kafka:connections:api').subscribe({
  start(ctx: { apiKey?: number; apiVersion?: number }) {
    if (typeof ctx.apiKey === 'number' && typeof ctx.apiVersion === 'number') (sent.get(ctx.apiKey) ?? sent.set(ctx.apiKey, new Set()).get(ctx.apiKey)!).add(ctx.apiVersion);
  },
  end() {},
  asyncStart() {},
  asyncEnd() {},
  error() {},
} as unknown as Parameters<ReturnType<typeof diagnostics.tracingChannel>['subscribe']>[0]);

let broker: BrokerProcess | undefined;
const dirs: string[] = [];
afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('consumer groups through @platformatic/kafka (flexible group API versions, Fetch by topic id)', () => {
  it('two members split the partitions, read everything in order, commit the log ends', async () => {
    const dir = tempDir('kafka-group-flex');
    dirs.push(dir);
    broker = await startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', `${TOPIC}:${PARTITIONS}`]);
    const bootstrap = [broker.kafka];
    const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({ clientId: 'flex-p', bootstrapBrokers: bootstrap, acks: -1, producerId: -1n, producerEpoch: -1, autocreateTopics: false });
    const values = Array.from({ length: RECORDS }, (_, i) => `record ${i} ${'é'.repeat(i % 40)}`);
    for (let i = 0; i < RECORDS; i += 100) {
      await producer.send({ messages: values.slice(i, i + 100).map((v, j) => ({ topic: TOPIC, partition: (i + j) % PARTITIONS, key: Buffer.from(`k${i + j}`), value: Buffer.from(v) })) });
    }
    await producer.close();

    const reads: Array<{ member: number; partition: number; offset: number; key: string; value: string }> = [];
    const assigned: number[][] = [[], []];
    const members = [0, 1].map((m) => {
      const c = new Consumer<Buffer, Buffer, Buffer, Buffer>({ clientId: `flex-c${m}`, groupId: 'flex-group', bootstrapBrokers: bootstrap, sessionTimeout: 10_000, heartbeatInterval: 500, rebalanceTimeout: 10_000, maxWaitTime: 100, autocommit: 200 });
      c.on('consumer:group:join', (e: { assignments?: Array<{ topic: string; partitions: number[] }> }) => {
        assigned[m] = (e.assignments ?? []).flatMap((a) => a.partitions);
      });
      return c;
    });
    const streams = await Promise.all(
      members.map(async (c, m) => {
        const s = await c.consume({ topics: [TOPIC], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST });
        s.on('data', (msg) => reads.push({ member: m, partition: msg.partition, offset: Number(msg.offset), key: msg.key.toString(), value: msg.value.toString() }));
        return s;
      }),
    );
    await waitFor('both members read every record', async () => new Set(reads.map((r) => r.key)).size >= RECORDS, 30_000);
    await waitFor('the partitions split between the members', async () => assigned[0]!.length > 0 && assigned[1]!.length > 0, 15_000);
    // Let an autocommit of the last positions go out before the members leave.
    await new Promise((r) => setTimeout(r, 600));
    for (const s of streams) await s.close();
    for (const c of members) await new Promise<void>((resolve) => c.close(true, () => resolve()));

    // Byte-identical, nothing lost or invented; each partition in offset order without holes.
    const byKey = new Map(values.map((v, i) => [`k${i}`, v]));
    for (const r of reads) expect(r.value).toBe(byKey.get(r.key));
    expect(new Set(reads.map((r) => r.key)).size).toBe(RECORDS);
    for (let p = 0; p < PARTITIONS; p++) {
      const offsets = [...new Set(reads.filter((r) => r.partition === p).map((r) => r.offset))].sort((a, b) => a - b);
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    expect([...assigned[0]!, ...assigned[1]!].sort()).toEqual([0, 1, 2]);

    // The committed offsets are the log ends (OffsetFetch v8 through the admin client).
    const admin = new Admin({ clientId: 'flex-a', bootstrapBrokers: bootstrap });
    const committed = await admin.listConsumerGroupOffsets({ groups: ['flex-group'] });
    await admin.close();
    const ends = [0, 1, 2].map((p) => Math.ceil((RECORDS - p) / PARTITIONS));
    const byPartition = new Map(committed[0]!.topics[0]!.partitions.map((p: { partitionIndex: number; committedOffset: bigint }) => [p.partitionIndex, Number(p.committedOffset)]));
    expect([0, 1, 2].map((p) => byPartition.get(p))).toEqual(ends);

    // The flexible versions were the ones that went out (ApiVersions key 18 aside).
    const versions = (key: number) => [...(sent.get(key) ?? [])].sort();
    expect(versions(10)).toEqual([4]); // FindCoordinator
    expect(versions(11)).toEqual([6]); // JoinGroup
    expect(versions(14)).toEqual([4]); // SyncGroup
    expect(versions(12)).toEqual([4]); // Heartbeat
    expect(versions(8)).toEqual([8]); // OffsetCommit
    expect(versions(9)).toEqual([8]); // OffsetFetch
    expect(versions(1)).toEqual([13]); // Fetch, by topic id
  }, 60_000);

  it('on the wire: Fetch v13 of an unknown topic id gets UNKNOWN_TOPIC_ID, of a known one its records; FindCoordinator v4 answers every key', async () => {
    const address = broker!.kafka;
    const fetchOf = (id: Buffer) =>
      call(address, 'Fetch', 13, {
        ReplicaId: -1,
        MaxWaitMs: 0,
        MinBytes: 1,
        MaxBytes: 1 << 20,
        IsolationLevel: 0,
        SessionId: 0,
        SessionEpoch: -1,
        Topics: [{ TopicId: id, Partitions: [{ Partition: 0, CurrentLeaderEpoch: -1, FetchOffset: 0, LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: 1 << 20 }] }],
        ForgottenTopicsData: [],
        RackId: '',
      });
    const unknown = (await fetchOf(Buffer.alloc(16, 7))) as { Responses: Array<{ TopicId: Buffer; Partitions: Array<{ ErrorCode: number }> }> };
    expect(unknown.Responses[0]!.TopicId).toEqual(Buffer.alloc(16, 7));
    expect(unknown.Responses[0]!.Partitions[0]!.ErrorCode).toBe(kafkaErrorCode('UNKNOWN_TOPIC_ID'));
    const known = (await fetchOf(topicId(TOPIC))) as { Responses: Array<{ Partitions: Array<{ ErrorCode: number; HighWatermark: number; Records: Buffer }> }> };
    expect(known.Responses[0]!.Partitions[0]).toMatchObject({ ErrorCode: 0, HighWatermark: RECORDS / PARTITIONS });
    expect(known.Responses[0]!.Partitions[0]!.Records.length).toBeGreaterThan(0);
    const coordinators = (await call(address, 'FindCoordinator', 4, { KeyType: 0, CoordinatorKeys: ['a', 'b'] })) as { Coordinators: Array<{ Key: string; NodeId: number; ErrorCode: number }> };
    expect(coordinators.Coordinators.map((c) => [c.Key, c.NodeId, c.ErrorCode])).toEqual([
      ['a', 1, 0],
      ['b', 1, 0],
    ]);
  });
});
