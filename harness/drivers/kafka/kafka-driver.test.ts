// The kafka driver against three real broker processes (RF 3, min ISR 2) over the Kafka
// protocol, @platformatic/kafka producing: acks=0 leaves every batch "unconfirmed" (sent, never
// acknowledged), keeps what waits in the producer's sockets bounded and does not hold the event
// loop; after a leader is killed, the checker's consume finds the new leader through Metadata
// (which still names the dead one for a while) and, once the replicas caught up, reads every
// acknowledged record back; a broker asked by name that no longer leads says who does.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../../engine/server/cluster.ts';
import { tempDir } from '../../../engine/server/test-support.ts';
import { checkLedger, ledgerSummaryOfReport } from '../../checker/checker.ts';
import { addAgreementTo, replicaAgreement, replicaLine } from '../../runner/trial-accounting.ts';
import { replicaAgreementOf } from '../../checker/replica-bytes.ts';
import type { Trial } from '../../results/types.ts';
import { waitForReplicasCaughtUp } from '../../checker/replicas.ts';
import { BatchFactory } from '../../history/batch-factory.ts';
import { AckLedger } from '../../history/ledger.ts';
import type { ReplicaReadingClient as ClusterClient } from '../types.ts';
import { kafkaClient } from './driver.ts';
import { currentLeader } from './leader.ts';

const RECORD_BYTES = 1024;
const PER_BATCH = 16;
let cluster: Cluster;
let client: ClusterClient;
let dir = '';

const bootstrap = () => cluster.brokers.map((b) => b.kafka!);
const leaderOf = (topic: string) => cluster.leaderOf(topic, 0)?.id ?? null;

beforeAll(async () => {
  dir = tempDir('kafka-driver');
  cluster = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    topics: [
      { name: 'zero-platformatic', partitions: 1, replicationFactor: 3 },
      { name: 'zero-rdkafka', partitions: 1, replicationFactor: 3 },
      { name: 'moved', partitions: 1, replicationFactor: 3 },
    ],
    // A killed leader stays in Metadata for the session timeout: 4 s is long enough that the
    // consume below surely starts while Metadata still names the dead broker.
    set: ['min.insync.replicas=2', 'broker.session.timeout.ms=4000'],
  });
  await cluster.waitForLeaders();
  client = kafkaClient({ brokers: cluster.brokers, leaderId: (t, p) => cluster.leaderOf(t, p)?.id ?? null }, { dataOnHost: true });
});

afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface SocketOwner {
  socket?: { writableLength: number } | null;
}

