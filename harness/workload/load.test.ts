// The workload through the client-driver seam (the http driver) against a real broker process:
// every acknowledged batch is in the ledger with the offset the broker gave it, pipelined answers
// are matched to their requests, a fixed-rate run keeps a coordinated-omission-corrected
// histogram, a replica's stored bytes read back over /v1/admin/replica-log match its log hash,
// and a request counts as pending only once it was written to a connected socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkLedger } from '../checker/checker.ts';
import { loadDriver } from '../drivers/registry.ts';
import type { ReplicaReadingClient as ClusterClient } from '../drivers/types.ts';

let cluster: Cluster;
let client: ClusterClient;
const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-load-test-'));

beforeAll(async () => {
  // min ISR 2 on one broker: acks=1 works, acks=all is refused with NOT_ENOUGH_REPLICAS.
  cluster = await startCluster({ brokers: 1, dir, port: 0, topics: [{ name: 'load', partitions: 2, replicationFactor: 1 }], set: ['min.insync.replicas=2'] });
  await cluster.waitForLeaders();
  const driver = await loadDriver('http');
  client = driver.connect({ brokers: cluster.brokers, leaderId: (t, p) => cluster.leaderOf(t, p)?.id ?? null }, { dataOnHost: true });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('produce through the http driver', () => {
  it('pipelined closed loop: the ledger matches what the log serves', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 5000, partitions: [0, 1] });
    const factory = new BatchFactory({ recordBytes: 100, recordsPerBatch: 8 });
    const id = cluster.brokers[0].id;
    const r = await client.produce({
      leaders: new Map([[0, id], [1, id]]),
      topic: 'load',
      acks: 1,
      timeoutMs: 10_000,
      connections: 3,
      pipelining: 4,
      rate: null,
      warmupSec: 0,
      durationSec: 2,
      ledger,
      factory,
    });
    const counts = ledger.counts();
    expect(counts.acked).toBeGreaterThan(50);
    expect(r.errors).toEqual({});
    expect(r.correctedLatencyUs).toBeNull();
    expect(r.latencyUs.totalCount).toBeGreaterThan(0);
    // requests still in flight when the run ended are the only unacknowledged ones
    expect(counts.pending).toBeLessThanOrEqual(3 * 4);
    const logs = await Promise.all([0, 1].map((partition) => client.consume({ topic: 'load', partition })));
    const report = checkLedger(ledger, logs);
    expect(report).toMatchObject({ ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, offsetChanged: 0 });
    expect(report.acked).toBe(counts.ackedRecords);
    expect(report.unackedPresent).toBeLessThanOrEqual(3 * 4 * 8);

    // The replica's stored batches below its HW, read as bytes through /v1/admin/replica-log,
    // are what the consumer was served, and hash to what the broker's own log hash says.
    const digest = await client.replicaDigest(id, 'load', 0);
    expect(digest).not.toBeNull();
    expect(digest!.upTo).toBe(logs[0].highWatermark);
    const stored = await client.readReplicaLog(id, 'load', 0, digest!.upTo);
    expect(stored!.corrupt).toBe(0);
    expect(stored!.batches.map(({ size: _s, crc: _c, computedCrc: _cc, ...b }) => b)).toEqual(logs[0].batches);
    expect(stored!.batches.every((b) => b.crc === b.computedCrc)).toBe(true);
    expect(stored!.sha256).toBe(digest!.hash);
    expect(await client.replicaDigest(id, 'no-such-topic', 0)).toBeNull();

    const figures = await client.brokerMetrics();
    expect(figures.down).toEqual([]);
    const p0 = figures.brokers[0].partitions.find((p) => p.topic === 'load' && p.partition === 0)!;
    expect(p0).toMatchObject({ role: 'leader', hw: digest!.hw, leo: digest!.leo, isr: [id] });
    expect(p0.bytes).toBe(stored!.bytes);
  }, 30_000);

  it('fixed rate: holds the rate and keeps a corrected histogram', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 4, producerIdBase: 7000, partitions: [0] });
    const factory = new BatchFactory({ recordBytes: 64, recordsPerBatch: 4 });
    const r = await client.produce({
      leaders: new Map([[0, cluster.brokers[0].id]]),
      topic: 'load',
      acks: 1,
      timeoutMs: 10_000,
      connections: 2,
      pipelining: 1,
      rate: 200,
      warmupSec: 0,
      durationSec: 3,
      ledger,
      factory,
    });
    expect(r.correctedLatencyUs).not.toBeNull();
    expect(r.correctedLatencyUs!.totalCount).toBeGreaterThanOrEqual(r.latencyUs.totalCount);
    // autocannon's limiter lets each connection send its share once per wall-clock second
    // bucket, and a 3 s run can open a fourth bucket just before it stops: at most
    // rate x (duration + 1) requests over at least the duration (261/s was measured once).
    const perSec = r.measuredRequests / r.measuredSec;
    expect(perSec).toBeGreaterThan(120);
    expect(r.measuredRequests).toBeLessThanOrEqual(200 * (3 + 1));
    expect(perSec).toBeLessThanOrEqual((200 * (3 + 1)) / 3);
  }, 30_000);

  it('refused produces are marked failed in the ledger, counted by name, and kept out of the latency', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 9000, partitions: [1] });
    const factory = new BatchFactory({ recordBytes: 32, recordsPerBatch: 2 });
    const r = await client.produce({
      leaders: new Map([[1, cluster.brokers[0].id]]),
      topic: 'load',
      acks: 'all',
      timeoutMs: 5_000,
      connections: 2,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 1,
      ledger,
      factory,
    });
    const counts = ledger.counts();
    expect(counts.acked).toBe(0);
    expect(counts.failed).toBeGreaterThan(10);
    expect(counts.pending).toBeLessThanOrEqual(2);
    expect(r.errors.NOT_ENOUGH_REPLICAS).toBeGreaterThanOrEqual(counts.failed);
    expect(r.latencyUs.totalCount).toBe(0);
    expect([...ledger.batches(1)].filter((b) => b.status === 'failed').every((b) => b.error === 'NOT_ENOUGH_REPLICAS')).toBe(true);
  }, 30_000);

  it('requests whose connection never connected are never-sent, not pending; errors after the fault are kept apart', async () => {
    // A port nobody listens on: autocannon reconnects in a tight loop and builds a request per attempt.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 11000, partitions: [0] });
    const fault = new AbortController();
    fault.abort();
    const deadClient = (await loadDriver('http')).connect(
      { brokers: [{ id: 9, url: `http://127.0.0.1:${port}`, dataDir: dir }], leaderId: () => 9 },
      { dataOnHost: true },
    );
    const r = await deadClient.produce({
      leaders: new Map([[0, 9]]),
      topic: 'load',
      acks: 1,
      timeoutMs: 2_000,
      connections: 2,
      pipelining: 2,
      rate: null,
      warmupSec: 0,
      durationSec: 1,
      ledger,
      factory: new BatchFactory({ recordBytes: 32, recordsPerBatch: 2 }),
      faultSignal: fault.signal,
    });
    const counts = ledger.counts();
    expect(counts.sent).toBeGreaterThan(10);
    expect(counts.neverSent).toBe(counts.sent);
    expect(counts.pending).toBe(0);
    expect(r.errors).toEqual({});
    expect(r.errorsAfterFault.CLIENT_ECONNREFUSED).toBeGreaterThan(10);
  }, 30_000);

  it('a request written to a connected socket that never answers stays pending', async () => {
    let requests = 0;
    const silent: Server = createServer(() => {
      requests++; // read, never answered
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as AddressInfo).port;
      const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 12000, partitions: [0] });
      const silentClient = (await loadDriver('http')).connect(
        { brokers: [{ id: 8, url: `http://127.0.0.1:${port}`, dataDir: dir }], leaderId: () => 8 },
        { dataOnHost: true },
      );
      const r = await silentClient.produce({
        leaders: new Map([[0, 8]]),
        topic: 'load',
        acks: 1,
        timeoutMs: 10_000,
        connections: 2,
        pipelining: 1,
        rate: null,
        warmupSec: 0,
        durationSec: 1,
        ledger,
        factory: new BatchFactory({ recordBytes: 32, recordsPerBatch: 2 }),
      });
      const counts = ledger.counts();
      expect(requests).toBe(2);
      expect(counts).toMatchObject({ sent: 2, pending: 2, neverSent: 0, acked: 0 });
      expect(r.errorsAfterFault).toEqual({});
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  }, 30_000);
});
