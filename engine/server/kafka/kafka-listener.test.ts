// The Kafka listener of one real broker process, spoken to by real clients (kafkajs, kcat)
// and by hand-made bad frames: what is produced comes back byte-identical, the segments pass
// `durolab engine dump`, and a bad frame gets Kafka's error or a closed connection — never a
// crash or an appended batch.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDump } from '../../cli/dump-command.ts';
import { ATTRIBUTES_OFFSET, CRC_OFFSET, crc32c, encodeBatch } from '../../records/index.ts';
import { startBrokerProcess, tempDir, type BrokerProcess } from '../test-support.ts';
import { execa } from 'execa';
import { call, kafkajs, kcatConsume, kcatMetadata, kcatProduce, rawExchange, request, requireKcat, response } from './kafka-client-support.ts';
import type { Struct } from '../../protocol/schema.ts';

let broker: BrokerProcess;
let bootstrap = '';
let dir = '';

beforeAll(async () => {
  await requireKcat();
  dir = tempDir('kafka-listener');
  broker = await startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 'k:1', '--topic', 'kcat:1', '--topic', 'bad:1', '--topic', 'gz:1', '--set', 'socket.request.max.bytes=1048576']);
  bootstrap = broker.kafka;
  if (!bootstrap) throw new Error(`the broker's ready line names no Kafka address: ${broker.stderr()}`);
});

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function logEnd(topic: string): Promise<number> {
  const b = await call(bootstrap, 'ListOffsets', 7, { ReplicaId: -1, Topics: [{ Name: topic, Partitions: [{ PartitionIndex: 0, Timestamp: -1 }] }] });
  const p = ((b.Topics as Struct[])[0].Partitions as Struct[])[0];
  expect(p.ErrorCode).toBe(0);
  return p.Offset as number;
}

