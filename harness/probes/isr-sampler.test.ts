// The ISR sampler against a real durolab cluster (3 broker processes, RF 3): a follower killed
// mid-load leaves the ISR once replica.lag.time.max.ms (1 s here) passes, the sampler records
// the shrink, and the records acks=all acknowledged from then on count as acknowledged while the
// ISR was shrunk; the arithmetic of those figures on fixed changes.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cellSettings, compileScenario } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { AckLedger, type LedgerBatch } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { loadDriver } from '../drivers/registry.ts';
import { IsrSampler, ackedWhileIsrShrunk, isrAt, isrSizePerSecond, type IsrChange } from './isr-sampler.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-isr-sampler-'));
let cluster: FaultableCluster | null = null;
afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

const batch = (ackMs: number, records = 4, partition = 0): LedgerBatch => ({ partition, producerId: 1, baseSequence: 0, records, sentMs: ackMs, status: 'acked', baseOffset: 0, ackMs, error: null });

describe('ISR figures from the changes', () => {
  const changes: IsrChange[] = [
    { atMs: 1000, partition: 0, leader: 1, isr: [1, 2, 3] },
    { atMs: 3000, partition: 0, leader: 1, isr: [1] },
    { atMs: 5000, partition: 0, leader: 1, isr: null },
    { atMs: 6000, partition: 0, leader: 1, isr: [1, 2, 3] },
  ];
  it('counts what was acknowledged while the ISR was smaller than RF, and what had no reading', () => {
    const b = [batch(500), batch(1500), batch(3000), batch(4999), batch(5500), batch(6500), { ...batch(3500), status: 'failed' as const }];
    expect(ackedWhileIsrShrunk(b, changes, 3)).toEqual({ records: 8, unknown: 8 });
    expect(ackedWhileIsrShrunk(b, changes, 1)).toEqual({ records: 0, unknown: 8 });
    expect(isrAt(changes, 0, 2999)?.isr).toEqual([1, 2, 3]);
    expect(isrAt(changes, 1, 2999)).toBeUndefined();
  });
  it('gives the smallest ISR per second, null where nothing was read', () => {
    expect(isrSizePerSecond(changes, 0, 7)).toEqual([null, 3, 3, 1, 1, null, 3]);
  });
});

describe('ISR sampler on a durolab cluster', () => {
  it('sees a killed follower leave the ISR, and counts the acks=all records acknowledged after', async () => {
    const topic = 'isr';
    const scenario = compileScenario(
      `question: q
cluster: { brokers: 3, topic: ${topic}, partitions: 1, replicationFactor: 3, minInsyncReplicas: 1 }
settings: { acks: all, flush: never, replica.lag.time.max.ms: 1s }
workload: { recordBytes: 256, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 5s }
`,
      'inline.yaml',
      { defaultName: 'inline' },
    );
    cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]), workDir: work })) as FaultableCluster;
    const client = (await loadDriver('http')).connect(cluster, { dataOnHost: true });
    const leader = (await cluster.leaders(topic)).get(0)!.id;
    const follower = cluster.brokers.map((b) => b.id).find((id) => id !== leader)!;
    const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 9000, partitions: [0] });
    const sampler = new IsrSampler(client, topic, [0], 100).start();
    const t0 = Date.now();
    const load = client.produce({
      leaders: new Map([[0, leader]]),
      topic,
      acks: 'all',
      timeoutMs: 10_000,
      connections: 2,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 5,
      ledger,
      factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: 8 }),
    });
    await new Promise((r) => setTimeout(r, 1000));
    const killedAt = Date.now();
    await cluster.processKill([follower]);
    await load;
    const changes = await sampler.stop();
    expect(sampler.rounds).toBeGreaterThan(20);
    expect(changes[0]).toMatchObject({ partition: 0, leader, isr: [1, 2, 3] });
    expect(changes[0]!.atMs).toBeLessThan(t0 + 500);
    const shrunk = changes.find((c) => c.isr !== null && c.isr.length === 2);
    expect(shrunk, JSON.stringify(changes)).toBeDefined();
    expect(shrunk!.isr).not.toContain(follower);
    // Out after replica.lag.time.max.ms (1 s), seen within a sample or two of it.
    expect(shrunk!.atMs - killedAt).toBeGreaterThanOrEqual(900);
    expect(shrunk!.atMs - killedAt).toBeLessThan(4000);
    const figures = ackedWhileIsrShrunk(ledger.batches(0), changes, 3);
    const after = [...ledger.batches(0)].filter((b) => b.status === 'acked' && b.ackMs >= shrunk!.atMs).reduce((a, b) => a + b.records, 0);
    expect(figures.unknown).toBe(0);
    expect(figures.records).toBe(after);
    expect(figures.records).toBeGreaterThan(0);
    console.log(`ISR shrank ${shrunk!.atMs - killedAt} ms after the follower's kill; ${figures.records} of ${ledger.counts().ackedRecords} acks=all records acknowledged with 2 of 3 replicas in sync`);
  }, 60_000);
});
