// Consumer groups through kafkajs (which consumes only through a group) against one broker and
// a 3-broker cluster: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit,
// OffsetFetch and LeaveGroup. Everything produced is consumed back byte-identical; a second
// consumer joining mid-run triggers a rebalance after which both own partitions, and no record
// is lost (a few may be read twice, which at-least-once allows); the committed offsets are the
// log ends.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../cluster.ts';
import { startBrokerProcess, tempDir, waitFor, type BrokerProcess } from '../test-support.ts';
import { kafkajs } from './kafka-client-support.ts';

const TOPIC = 'cg';
const PARTITIONS = 3;
const PER_HALF = 1500;

interface Read {
  consumer: string;
  partition: number;
  offset: number;
  key: string;
  value: string;
}

function messages(from: number, n: number): Array<{ key: string; value: string }> {
  return Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: `record ${from + i} ${'ü'.repeat((from + i) % 50)} ${'z'.repeat((from + i) % 200)}` }));
}

async function roundTrip(bootstrap: string[], group: string): Promise<{ reads: Read[]; duplicates: number }> {
  const kafka = new kafkajs.Kafka({ clientId: 'durolab-group-test', brokers: bootstrap, logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent: Array<{ key: string; value: string }> = [];
  const send = async (from: number): Promise<void> => {
    const batch = messages(from, PER_HALF);
    for (let i = 0; i < batch.length; i += 100) await producer.send({ topic: TOPIC, acks: -1, messages: batch.slice(i, i + 100).map((m, j) => ({ ...m, partition: (i + j) % PARTITIONS })) });
    sent.push(...batch);
  };
  const reads: Read[] = [];
  const consumerOf = async (name: string): Promise<import('kafkajs').Consumer> => {
    const c = kafka.consumer({ groupId: group, heartbeatInterval: 300, sessionTimeout: 10_000, maxWaitTimeInMs: 100 });
    await c.connect();
    await c.subscribe({ topic: TOPIC, fromBeginning: true });
    await c.run({
      eachMessage: async ({ partition, message }) => {
        reads.push({ consumer: name, partition, offset: Number(message.offset), key: message.key!.toString('utf8'), value: message.value!.toString('utf8') });
      },
    });
    return c;
  };
  await send(0);
  const a = await consumerOf('a');
  await waitFor('consumer a reads the first half', async () => new Set(reads.map((r) => r.key)).size >= PER_HALF, 30_000);
  const b = await consumerOf('b');
  await send(PER_HALF);
  await waitFor('consumers a and b read everything', async () => new Set(reads.map((r) => r.key)).size >= 2 * PER_HALF, 60_000);
  // After the rebalance both consumers own partitions: b read records of the second half.
  await waitFor('consumer b gets partitions', async () => reads.some((r) => r.consumer === 'b'), 30_000);
  await a.disconnect();
  await b.disconnect();
  await producer.disconnect();

  // Byte-identical, nothing lost, nothing invented.
  const byKey = new Map(sent.map((m) => [m.key, m.value]));
  for (const r of reads) expect(r.value).toBe(byKey.get(r.key));
  expect(new Set(reads.map((r) => r.key)).size).toBe(sent.length);
  // Each partition is read in offset order by whoever owns it, offsets 0..end without holes.
  for (let p = 0; p < PARTITIONS; p++) {
    const offsets = [...new Set(reads.filter((r) => r.partition === p).map((r) => r.offset))].sort((x, y) => x - y);
    expect(offsets).toEqual(offsets.map((_, i) => i));
  }
  const duplicates = reads.length - sent.length;
  // The committed offsets (OffsetFetch through the admin client) are the log ends.
  const admin = kafka.admin();
  await admin.connect();
  const committed = await admin.fetchOffsets({ groupId: group, topics: [TOPIC] });
  const ends = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  const committedBy = new Map(committed[0].partitions.map((p) => [p.partition, p.offset]));
  for (const e of ends) expect(committedBy.get(e.partition)).toBe(e.high);
  process.stderr.write(`consumer group ${group}: ${sent.length} records, ${reads.length} reads (${duplicates} re-read at the rebalance), a read ${reads.filter((r) => r.consumer === 'a').length}, b read ${reads.filter((r) => r.consumer === 'b').length}\n`);
  return { reads, duplicates };
}

let broker: BrokerProcess | undefined;
let cluster: Cluster | undefined;
const dirs: string[] = [];

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  await cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('consumer groups through kafkajs', () => {
  it('one broker: produce, consume through a group, a second consumer joins (rebalance), nothing lost', async () => {
    const dir = tempDir('kafka-group-1');
    dirs.push(dir);
    broker = await startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', `${TOPIC}:${PARTITIONS}`]);
    const { duplicates } = await roundTrip([broker.kafka], 'group-one');
    expect(duplicates).toBeLessThan(PER_HALF);
  });

  it('three brokers (RF 3): the same through the coordinator on the lowest broker id', async () => {
    const dir = tempDir('kafka-group-3');
    dirs.push(dir);
    cluster = await startCluster({ brokers: 3, dir, port: 0, topics: [{ name: TOPIC, partitions: PARTITIONS, replicationFactor: 3 }], set: ['min.insync.replicas=2'] });
    await cluster.waitForLeaders();
    const { duplicates } = await roundTrip(
      cluster.brokers.map((b) => b.kafka),
      'group-three',
    );
    expect(duplicates).toBeLessThan(PER_HALF);
  });
});