describe('kafka driver, acks=0', () => {
  // @platformatic/kafka writes from this process's sockets, so what waits unwritten is measured
  // here; librdkafka writes from its own threads and queues (its sends are awaited one delivery
  // report each, so at most connections x in-flight batches are outstanding), so for it the
  // ledger states and the turning event loop are checked.
  it.each(['platformatic', 'rdkafka'] as const)('%s: marks every batch unconfirmed, bounds what is outstanding and keeps the event loop turning', async (library) => {
    const connections = 4;
    const inFlight = 2;
    // Every connection @platformatic/kafka opens is announced on its diagnostics channel: sample
    // the bytes each socket still holds unwritten (accepted by write(), not yet by the kernel).
    const sockets: SocketOwner[] = [];
    const onInstance = (m: unknown) => {
      const { type, instance } = m as { type: string; instance: SocketOwner };
      if (type === 'connection') sockets.push(instance);
    };
    subscribe('plt:kafka:instances', onInstance);
    let maxUnwritten = 0;
    const sampler = setInterval(() => {
      maxUnwritten = Math.max(maxUnwritten, sockets.reduce((s, c) => s + (c.socket?.writableLength ?? 0), 0));
    }, 2);
    const ledger = new AckLedger({ recordsPerBatch: PER_BATCH, producerIdBase: 9100, partitions: [0] });
    const topic = `zero-${library}`;
    const leader = leaderOf(topic)!;
    let r;
    try {
      r = await client.produce({
        topic,
        leaders: new Map([[0, leader]]),
        acks: 0,
        timeoutMs: 10_000,
        connections,
        pipelining: inFlight,
        rate: null,
        warmupSec: 0,
        durationSec: 3,
        ledger,
        factory: new BatchFactory({ recordBytes: RECORD_BYTES, recordsPerBatch: PER_BATCH }),
        producer: { library },
      });
    } finally {
      clearInterval(sampler);
      unsubscribe('plt:kafka:instances', onInstance);
    }
    expect(r.errors).toEqual({});
    const counts = ledger.counts();
    expect(counts.sent).toBeGreaterThan(50);
    // Nothing is acknowledged with acks=0: every batch sent is unconfirmed, none pending or failed.
    expect(counts).toMatchObject({ acked: 0, ackedRecords: 0, failed: 0, pending: 0, neverSent: 0, unconfirmed: counts.sent });
    expect(r.measuredRecords).toBe(counts.sent * PER_BATCH);

    // Bounded: at most a request per send in flight waits in user space (before the flow
    // control, 8 connections held 13 MB after 4 s on this machine and kept growing).
    if (library === 'platformatic') {
      expect(sockets.length).toBeGreaterThanOrEqual(connections);
      const requestBytes = PER_BATCH * (RECORD_BYTES + 100) + 1024;
      expect(maxUnwritten).toBeLessThanOrEqual(connections * inFlight * requestBytes);
    }
    // The load yields to the event loop: its own one-second ticks ran (a loop that never waits
    // on I/O used to leave one tick for the whole load, and the sampler above none).
    expect(r.timeseries.length).toBeGreaterThanOrEqual(2);
    // The seconds are the measured window's: none past its end, and the first one is a real
    // second of load (a ticker started before the window once put a 0 records/s second first).
    expect(r.timeseries.length).toBeLessThanOrEqual(3);
    expect(r.timeseries[0]!.recordsPerSec).toBeGreaterThan(0);

    // What reached the log is there, but none of it was promised: the checker has no
    // acknowledged record to judge, so ackedLost cannot pass on nothing (it is not evaluated).
    const caught = await waitForReplicasCaughtUp(client, topic, [0], 30_000, 0);
    expect(caught.caughtUp, caught.detail).toBe(true);
    const log = await client.consume({ topic, partition: 0 });
    const report = checkLedger(ledger, [log]);
    expect(report).toMatchObject({ acked: 0, ackedLost: 0, corrupt: 0, duplicates: 0 });
    expect(report.unackedPresent).toBeGreaterThan(0);
    expect(report.unackedPresent).toBeLessThanOrEqual(counts.sent * PER_BATCH);
  }, 60_000);
});

