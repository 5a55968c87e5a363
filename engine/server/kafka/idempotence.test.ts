// Idempotent producers against a real broker process: InitProducerId hands out a new id per call
// (no transactional id, as Kafka); the leader answers a retried batch NONE with its first offset (appending nothing), as
// Kafka's UnifiedLog does, a gap OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch INVALID_PRODUCER_EPOCH,
// and still knows all of it after a SIGKILL and restart (rebuilt from the log). librdkafka
// (kcat, enable.idempotence=true) produces through it.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDump } from '../../cli/dump-command.ts';
import { encodeBatch } from '../../records/index.ts';
import type { Struct } from '../../protocol/schema.ts';
import { startBrokerProcess, tempDir, type BrokerProcess } from '../test-support.ts';
import { request as httpRequest } from '../http-client.ts';
import { call, kafkajs, kcatConsume, kcatProduce, requireKcat } from './kafka-client-support.ts';
import { startLostAnswerProxy } from './lost-answer-proxy.ts';

let broker: BrokerProcess;
let dir = '';
const args = (): string[] => ['--id', '2', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 'idem:1', '--topic', 'rdkafka:1', '--topic', 'dupjs:1', '--topic', 'duprd:1'];

beforeAll(async () => {
  await requireKcat();
  dir = tempDir('kafka-idempotence');
  broker = await startBrokerProcess(args());
});

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function batch(producerId: number, producerEpoch: number, baseSequence: number, values: string[]): Buffer {
  return encodeBatch({ producerId, producerEpoch, baseSequence, records: values.map((v) => ({ value: Buffer.from(v) })) });
}

async function produce(records: Buffer): Promise<Struct> {
  const b = await call(broker.kafka, 'Produce', 9, { TransactionalId: null, Acks: -1, TimeoutMs: 5000, TopicData: [{ Name: 'idem', PartitionData: [{ Index: 0, Records: records }] }] });
  return ((b.Responses as Struct[])[0].PartitionResponses as Struct[])[0];
}

