// The Java client (kafka-clients from Maven Central, on the machine's JDK) against a 3-broker
// durolab cluster: KafkaWitness produces with acks=all and enable.idempotence=true and consumes
// back by assign(), byte-identical (and kcat reads the same records), and again through a
// consumer group (FindCoordinator, JoinGroup, SyncGroup, OffsetFetch, OffsetCommit); Apache Kafka's
// ProducerPerformance runs against it and its summary parses into a row. A missing java or mvn
// fails with its reason. Maven fetches once into ~/.m2; later runs resolve offline.
import { rmSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../cluster.ts';
import { tempDir } from '../test-support.ts';
import { kcatConsume, requireKcat } from './kafka-client-support.ts';
import { kafkaClasspath, parseProducerPerformance, requireJavaAndMaven, runJavaWitness, runProducerPerformance } from './java-tools.ts';
import { perfTable } from './producer-perf-command.ts';

let cluster: Cluster;
let dir = '';
let classpath = '';
const bootstrap = (): string => cluster.brokers.map((b) => b.kafka).join(',');

beforeAll(async () => {
  await requireKcat();
  await requireJavaAndMaven();
  classpath = await kafkaClasspath();
  dir = tempDir('kafka-java');
  cluster = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    topics: [
      { name: 'java', partitions: 3, replicationFactor: 3 },
      { name: 'perf', partitions: 3, replicationFactor: 3 },
      { name: 'javagroup', partitions: 3, replicationFactor: 3 },
    ],
    set: ['min.insync.replicas=2'],
  });
  await cluster.waitForLeaders();
}, 900_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Java client as a witness', () => {
  it('parses ProducerPerformance summary lines and refuses output without one', () => {
    const out = [
      '40310 records sent, 7983.8 records/sec (7.80 MB/sec), 3753.8 ms avg latency, 6267.0 ms max latency.',
      '200000 records sent, 5290.6 records/sec (5.17 MB/sec), 4827.25 ms avg latency, 9501.00 ms max latency, 4860 ms 50th, 7512 ms 95th, 8856 ms 99th, 9253 ms 99.9th.',
    ].join('\n');
    expect(parseProducerPerformance(out)).toEqual({ records: 200000, recordsPerSec: 5290.6, mbPerSec: 5.17, avgLatencyMs: 4827.25, maxLatencyMs: 9501, p50Ms: 4860, p95Ms: 7512, p99Ms: 8856, p999Ms: 9253 });
    expect(() => parseProducerPerformance(out.split('\n')[0])).toThrow(/no summary line/);
  });

  it('kafka-clients produces 5,000 records (acks=all, idempotent) and consumes them back byte-identical', async () => {
    const r = await runJavaWitness(classpath, bootstrap(), 'java', 5000);
    process.stderr.write(`java witness: ${JSON.stringify(r)}\n`);
    expect(r).toMatchObject({ produced: 5000, consumed: 5000, distinct: 5000, mismatches: 0, partitions: 3, mode: 'assign' });
    // An independent reader sees the same records: librdkafka through kcat.
    let total = 0;
    for (let p = 0; p < 3; p++) {
      const got = await kcatConsume(bootstrap(), 'java', p);
      total += got.length;
      for (const m of got) {
        const i = Number(m.key!.slice(1));
        expect(i % 3).toBe(p);
        expect(m.payload!.startsWith(`java witness ${i} `)).toBe(true);
      }
    }
    expect(total).toBe(5000);
  }, 300_000);

  it('the Java consumer reads them back through a consumer group', async () => {
    const r = await runJavaWitness(classpath, bootstrap(), 'javagroup', 3000, 'group');
    process.stderr.write(`java witness (group): ${JSON.stringify(r)}\n`);
    expect(r).toMatchObject({ produced: 3000, consumed: 3000, distinct: 3000, mismatches: 0, partitions: 3, mode: 'group' });
  }, 300_000);

  it('ProducerPerformance (kafka-producer-perf-test) runs against durolab and parses into a row', async () => {
    const { row } = await runProducerPerformance(classpath, { bootstrap: bootstrap(), topic: 'perf', numRecords: 20_000, recordSize: 1024, props: { acks: '1' } });
    process.stderr.write(`${perfTable([{ client: 'java ProducerPerformance', acks: '1', recordSize: 1024, loadAverage1m: os.loadavg()[0], ...row }])}\n`);
    expect(row.records).toBe(20_000);
    expect(row.recordsPerSec).toBeGreaterThan(0);
    expect(row.p50Ms).toBeLessThanOrEqual(row.p99Ms);
    expect(row.p99Ms).toBeLessThanOrEqual(row.p999Ms);
    const end = await Promise.all([0, 1, 2].map(async (p) => (await kcatConsume(bootstrap(), 'perf', p)).length));
    expect(end.reduce((a, b) => a + b, 0)).toBe(20_000);
  }, 600_000);
});
