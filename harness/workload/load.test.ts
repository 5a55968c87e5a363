// The load generator against a real broker process: every acknowledged batch is in the ledger
// with the offset the broker gave it, pipelined answers are matched to their requests, and a
// fixed-rate run keeps a coordinated-omission-corrected histogram.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import { AckLedger } from './ledger.ts';
import { BatchFactory } from './batch-factory.ts';
import { runLoad } from './load.ts';
import { consumePartition } from '../checker/consume.ts';
import { checkLedger } from '../checker/checker.ts';

let cluster: Cluster;
const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-load-test-'));

beforeAll(async () => {
  // min ISR 2 on one broker: acks=1 works, acks=all is refused with NOT_ENOUGH_REPLICAS.
  cluster = await startCluster({ brokers: 1, dir, port: 0, topics: [{ name: 'load', partitions: 2, replicationFactor: 1 }], set: ['min.insync.replicas=2'] });
  await cluster.waitForLeaders();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('runLoad', () => {
  it('pipelined closed loop: the ledger matches what the log serves', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 5000, partitions: [0, 1] });
    const factory = new BatchFactory({ recordBytes: 100, recordsPerBatch: 8 });
    const r = await runLoad({
      targets: [{ url: cluster.brokers[0].url, partitions: [0, 1] }],
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
    const logs = await Promise.all([0, 1].map((partition) => consumePartition({ url: cluster.brokers[0].url, topic: 'load', partition })));
    const report = checkLedger(ledger, logs);
    expect(report).toMatchObject({ ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, offsetChanged: 0 });
    expect(report.acked).toBe(counts.ackedRecords);
    expect(report.unackedPresent).toBeLessThanOrEqual(3 * 4 * 8);
  }, 30_000);

  it('fixed rate: holds the rate and keeps a corrected histogram', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 4, producerIdBase: 7000, partitions: [0] });
    const factory = new BatchFactory({ recordBytes: 64, recordsPerBatch: 4 });
    const r = await runLoad({
      targets: [{ url: cluster.brokers[0].url, partitions: [0] }],
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
    const perSec = r.measuredRequests / r.measuredSec;
    expect(perSec).toBeGreaterThan(120);
    expect(perSec).toBeLessThan(260);
  }, 30_000);

  it('refused produces are marked failed in the ledger, counted by name, and kept out of the latency', async () => {
    const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 9000, partitions: [1] });
    const factory = new BatchFactory({ recordBytes: 32, recordsPerBatch: 2 });
    const r = await runLoad({
      targets: [{ url: cluster.brokers[0].url, partitions: [1] }],
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
});
