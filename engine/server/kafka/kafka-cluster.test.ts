// Three broker processes, RF 3, min ISR 2, spoken to over the Kafka protocol: Metadata tells
// the truth (leaders, replicas, ISR, leader epochs, Kafka ports), followers answer
// NOT_LEADER_OR_FOLLOWER, and kafkajs keeps producing with acks=all through a leader kill by
// following Metadata to the new leader; everything acknowledged is consumed back (kcat).
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../records/index.ts';
import type { Struct } from '../../protocol/schema.ts';
import { startCluster, type Cluster } from '../cluster.ts';
import { tempDir, waitFor } from '../test-support.ts';
import { call, kafkajs, kcatConsume, kcatMetadata, requireKcat } from './kafka-client-support.ts';

const TOPIC = 'replicated';
let cluster: Cluster;
let dir = '';

const bootstrap = (): string =>
  cluster.brokers
    .filter((b) => b.running)
    .map((b) => b.kafka)
    .join(',');

beforeAll(async () => {
  await requireKcat();
  dir = tempDir('kafka-cluster');
  cluster = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    topics: [{ name: TOPIC, partitions: 3, replicationFactor: 3 }],
    set: ['min.insync.replicas=2', 'replica.lag.time.max.ms=2000'],
  });
  await cluster.waitForLeaders();
});

afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Kafka listener on a 3-broker cluster', () => {
  it('tells the truth in Metadata and answers NOT_LEADER_OR_FOLLOWER from a follower', async () => {
    for (const b of cluster.brokers) expect(b.kafka).toMatch(/^127\.0\.0\.1:\d+$/);
    const md = await kcatMetadata(bootstrap());
    expect(md.brokers.map((b) => `${b.id} ${b.name}`).sort()).toEqual(cluster.brokers.map((b) => `${b.id} ${b.kafka}`).sort());
    const raw = await call(cluster.brokers[0].kafka, 'Metadata', 12, { Topics: [{ TopicId: Buffer.alloc(16), Name: TOPIC }], AllowAutoTopicCreation: false, IncludeTopicAuthorizedOperations: false });
    const parts = (raw.Topics as Struct[])[0].Partitions as Struct[];
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      const truth = cluster.leaderOf(TOPIC, p.PartitionIndex as number)!;
      expect(p).toMatchObject({ ErrorCode: 0, LeaderId: truth.id, LeaderEpoch: truth.leaderEpoch, OfflineReplicas: [] });
      expect([...(p.IsrNodes as number[])].sort()).toEqual([...truth.isr].sort());
      expect([...(p.ReplicaNodes as number[])].sort()).toEqual([1, 2, 3]);
      const viaKcat = md.topics.find((t) => t.topic === TOPIC)!.partitions.find((x) => x.partition === p.PartitionIndex)!;
      expect(viaKcat.leader).toBe(truth.id);
    }
    const leader0 = cluster.leaderOf(TOPIC, 0)!.id;
    const follower = cluster.brokers.find((b) => b.id !== leader0)!;
    const answer = await call(follower.kafka, 'Produce', 9, {
      TransactionalId: null,
      Acks: -1,
      TimeoutMs: 2000,
      TopicData: [{ Name: TOPIC, PartitionData: [{ Index: 0, Records: encodeBatch({ records: [{ value: Buffer.from('to a follower') }] }) }] }],
    });
    expect(((answer.Responses as Struct[])[0].PartitionResponses as Struct[])[0]).toMatchObject({ ErrorCode: 6, BaseOffset: -1 });
  });

  it('keeps kafkajs producing with acks=all through a leader kill; every acknowledged message is consumed back', async () => {
    const kafka = new kafkajs.Kafka({
      clientId: 'durolab-failover',
      brokers: cluster.brokers.map((b) => b.kafka),
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 15, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 15, initialRetryTime: 100, maxRetryTime: 1000 } });
    await producer.connect();
    const acked = new Map<number, string[]>([
      [0, []],
      [1, []],
      [2, []],
    ]);
    let n = 0;
    const sendRound = async (): Promise<void> => {
      for (let partition = 0; partition < 3; partition++) {
        const values = Array.from({ length: 20 }, () => `m-${n++}`);
        const r = await producer.send({ topic: TOPIC, acks: -1, timeout: 5000, messages: values.map((value) => ({ value, partition })) });
        expect(r[0].errorCode).toBe(0);
        acked.get(partition)!.push(...values);
      }
    };
    for (let i = 0; i < 5; i++) await sendRound();
    const old = cluster.leaderOf(TOPIC, 0)!;
    await cluster.killBroker(old.id, 'SIGKILL');
    for (let i = 0; i < 5; i++) await sendRound();
    const now = cluster.leaderOf(TOPIC, 0)!;
    expect(now.id).not.toBe(old.id);
    expect(now.leaderEpoch).toBeGreaterThan(old.leaderEpoch);
    await producer.disconnect();

    const oldAddress = cluster.broker(old.id).kafka;
    await cluster.restartBroker(old.id);
    await cluster.waitForLeaders();
    // The restarted broker keeps its Kafka port, so bootstrap lists stay valid.
    expect(cluster.broker(old.id).kafka).toBe(oldAddress);
    for (let partition = 0; partition < 3; partition++) {
      const want = acked.get(partition)!;
      const got = await waitFor(
        `${TOPIC}-${partition} to serve ${want.length} messages`,
        async () => {
          const m = await kcatConsume(bootstrap(), TOPIC, partition);
          return m.length >= want.length ? m : null;
        },
        20_000,
        250,
      );
      const values = got.map((m) => m.payload);
      for (const v of want) expect(values).toContain(v);
      expect(got.map((m) => m.offset)).toEqual(got.map((_, i) => i));
    }
  });

  it('kcat (librdkafka, idempotent, acks=all) produces 10,000 messages through a leader kill and restart; they come back exactly once, in order', async () => {
    await cluster.createTopic({ name: 'witness', partitions: 1, replicationFactor: 3 });
    await cluster.waitForLeaders();
    const lines = Array.from({ length: 10_000 }, (_, i) => `witness ${i} ${'w'.repeat(i % 50)}`);
    const proc = execa('kcat', ['-b', bootstrap(), '-P', '-t', 'witness', '-p', '0', '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'linger.ms=5'], {
      stdin: 'pipe',
      reject: false,
      timeout: 120_000,
    });
    const leader = cluster.leaderOf('witness', 0)!.id;
    for (let i = 0; i < lines.length; i += 250) {
      proc.stdin!.write(`${lines.slice(i, i + 250).join('\n')}\n`);
      await sleep(10);
      if (i === 2500) {
        await cluster.killBroker(leader, 'SIGKILL');
        await waitFor('a new leader of witness-0', async () => {
          const l = cluster.leaderOf('witness', 0);
          return l !== null && l.id >= 0 && l.id !== leader;
        });
      }
      if (i === 6000) await cluster.restartBroker(leader);
    }
    proc.stdin!.end();
    const r = await proc;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(cluster.leaderOf('witness', 0)!.id).not.toBe(leader);
    const got = await kcatConsume(bootstrap(), 'witness', 0);
    expect(got.map((m) => m.payload)).toEqual(lines);
  });
});