describe('kafka driver, after a leader change', () => {
  it('finds the new leader through Metadata while it still names the killed one, and reads everything acknowledged', async () => {
    const ledger = new AckLedger({ recordsPerBatch: PER_BATCH, producerIdBase: 9200, partitions: [0] });
    const old = leaderOf('moved')!;
    const r = await client.produce({
      topic: 'moved',
      leaders: new Map([[0, old]]),
      acks: 'all',
      timeoutMs: 10_000,
      connections: 2,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 1,
      ledger,
      factory: new BatchFactory({ recordBytes: RECORD_BYTES, recordsPerBatch: PER_BATCH }),
    });
    expect(r.errors).toEqual({});
    const acked = ledger.counts().acked;
    expect(acked).toBeGreaterThan(5);

    await cluster.killBroker(old, 'SIGKILL');
    // Metadata still names the dead broker (its session has not expired): what the checker
    // would have asked had it remembered, and what a lookup returns first.
    expect((await currentLeader(bootstrap(), 'moved', 0)).leader).toBe(old);
    const t0 = Date.now();
    const first = await client.consume({ topic: 'moved', partition: 0, timeoutMs: 30_000 });
    const tookMs = Date.now() - t0;
    const now = leaderOf('moved');
    expect(now).not.toBeNull();
    expect(now).not.toBe(old);
    // It waited for the controller to fence the dead leader rather than failing at once, and
    // read the new leader: what it serves is consistent, though a leader just elected may not
    // have moved its HW up to everything committed yet (Kafka's too: it learns the HW from its
    // followers' next fetches), so the records above it are not served yet.
    expect(tookMs).toBeGreaterThan(500);
    expect(checkLedger(ledger, [first])).toMatchObject({ corrupt: 0, duplicates: 0, inconsistentOffsets: 0 });
    // Once the replicas caught up (as the runner waits before its checker reads), every
    // acknowledged record is served by the new leader.
    const caught = await waitForReplicasCaughtUp(client, 'moved', [0], 30_000);
    expect(caught.caughtUp, caught.detail).toBe(true);
    const log = await client.consume({ topic: 'moved', partition: 0 });
    const report = checkLedger(ledger, [log]);
    expect(report.acked).toBe(acked * PER_BATCH);
    expect(report).toMatchObject({ ackedLost: 0, corrupt: 0, duplicates: 0, inconsistentOffsets: 0 });

    // Back as a follower, the old leader refuses to serve as one; asked by name, the error says
    // what it answered and whom Metadata names instead.
    await cluster.restartBroker(old);
    await cluster.waitForLeaders();
    const leader = leaderOf('moved')!;
    expect(leader).not.toBe(old);
    await expect(client.consume({ topic: 'moved', partition: 0, brokerId: old })).rejects.toThrow(
      new RegExp(`consume moved-0 from broker ${old}, as asked: .*NOT_LEADER_OR_FOLLOWER; Metadata names broker ${leader} \\(epoch \\d+\\) as its leader`),
    );
    // Replica digests and broker figures ask the current leader too.
    const digest = await client.replicaDigest(leader, 'moved', 0);
    expect(digest?.hw).toBe(log.highWatermark);
    const figures = await client.brokerMetrics();
    const roles = figures.brokers.flatMap((b) => b.partitions.filter((p) => p.topic === 'moved').map((p) => `${b.brokerId}:${p.role}`));
    expect(roles).toContain(`${leader}:leader`);
    expect(roles).not.toContain(`${old}:leader`);

    // Replica agreement from bytes: both followers compared, the trial's replicasDiverged
    // measured; an agreement that compared no follower leaves it out (not measured), not 0.
    expect((await waitForReplicasCaughtUp(client, 'moved', [0], 30_000)).caughtUp).toBe(true);
    const onHost: Trial = { index: 0, ledger: ledgerSummaryOfReport(report) };
    addAgreementTo(onHost, await replicaAgreement(client, 'moved', [0], 3, true));
    expect(onHost.replicas).toMatchObject({ replicas: 2, diverged: 0 });
    expect(onHost.replicas!.compared).toBeGreaterThan(0);
    expect(onHost.ledger.replicasDiverged).toBe(0);
    const none: Trial = { index: 0, ledger: ledgerSummaryOfReport(report) };
    addAgreementTo(none, replicaAgreementOf([]));
    expect(none.replicas).toMatchObject({ replicas: 0, compared: 0 });
    expect(none.ledger.replicasDiverged).toBeUndefined();
    expect(replicaLine(none.replicas!)).toContain('replicas not compared from bytes');
  }, 90_000);

  it('says whom it asked and what Metadata answered when it never finds a leader', async () => {
    const t0 = Date.now();
    await expect(client.consume({ topic: 'no-such-topic', partition: 0 })).rejects.toThrow(
      /^consume no-such-topic-0: kafka driver: no-such-topic-0 has no leader after \d+ ms of Metadata requests to 127\.0\.0\.1:\d+, .* \(last answer: no such partition \(UNKNOWN_TOPIC_OR_PARTITION\)\)$/,
    );
    // An unknown topic is not an election: no point waiting the whole bound.
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
