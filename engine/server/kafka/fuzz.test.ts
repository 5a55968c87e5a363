// Seeded fuzzing of the Kafka listener: valid request frames of every supported API, mutated
// (bytes flipped, frames cut or extended, size prefixes changed), each sent on its own
// connection to a live broker process. Whatever comes back (an answer, Kafka's error, a closed
// connection), the broker keeps serving, never fails internally, and its log holds only whole,
// valid batches that were sent unmutated.
import { rmSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDump } from '../../cli/dump-command.ts';
import { encodeBatch } from '../../records/index.ts';
import { request as httpRequest } from '../http-client.ts';
import { startBrokerProcess, tempDir, type BrokerProcess } from '../test-support.ts';
import { call, kcatConsume, rawExchange, request, requireKcat } from './kafka-client-support.ts';

const RUNS = Number(process.env.DUROLAB_FUZZ_RUNS ?? 3000);
const TIME_LIMIT_MS = Number(process.env.DUROLAB_FUZZ_MS ?? 30_000);
let broker: BrokerProcess;
let dir = '';

beforeAll(async () => {
  await requireKcat();
  dir = tempDir('kafka-fuzz');
  broker = await startBrokerProcess(['--id', '3', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 'fz:1', '--set', 'socket.request.max.bytes=65536']);
});

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const VALID_VALUES = new Set<string>();
function batchOf(tag: string): Buffer {
  const values = [0, 1, 2].map((i) => `fuzz ${tag} record ${i}`);
  for (const v of values) VALID_VALUES.add(v);
  return encodeBatch({ producerId: 77, producerEpoch: 0, baseSequence: -1, records: values.map((v) => ({ key: Buffer.from(tag), value: Buffer.from(v) })) });
}

function seeds(): Buffer[] {
  const produce = (v: number, acks: number): Buffer =>
    request('Produce', v, 1, { TransactionalId: null, Acks: acks, TimeoutMs: 1000, TopicData: [{ Name: 'fz', PartitionData: [{ Index: 0, Records: batchOf(`p${v}a${acks}`) }] }] });
  return [
    produce(3, -1),
    produce(7, 1),
    produce(9, -1),
    produce(9, 0),
    request('Fetch', 12, 2, { ReplicaId: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: 65536, SessionEpoch: -1, Topics: [{ Topic: 'fz', Partitions: [{ Partition: 0, FetchOffset: 0, PartitionMaxBytes: 65536 }] }], ForgottenTopicsData: [], RackId: '' }),
    request('Fetch', 4, 3, { ReplicaId: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: 65536, Topics: [{ Topic: 'fz', Partitions: [{ Partition: 0, FetchOffset: 0, PartitionMaxBytes: 65536 }] }] }),
    request('Metadata', 12, 4, { Topics: null, AllowAutoTopicCreation: false }),
    request('Metadata', 1, 5, { Topics: [{ Name: 'fz' }] }),
    request('ListOffsets', 7, 6, { ReplicaId: -1, Topics: [{ Name: 'fz', Partitions: [{ PartitionIndex: 0, Timestamp: -1 }] }] }),
    request('ApiVersions', 3, 7, { ClientSoftwareName: 'fuzz', ClientSoftwareVersion: '1' }),
    request('InitProducerId', 4, 8, { TransactionalId: null, TransactionTimeoutMs: 1000, ProducerId: -1, ProducerEpoch: -1 }),
  ];
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.constantFrom(0x00, 0x7f, 0x80, 0xff) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('grow' as const), extra: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('size' as const), size: fc.oneof(fc.integer({ min: -10, max: 200 }), fc.constantFrom(-1, 65537, 0x7fffffff)) }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(frame: Buffer, muts: Mutation[]): Buffer {
  let b = Buffer.from(frame);
  for (const m of muts) {
    switch (m.kind) {
      case 'flip':
        b[4 + (m.at % Math.max(1, b.length - 4))] ^= m.xor;
        break;
      case 'set':
        b[4 + (m.at % Math.max(1, b.length - 4))] = m.byte;
        break;
      case 'cut': {
        b = b.subarray(0, 4 + (m.at % Math.max(1, b.length - 4)));
        b.writeInt32BE(b.length - 4, 0);
        break;
      }
      case 'grow':
        b = Buffer.concat([b, m.extra]);
        b.writeInt32BE(b.length - 4, 0);
        break;
      case 'size':
        b.writeInt32BE(m.size, 0);
        break;
    }
  }
  return b;
}

describe('Kafka listener fuzzing', () => {
  it(`survives up to ${RUNS} mutated request frames (at least ${Math.floor(RUNS / 3)}) without a crash, an internal failure or a corrupt append`, async () => {
    const base = seeds();
    let runs = 0;
    let answered = 0;
    let closed = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: base.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), async (i, muts) => {
        runs++;
        // A frame whose size prefix promises more than was sent waits for bytes that never come.
        const a = await rawExchange(broker.kafka, mutate(base[i], muts), 1, 100);
        if (a.frames.length > 0) answered++;
        if (a.closed) closed++;
      }),
      { seed: 20261201, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    process.stderr.write(`kafka fuzz: ${runs} frames, ${answered} answered, ${closed} connections closed by the broker\n`);
    expect(runs).toBeGreaterThanOrEqual(Math.floor(RUNS / 3));
    expect(answered).toBeGreaterThan(0);
    expect(closed).toBeGreaterThan(0);
    // Still serving, and no request failed inside the broker.
    const av = await call(broker.kafka, 'ApiVersions', 3, { ClientSoftwareName: 't', ClientSoftwareVersion: '1' });
    expect(av.ErrorCode).toBe(0);
    const metrics = JSON.parse((await httpRequest(`${broker.url}/v1/metrics`, { timeoutMs: 5000 })).body.toString('utf8')) as { kafka: { closed: Record<string, number>; requests: number } };
    expect(metrics.kafka.closed.internal ?? 0).toBe(0);
    expect(metrics.kafka.requests).toBeGreaterThan(0);
    // Every record served is one that was sent in a valid batch.
    const served = await kcatConsume(broker.kafka, 'fz', 0);
    for (const m of served) expect(VALID_VALUES.has(m.payload ?? '')).toBe(true);
    broker.kill('SIGTERM');
    await broker.exited;
    const dump = runDump({ dir: path.join(dir, 'fz-0') });
    expect(dump.totals.invalidBatches).toBe(0);
    expect(dump.totals.records).toBe(served.length);
  });
});
