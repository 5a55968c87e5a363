// `node --import tsx engine/server/kafka/producer-perf-command.ts --bootstrap HOST:PORT,...`:
// runs Apache Kafka's ProducerPerformance (kafka-producer-perf-test) against a durolab cluster
// and prints its summary as one row beside the machine's load average (text table, or --json),
// the same figures durolab's own load reports (records/s, MB/s, latency percentiles).
import os from 'node:os';
import { intFlag, parseCommandFlags, runWhenDirect } from '../../common/flags.ts';
import { renderTable } from '../../common/text-table.ts';
import { kafkaClasspath, requireJavaAndMaven, runProducerPerformance, type ProducerPerfRow } from './java-tools.ts';

const HELP = `Usage: durolab producer-perf --bootstrap HOST:PORT[,...] [--topic T] [--num-records N] [--record-size BYTES] [--acks 0|1|all] [--json]
Runs org.apache.kafka.tools.ProducerPerformance (kafka-tools from Maven Central, test/java/pom.xml)
with --throughput -1 and prints its summary: records/s, MB/s, avg/max latency, p50/p95/p99/p99.9 (ms).`;

export interface PerfReport extends ProducerPerfRow {
  client: string;
  acks: string;
  recordSize: number;
  loadAverage1m: number;
}

export function perfTable(rows: readonly PerfReport[]): string {
  const header = ['client', 'acks', 'records', 'size B', 'records/s', 'MB/s', 'avg ms', 'p50 ms', 'p95 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'load 1m'];
  const body = rows.map((r) => [r.client, r.acks, String(r.records), String(r.recordSize), r.recordsPerSec.toFixed(1), r.mbPerSec.toFixed(2), r.avgLatencyMs.toFixed(1), String(r.p50Ms), String(r.p95Ms), String(r.p99Ms), String(r.p999Ms), r.maxLatencyMs.toFixed(0), r.loadAverage1m.toFixed(2)]);
  return renderTable(header, body, (c) => c >= 2);
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags(
    'producer-perf',
    argv,
    {
      bootstrap: { type: 'string' },
      topic: { type: 'string', default: 't' },
      'num-records': { type: 'string' },
      'record-size': { type: 'string' },
      acks: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
    },
    HELP,
  );
  if (!parsed) return 0;
  const v = parsed.values;
  if (!v.bootstrap) throw new Error('--bootstrap HOST:PORT[,...] is required (the "kafka bootstrap:" line of durolab cluster)');
  if (!['0', '1', 'all', '-1'].includes(v.acks!)) throw new Error(`--acks must be 0, 1 or all, got "${v.acks}"`);
  const numRecords = intFlag('--num-records', v['num-records'], 200_000, 1);
  const recordSize = intFlag('--record-size', v['record-size'], 1024, 1, 100 << 20);
  await requireJavaAndMaven();
  const cp = await kafkaClasspath();
  const { row } = await runProducerPerformance(cp, { bootstrap: v.bootstrap, topic: v.topic!, numRecords, recordSize, props: { acks: v.acks! } });
  const report: PerfReport = { client: 'java ProducerPerformance', acks: v.acks!, recordSize, loadAverage1m: os.loadavg()[0], ...row };
  console.log(v.json ? JSON.stringify(report) : perfTable([report]));
  return 0;
}

runWhenDirect(import.meta.url, 'producer-perf-command.ts', 'producer-perf', main);