describe('idempotent producers over the Kafka protocol', () => {
  it('hands out producer ids, fences bumped epochs, and answers duplicates, gaps and fenced epochs like Kafka', async () => {
    const init = await call(broker.kafka, 'InitProducerId', 4, { TransactionalId: null, TransactionTimeoutMs: 60_000, ProducerId: -1, ProducerEpoch: -1 });
    expect(init.ErrorCode).toBe(0);
    const pid = init.ProducerId as number;
    expect(pid).toBeGreaterThan(0);
    expect(init.ProducerEpoch).toBe(0);
    const other = await call(broker.kafka, 'InitProducerId', 0, { TransactionalId: null, TransactionTimeoutMs: 60_000 });
    expect(other.ProducerId).not.toBe(pid);

    expect(await produce(batch(pid, 0, 0, ['a0', 'a1', 'a2']))).toMatchObject({ ErrorCode: 0, BaseOffset: 0 });
    expect(await produce(batch(pid, 0, 3, ['a3', 'a4']))).toMatchObject({ ErrorCode: 0, BaseOffset: 3 });
    // A retry of the first batch: no error, its original offset, nothing appended (Kafka's answer).
    expect(await produce(batch(pid, 0, 0, ['a0', 'a1', 'a2']))).toMatchObject({ ErrorCode: 0, BaseOffset: 0 });
    // A gap (sequence 9 after 4).
    expect(await produce(batch(pid, 0, 9, ['gap']))).toMatchObject({ ErrorCode: 45, BaseOffset: -1 });
    expect(await produce(batch(pid, 0, 5, ['a5']))).toMatchObject({ ErrorCode: 0, BaseOffset: 5 });

    // Without a transactional id, InitProducerId always hands out a new id at epoch 0, even when
    // the request names an existing id and epoch (Kafka's coordinator; clients that send 0/0
    // must not share an id).
    const again = await call(broker.kafka, 'InitProducerId', 4, { TransactionalId: null, TransactionTimeoutMs: 60_000, ProducerId: pid, ProducerEpoch: 0 });
    expect(again).toMatchObject({ ErrorCode: 0, ProducerEpoch: 0 });
    expect(again.ProducerId).not.toBe(pid);
    const zeros = await call(broker.kafka, 'InitProducerId', 4, { TransactionalId: null, TransactionTimeoutMs: 60_000, ProducerId: 0, ProducerEpoch: 0 });
    expect(zeros.ProducerId).not.toBe(0);
    expect(zeros.ProducerId).not.toBe(again.ProducerId);
    // A producer that bumps its own epoch (KIP-360) restarts its sequences at 0 and fences the old epoch.
    expect(await produce(batch(pid, 1, 4, ['b']))).toMatchObject({ ErrorCode: 45 });
    expect(await produce(batch(pid, 1, 0, ['b0']))).toMatchObject({ ErrorCode: 0, BaseOffset: 6 });
    expect(await produce(batch(pid, 0, 6, ['late']))).toMatchObject({ ErrorCode: 47 });

    // Only the 7 accepted records are in the log.
    const got = await kcatConsume(broker.kafka, 'idem', 0);
    expect(got.map((m) => m.payload)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0']);

    // After a crash and restart the state is rebuilt from the log.
    broker.kill('SIGKILL');
    await broker.exited;
    broker = await startBrokerProcess(args());
    expect(await produce(batch(pid, 1, 0, ['b0']))).toMatchObject({ ErrorCode: 0, BaseOffset: 6 });
    expect(await produce(batch(pid, 1, 2, ['b2']))).toMatchObject({ ErrorCode: 45 });
    expect(await produce(batch(pid, 1, 1, ['b1']))).toMatchObject({ ErrorCode: 0, BaseOffset: 7 });
  });

  it('serves librdkafka with enable.idempotence=true (kcat, 1,000 messages)', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `idempotent ${i}`);
    await kcatProduce(broker.kafka, 'rdkafka', 0, lines, ['-X', 'enable.idempotence=true']);
    const got = await kcatConsume(broker.kafka, 'rdkafka', 0);
    expect(got.map((m) => m.payload)).toEqual(lines);
    // The batches on disk carry librdkafka's producer id and consecutive sequences.
    const batches = runDump({ dir: path.join(dir, 'rdkafka-0') }).segments.flatMap((s) => s.batches);
    expect(batches.length).toBeGreaterThan(0);
    let next = 0;
    for (const b of batches) {
      expect(b.producerId).toBeGreaterThan(0);
      expect(b.baseSequence).toBe(next);
      next += b.lastOffset - b.baseOffset + 1;
    }
  });

  it('a retried batch whose answer was lost is appended once and acknowledged with its original offset (kafkajs, librdkafka)', async () => {
    const duplicates = async (): Promise<number> =>
      (JSON.parse((await httpRequest(`${broker.url}/v1/metrics`, { timeoutMs: 5000 })).body.toString('utf8')) as { kafka: { duplicateBatches: number } }).kafka.duplicateBatches;
    const before = await duplicates();

    // kafkajs, idempotent: the first Produce answer is lost with its connection; kafkajs resends
    // the same batch (same producer id, epoch, sequence) and hears NONE with the first offset.
    const proxy = await startLostAnswerProxy(broker.kafka, 1);
    const kafka = new kafkajs.Kafka({ clientId: 'dup-test', brokers: [proxy.address], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 50 } });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    const first = await producer.send({ topic: 'dupjs', acks: -1, messages: ['j0', 'j1', 'j2'].map((value) => ({ value, partition: 0 })) });
    const second = await producer.send({ topic: 'dupjs', acks: -1, messages: [{ value: 'j3', partition: 0 }] });
    await producer.disconnect();
    await proxy.close();
    expect(proxy.lost()).toBe(1);
    expect(first[0]).toMatchObject({ errorCode: 0, baseOffset: '0' });
    expect(second[0]).toMatchObject({ errorCode: 0, baseOffset: '3' });
    expect((await kcatConsume(broker.kafka, 'dupjs', 0)).map((m) => m.payload)).toEqual(['j0', 'j1', 'j2', 'j3']);
    const afterJs = await duplicates();
    expect(afterJs).toBe(before + 1);

    // librdkafka (kcat, enable.idempotence=true; -E: a lost connection to the only broker is not fatal
    // to kcat): the same through librdkafka's own retry path.
    const proxy2 = await startLostAnswerProxy(broker.kafka, 1);
    const lines = Array.from({ length: 200 }, (_, i) => `rd ${i}`);
    await kcatProduce(proxy2.address, 'duprd', 0, lines, ['-E', '-X', 'enable.idempotence=true', '-X', 'retry.backoff.ms=50']);
    await proxy2.close();
    expect(proxy2.lost()).toBe(1);
    expect((await kcatConsume(broker.kafka, 'duprd', 0)).map((m) => m.payload)).toEqual(lines);
    expect(await duplicates()).toBe(afterJs + 1);
  });
});