describe('Kafka listener on one broker', () => {
  it('serves kafkajs: produce with acks=all and consume back byte-identical (kcat)', async () => {
    const kafka = new kafkajs.Kafka({ clientId: 'durolab-test', brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const sent: Array<{ key: string; value: string }> = [];
    for (let b = 0; b < 10; b++) {
      const messages = Array.from({ length: 25 }, (_, i) => ({ key: `key-${b}-${i}`, value: `value ${b}/${i} ${'x'.repeat((b * 37 + i) % 300)} ünïcødé` }));
      const r = await producer.send({ topic: 'k', acks: -1, messages: messages.map((m) => ({ ...m, partition: 0 })) });
      expect(r[0].errorCode).toBe(0);
      expect(Number(r[0].baseOffset)).toBe(b * 25);
      sent.push(...messages);
    }
    await producer.disconnect();
    const got = await kcatConsume(bootstrap, 'k', 0);
    expect(got.map((m) => m.offset)).toEqual(sent.map((_, i) => i));
    expect(got.map((m) => ({ key: m.key, value: m.payload }))).toEqual(sent);
    // kafkajs admin reads offsets through ListOffsets.
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets('k');
    await admin.disconnect();
    expect(offsets).toEqual([{ partition: 0, offset: '250', high: '250', low: '0' }]);
  });

  it('serves kcat: 1,000 messages produced with acks=all come back in order', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `kcat message ${i} ${i.toString(36).repeat(i % 20)}`);
    await kcatProduce(bootstrap, 'kcat', 0, lines);
    const got = await kcatConsume(bootstrap, 'kcat', 0);
    expect(got.map((m) => m.payload)).toEqual(lines);
    expect(got.map((m) => m.offset)).toEqual(lines.map((_, i) => i));
    const md = await kcatMetadata(bootstrap);
    expect(md.brokers).toEqual([{ id: 1, name: bootstrap }]);
    expect(md.topics.find((t) => t.topic === 'kcat')?.partitions).toEqual([{ partition: 0, leader: 1, replicas: [{ id: 1 }], isrs: [{ id: 1 }] }]);
  });

  it('answers bad frames with Kafka errors or a closed connection, appends nothing and keeps serving', async () => {
    const before = await logEnd('bad');
    // Frame size beyond socket.request.max.bytes (1 MiB here) or negative: closed at once.
    for (const size of [0x7fffffff, 1048577, -5]) {
      const b = Buffer.alloc(8);
      b.writeInt32BE(size, 0);
      expect(await rawExchange(bootstrap, b, 1)).toEqual({ frames: [], closed: true });
    }
    // Unknown API key: closed (Kafka does the same).
    const unknown = request('ApiVersions', 0, 5, {});
    unknown.writeInt16BE(999, 4);
    expect((await rawExchange(bootstrap, unknown, 1)).closed).toBe(true);
    // An unsupported Produce version: closed; an unsupported ApiVersions: v0 answer, UNSUPPORTED_VERSION, the list.
    const oldProduce = request('Produce', 3, 6, { Acks: -1, TimeoutMs: 1000, TopicData: [] });
    oldProduce.writeInt16BE(2, 6);
    expect((await rawExchange(bootstrap, oldProduce, 1)).closed).toBe(true);
    const newApiVersions = request('ApiVersions', 0, 7, {});
    newApiVersions.writeInt16BE(99, 6);
    const av = await rawExchange(bootstrap, newApiVersions, 1);
    const avBody = response('ApiVersions', 0, av.frames[0]).body;
    expect(avBody.ErrorCode).toBe(35);
    expect((avBody.ApiKeys as Struct[]).map((k) => k.ApiKey)).toEqual([0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 19, 22, 32, 43, 45, 60]);
    // Truncated fields: the frame length is honest but the body ends mid-field.
    const batch = encodeBatch({ records: [{ value: Buffer.from('never appended') }] });
    const good = request('Produce', 9, 8, { TransactionalId: null, Acks: -1, TimeoutMs: 1000, TopicData: [{ Name: 'bad', PartitionData: [{ Index: 0, Records: batch }] }] });
    const truncated = Buffer.from(good.subarray(0, good.length - 30));
    truncated.writeInt32BE(truncated.length - 4, 0);
    expect((await rawExchange(bootstrap, truncated, 1)).closed).toBe(true);
    // A batch whose CRC does not match: CORRUPT_MESSAGE, nothing appended, connection kept.
    const corrupt = Buffer.from(good);
    corrupt[corrupt.indexOf('never appended') + 3] ^= 0xff;
    const answer = await rawExchange(bootstrap, Buffer.concat([corrupt, request('ApiVersions', 3, 9, { ClientSoftwareName: 't', ClientSoftwareVersion: '1' })]), 2);
    expect(answer.frames).toHaveLength(2);
    const pr = response('Produce', 9, answer.frames[0]);
    expect(pr.correlationId).toBe(8);
    expect(((pr.body.Responses as Struct[])[0].PartitionResponses as Struct[])[0]).toMatchObject({ ErrorCode: 2, BaseOffset: -1 });
    expect(response('ApiVersions', 3, answer.frames[1]).correlationId).toBe(9);
    expect(await logEnd('bad')).toBe(before);
    // A well-formed batch claiming gzip (the engine stores uncompressed batches only).
    const gzip = Buffer.from(batch);
    gzip.writeInt16BE(gzip.readInt16BE(ATTRIBUTES_OFFSET) | 1, ATTRIBUTES_OFFSET);
    gzip.writeUInt32BE(crc32c(gzip.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
    const gz = await call(bootstrap, 'Produce', 9, { TransactionalId: null, Acks: -1, TimeoutMs: 1000, TopicData: [{ Name: 'bad', PartitionData: [{ Index: 0, Records: gzip }] }] });
    expect(((gz.Responses as Struct[])[0].PartitionResponses as Struct[])[0]).toMatchObject({ ErrorCode: 76, BaseOffset: -1 });
    expect(await logEnd('bad')).toBe(before);
    // Still serving: the honest request appends.
    const ok = response('Produce', 9, (await rawExchange(bootstrap, good, 1)).frames[0]).body;
    expect(((ok.Responses as Struct[])[0].PartitionResponses as Struct[])[0]).toMatchObject({ ErrorCode: 0, BaseOffset: before });
  });

  it("reads librdkafka's all-topics Metadata v12 (a 4-byte null placeholder, librdkafka #5049) and answers every topic; other trailing bytes still close", async () => {
    const proper = request('Metadata', 12, 7, { Topics: null, AllowAutoTopicCreation: false, IncludeTopicAuthorizedOperations: false });
    // Header v2 (size, key, version, correlation id, client id 'durolab-test', no tags), then the
    // body: librdkafka writes 00 00 00 00 where the 1-byte null varint belongs.
    const bodyAt = 4 + 2 + 2 + 4 + 2 + 'durolab-test'.length + 1;
    expect(proper[bodyAt]).toBe(0);
    const quirk = Buffer.concat([proper.subarray(0, bodyAt), Buffer.alloc(3), proper.subarray(bodyAt)]);
    quirk.writeInt32BE(quirk.length - 4, 0);
    const a = await rawExchange(bootstrap, quirk, 1);
    expect(a.frames).toHaveLength(1);
    const topics = (response('Metadata', 12, a.frames[0]).body.Topics as Struct[]).map((t) => t.Name).sort();
    expect(topics).toEqual(expect.arrayContaining(['bad', 'gz', 'k', 'kcat']));
    // Three stray bytes after a Metadata request naming a topic are not that quirk.
    const named = request('Metadata', 12, 8, { Topics: [{ TopicId: Buffer.alloc(16), Name: 'k' }], AllowAutoTopicCreation: false, IncludeTopicAuthorizedOperations: false });
    const stray = Buffer.concat([named, Buffer.alloc(3)]);
    stray.writeInt32BE(stray.length - 4, 0);
    const b = await rawExchange(bootstrap, stray, 1);
    expect(b).toMatchObject({ frames: [], closed: true });
  });

  it('answers pipelined requests in order, and none for acks=0', async () => {
    const frames: Buffer[] = [];
    for (let i = 0; i < 20; i++) {
      const acks = i % 5 === 4 ? 0 : -1;
      frames.push(request('Produce', 7, 100 + i, { Acks: acks, TimeoutMs: 5000, TopicData: [{ Name: 'bad', PartitionData: [{ Index: 0, Records: encodeBatch({ records: [{ value: Buffer.from(`p${i}`) }] }) }] }] }));
    }
    const a = await rawExchange(bootstrap, Buffer.concat(frames), 16);
    expect(a.frames.map((f) => f.readInt32BE(0))).toEqual(frames.map((_, i) => 100 + i).filter((c) => (c - 100) % 5 !== 4));
    const offsets = a.frames.map((f) => (((response('Produce', 7, f).body.Responses as Struct[])[0].PartitionResponses as Struct[])[0].BaseOffset as number));
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
  });

  it('refuses compressed batches UNSUPPORTED_COMPRESSION_TYPE and accepts uncompressed ones (kcat -z gzip)', async () => {
    // ApiVersions lists Produce from v0 as Kafka 4 does (KAFKA-18659): librdkafka compresses only
    // when the broker lists Produce v0; otherwise it silently sends gzip batches uncompressed.
    const av = await call(bootstrap, 'ApiVersions', 3, { ClientSoftwareName: 't', ClientSoftwareVersion: '1' });
    expect((av.ApiKeys as Struct[]).find((k) => k.ApiKey === 0)).toMatchObject({ MinVersion: 0, MaxVersion: 9 });
    // ...but a Produce v2 request is still refused (closed connection, like any unsupported version).
    const v3 = request('Produce', 3, 9, { TransactionalId: null, Acks: -1, TimeoutMs: 5000, TopicData: [{ Name: 'gz', PartitionData: [{ Index: 0, Records: encodeBatch({ records: [{ value: Buffer.from('v2') }] }) }] }] });
    v3.writeInt16BE(2, 6);
    expect(await rawExchange(bootstrap, v3, 1)).toMatchObject({ frames: [], closed: true });

    // 500 compressible messages: librdkafka gzips the batch, the broker refuses it, kcat fails.
    const lines = Array.from({ length: 500 }, (_, i) => `compressible ${'x'.repeat(60)} ${i}`);
    const gz = await execa('kcat', ['-b', bootstrap, '-P', '-t', 'gz', '-p', '0', '-z', 'gzip', '-X', 'acks=all', '-X', 'retries=0', '-X', 'message.timeout.ms=10000', '-d', 'msg'], {
      input: `${lines.join('\n')}\n`,
      timeout: 60_000,
      reject: false,
    });
    expect(gz.stderr).toMatch(/Produce MessageSet with \d+ message\(s\) \(\d+ bytes, .*gzip\)/);
    expect(gz.stderr).toContain('Unsupported compression type');
    expect(gz.exitCode).not.toBe(0);
    expect(await logEnd('gz')).toBe(0);

    // A hand-made gzip-flagged batch (attributes codec 1, valid CRC): Kafka's error, nothing appended.
    const batch = Buffer.from(encodeBatch({ records: [{ value: Buffer.from('gz') }] }));
    batch.writeInt16BE(1, ATTRIBUTES_OFFSET);
    batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
    const r = await call(bootstrap, 'Produce', 9, { TransactionalId: null, Acks: -1, TimeoutMs: 5000, TopicData: [{ Name: 'gz', PartitionData: [{ Index: 0, Records: batch }] }] });
    expect(((r.Responses as Struct[])[0].PartitionResponses as Struct[])[0]).toMatchObject({ ErrorCode: 76, BaseOffset: -1 });
    expect(await logEnd('gz')).toBe(0);

    // Three short messages: gzip would not shrink them, librdkafka sends them uncompressed, accepted.
    await kcatProduce(bootstrap, 'gz', 0, ['a', 'b', 'c'], ['-z', 'gzip']);
    expect((await kcatConsume(bootstrap, 'gz', 0)).map((m) => m.payload)).toEqual(['a', 'b', 'c']);
  });

  it('answers the admin APIs a Kafka admin tool sends: DescribeConfigs, DescribeCluster, a planned move, each refusal by Kafka\'s name', async () => {
    const dc = await call(bootstrap, 'DescribeConfigs', 4, {
      Resources: [
        { ResourceType: 2, ResourceName: 'k', ConfigurationKeys: ['min.insync.replicas', 'flush.messages', 'durolab.io'] },
        { ResourceType: 4, ResourceName: '1', ConfigurationKeys: ['log.flush.interval.messages'] },
        { ResourceType: 4, ResourceName: '9', ConfigurationKeys: null },
        { ResourceType: 2, ResourceName: 'nope', ConfigurationKeys: null },
        { ResourceType: 3, ResourceName: 'g', ConfigurationKeys: null },
      ],
      IncludeSynonyms: false,
      IncludeDocumentation: false,
    });
    const results = dc.Results as Struct[];
    expect(results.map((r) => r.ErrorCode)).toEqual([0, 0, 42, 3, 42]);
    expect(Object.fromEntries((results[0].Configs as Struct[]).map((c) => [c.Name, c.Value]))).toEqual({ 'min.insync.replicas': '1', 'flush.messages': '9223372036854775807', 'durolab.io': 'buffered' });
    expect((results[1].Configs as Struct[]).map((c) => [c.Name, c.Value, c.ConfigSource])).toEqual([['log.flush.interval.messages', '9223372036854775807', 4]]);
    expect(results[2].ErrorMessage).toContain('broker resource "9" sent to broker 1');
    const cluster = await call(bootstrap, 'DescribeCluster', 1, { IncludeClusterAuthorizedOperations: false, EndpointType: 1 });
    expect(cluster).toMatchObject({ ErrorCode: 0, ClusterId: 'durolab', ControllerId: 1 });
    expect((cluster.Brokers as Struct[]).map((b) => `${b.BrokerId}@${b.Host}:${b.Port}`)).toEqual([`1@${bootstrap}`]);
    // One replica: nothing to move to. A new replica set is refused (durolab moves no data); null cancels nothing.
    const elect = await call(bootstrap, 'ElectLeaders', 2, { ElectionType: 0, TopicPartitions: [{ Topic: 'k', Partitions: [0] }], TimeoutMs: 1000 });
    expect(((elect.ReplicaElectionResults as Struct[])[0].PartitionResult as Struct[])[0]).toMatchObject({ PartitionId: 0, ErrorCode: 84 });
    const unclean = await call(bootstrap, 'ElectLeaders', 2, { ElectionType: 1, TopicPartitions: [{ Topic: 'k', Partitions: [0] }], TimeoutMs: 1000 });
    expect(((unclean.ReplicaElectionResults as Struct[])[0].PartitionResult as Struct[])[0]).toMatchObject({ ErrorCode: 42 });
    const reassign = await call(bootstrap, 'AlterPartitionReassignments', 0, {
      TimeoutMs: 1000,
      Topics: [{ Name: 'k', Partitions: [{ PartitionIndex: 0, Replicas: [1, 2] }, { PartitionIndex: 0, Replicas: null }] }],
    });
    expect(((reassign.Responses as Struct[])[0].Partitions as Struct[]).map((p) => p.ErrorCode)).toEqual([39, 85]);
  });

  it('leaves segments that pass durolab engine dump after a clean shutdown', async () => {
    broker.kill('SIGTERM');
    await broker.exited;
    for (const [topic, records] of [
      ['k', 250],
      ['kcat', 1000],
    ] as const) {
      const dump = runDump({ dir: path.join(dir, `${topic}-0`) });
      expect(dump.totals.records).toBe(records);
      expect(dump.totals.invalidBatches).toBe(0);
      for (const s of dump.segments) expect(s.stoppedAt).toBeNull();
    }
  });
});
