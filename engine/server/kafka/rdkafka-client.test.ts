// librdkafka through @confluentinc/kafka-javascript (its binding built from source by
// scripts/build-rdkafka.mjs) against a 3-broker durolab cluster, RF 3, min ISR 2: an idempotent
// producer (enable.idempotence=true, acks=all, max.in.flight 5 — librdkafka 2.15 sends one
// request at a time per partition once a batch holds 5 messages, PR #4989) sends 5,000 binary
// messages with keys and headers while the partition's leader is SIGKILLed; every delivery
// report is a success, and librdkafka's own consumer reads the partition back byte-identical,
// exactly once, in order, each message at the offset its delivery report gave.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRdkafka, type RdkafkaModule } from '../../common/rdkafka.ts';
import { missingRequirement } from '../../../test/requirements.ts';
import { startCluster, type Cluster } from '../cluster.ts';
import { tempDir, waitFor } from '../test-support.ts';

type RdMessage = import('@confluentinc/kafka-javascript').Message;
type RdDeliveryReport = import('@confluentinc/kafka-javascript').DeliveryReport;

const TOPIC = 'rdkafka';
const COUNT = 5000;
let cluster: Cluster | undefined;
let dir = '';
const rd = loadRdkafka();

const bootstrap = (): string =>
  cluster!.brokers
    .filter((b) => b.running)
    .map((b) => b.kafka)
    .join(',');

/** Deterministic bytes (a small LCG): values 0..1999 bytes long, every byte value present. */
function payload(i: number): Buffer {
  const b = Buffer.alloc((i * 37) % 2000);
  let x = (i * 2654435761) >>> 0;
  for (let j = 0; j < b.length; j++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[j] = x >>> 24;
  }
  return b;
}

beforeAll(async () => {
  if (!rd.module) return;
  dir = tempDir('kafka-rdkafka');
  cluster = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    topics: [{ name: TOPIC, partitions: 1, replicationFactor: 3 }],
    set: ['min.insync.replicas=2', 'replica.lag.time.max.ms=2000'],
  });
  await cluster.waitForLeaders();
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function connect<T extends { connect(): unknown; once(ev: 'ready', f: () => void): unknown; once(ev: 'connection.failure', f: (e: Error) => void): unknown }>(client: T, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: not ready within 20 s (bootstrap ${bootstrap()})`)), 20_000);
    client.once('ready', () => {
      clearTimeout(t);
      resolve(client);
    });
    client.once('connection.failure', (e: Error) => {
      clearTimeout(t);
      reject(new Error(`${what}: ${e.message}`));
    });
    client.connect();
  });
}

async function produceThroughLeaderKill(k: RdkafkaModule): Promise<{ reports: Map<number, RdDeliveryReport>; errors: string[]; killed: number }> {
  const producer = new k.Producer({
    'bootstrap.servers': bootstrap(),
    'client.id': 'durolab-rdkafka-witness',
    'enable.idempotence': true,
    acks: -1, // all
    'max.in.flight.requests.per.connection': 5,
    'linger.ms': 5,
    'batch.num.messages': 100,
    'delivery.timeout.ms': 60_000,
    'retry.backoff.ms': 100,
    dr_cb: true,
  });
  const reports = new Map<number, RdDeliveryReport>();
  const errors: string[] = [];
  producer.on('delivery-report', (err, report) => {
    const i = report.opaque as number;
    if (err) errors.push(`message ${i}: ${err.message} (code ${err.code})`);
    else if (reports.has(i)) errors.push(`message ${i}: a second delivery report`);
    else reports.set(i, report);
  });
  await connect(producer, 'librdkafka producer');
  producer.setPollInterval(5);
  const leader = cluster!.leaderOf(TOPIC, 0)!.id;
  for (let i = 0; i < COUNT; i++) {
    producer.produce(TOPIC, 0, payload(i), `key-${i}`, null, i, [{ seq: String(i) }, { bin: payload(i).subarray(0, 8) }]);
    if (i % 250 === 249) await sleep(15);
    if (i === 2000) {
      await cluster!.killBroker(leader, 'SIGKILL');
      await waitFor(`a new leader of ${TOPIC}-0`, async () => {
        const l = cluster!.leaderOf(TOPIC, 0);
        return l !== null && l.id >= 0 && l.id !== leader;
      });
    }
  }
  await waitFor(`${COUNT} delivery reports (have ${reports.size}, ${errors.length} errors)`, async () => (reports.size + errors.length >= COUNT ? true : null), 60_000, 50);
  await new Promise<void>((resolve) => producer.disconnect(5000, () => resolve()));
  return { reports, errors, killed: leader };
}

async function consumeAll(k: RdkafkaModule, want: number): Promise<RdMessage[]> {
  const consumer = new k.KafkaConsumer({ 'bootstrap.servers': bootstrap(), 'group.id': 'durolab-rdkafka-witness', 'enable.auto.commit': false }, { 'auto.offset.reset': 'earliest' });
  await connect(consumer, 'librdkafka consumer');
  consumer.assign([{ topic: TOPIC, partition: 0, offset: 0 }]);
  const got: RdMessage[] = [];
  const deadline = Date.now() + 30_000;
  try {
    while (got.length < want && Date.now() < deadline) {
      const batch = await new Promise<RdMessage[]>((resolve, reject) => consumer.consume(1000, (err, m) => (err ? reject(err) : resolve(m))));
      got.push(...batch);
    }
  } finally {
    await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  }
  return got;
}

describe('librdkafka (@confluentinc/kafka-javascript) against durolab', () => {
  it('produces 5,000 messages idempotently (acks=all) through a leader kill; its consumer reads them back byte-identical, once, in order', async (ctx) => {
    if (!rd.module) return missingRequirement(ctx, rd.reason);
    const k = rd.module;
    const { reports, errors, killed } = await produceThroughLeaderKill(k);
    expect(errors).toEqual([]);
    expect(reports.size).toBe(COUNT);
    expect(cluster!.leaderOf(TOPIC, 0)!.id).not.toBe(killed);
    const got = await consumeAll(k, COUNT);
    expect(got.length).toBe(COUNT);
    expect(got.map((m) => m.offset)).toEqual(got.map((_, i) => i));
    for (let i = 0; i < COUNT; i++) {
      const m = got[i]!;
      // Byte-identical: the value, the key, both headers, and the offset the delivery report named.
      expect(Buffer.compare(m.value ?? Buffer.alloc(0), payload(i)), `value of message ${i}`).toBe(0);
      expect(String(m.key)).toBe(`key-${i}`);
      const headers = (m.headers ?? []).map((h) => Object.entries(h)[0]!);
      expect(headers.map(([key, v]) => [key, Buffer.from(v as Buffer).toString('hex')])).toEqual([
        ['seq', Buffer.from(String(i)).toString('hex')],
        ['bin', payload(i).subarray(0, 8).toString('hex')],
      ]);
      expect(reports.get(i)!.offset).toBe(m.offset);
    }
  }, 120_000);
});
