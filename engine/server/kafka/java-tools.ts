// Apache Kafka's own Java tools as witnesses against durolab: the classpath of kafka-clients and
// kafka-tools resolved by Maven from Maven Central into Maven's cache (~/.m2, outside the
// checkout; the pom is test/java/pom.xml), the small KafkaWitness program run in Java's
// single-file mode, and org.apache.kafka.tools.ProducerPerformance (what
// kafka-producer-perf-test.sh runs) with its final summary line parsed into a row comparable
// to durolab's own load figures.
import os from 'node:os';
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { repoRoot } from '../../common/repo-root.ts';

export const JAVA_DIR = path.join(repoRoot(), 'test', 'java');

/** java and mvn must exist; a missing one fails with its reason (under CI=true as everywhere). */
export async function requireJavaAndMaven(): Promise<void> {
  for (const [tool, args, pkg] of [
    ['java', ['-version'], 'openjdk-17-jdk-headless'],
    ['mvn', ['-v'], 'maven'],
  ] as const) {
    const r = await execa(tool, [...args], { reject: false });
    if (r.exitCode !== 0) throw new Error(`${tool} is not installed (${r.stderr || r.message}): install the Debian package ${pkg} (scripts/install-system-deps.sh)`);
  }
}

/** kafka-clients + kafka-tools jars; Maven fetches them once into ~/.m2, later runs are offline. */
export async function kafkaClasspath(): Promise<string> {
  const out = path.join(os.tmpdir(), `durolab-kafka-classpath-${process.getuid?.() ?? 0}.txt`);
  const r = await execa('mvn', ['-B', '-q', '-f', path.join(JAVA_DIR, 'pom.xml'), 'dependency:build-classpath', `-Dmdep.outputFile=${out}`], { reject: false, timeout: 600_000 });
  if (r.exitCode !== 0 || !existsSync(out)) throw new Error(`mvn dependency:build-classpath (test/java/pom.xml) failed (exit ${r.exitCode}): ${(r.stdout + r.stderr).slice(-2000)}`);
  return readFileSync(out, 'utf8').trim();
}

export interface WitnessResult {
  produced: number;
  consumed: number;
  distinct: number;
  mismatches: number;
  partitions: number;
  mode: 'assign' | 'group';
  produceMs: number;
  consumeMs: number;
}

/** Runs test/java/KafkaWitness.java: n records with acks=all + idempotence, consumed back by assign() or a group. */
export async function runJavaWitness(classpath: string, bootstrap: string, topic: string, n: number, mode: 'assign' | 'group' = 'assign'): Promise<WitnessResult> {
  // The source holds non-ASCII characters: compiled as UTF-8 whatever the locale (a shell without LANG reads it as ASCII).
  const r = await execa('java', ['-Dfile.encoding=UTF-8', '-cp', classpath, path.join(JAVA_DIR, 'KafkaWitness.java'), bootstrap, topic, String(n), mode], { reject: false, timeout: 180_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`KafkaWitness exited ${r.exitCode} without its result line: ${r.stderr.slice(-3000)}`);
  return JSON.parse(line) as WitnessResult;
}

/** ProducerPerformance's summary, latencies in milliseconds as it prints them. */
export interface ProducerPerfRow {
  records: number;
  recordsPerSec: number;
  mbPerSec: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  p999Ms: number;
}

const SUMMARY =
  /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$/m;

/** The final line (`N records sent, … ms 99.9th.`); the periodic progress lines lack percentiles. */
export function parseProducerPerformance(output: string): ProducerPerfRow {
  const m = SUMMARY.exec(output);
  if (!m) throw new Error(`ProducerPerformance output has no summary line ("N records sent, … ms 99.9th."): ${output.slice(-1500)}`);
  const n = m.slice(1).map(Number);
  return { records: n[0], recordsPerSec: n[1], mbPerSec: n[2], avgLatencyMs: n[3], maxLatencyMs: n[4], p50Ms: n[5], p95Ms: n[6], p99Ms: n[7], p999Ms: n[8] };
}

export interface ProducerPerfOptions {
  bootstrap: string;
  topic: string;
  numRecords: number;
  recordSize: number;
  /** Producer properties beyond bootstrap.servers, e.g. { acks: '1' }. */
  props: Record<string, string>;
}

export async function runProducerPerformance(classpath: string, o: ProducerPerfOptions): Promise<{ row: ProducerPerfRow; output: string }> {
  const props = Object.entries({ 'bootstrap.servers': o.bootstrap, ...o.props }).map(([k, v]) => `${k}=${v}`);
  const args = ['-cp', classpath, 'org.apache.kafka.tools.ProducerPerformance', '--topic', o.topic, '--num-records', String(o.numRecords), '--record-size', String(o.recordSize), '--throughput', '-1', '--producer-props', ...props];
  const r = await execa('java', args, { reject: false, timeout: 900_000 });
  const output = `${r.stdout}\n${r.stderr}`;
  if (r.exitCode !== 0) throw new Error(`ProducerPerformance exited ${r.exitCode}: ${output.slice(-2000)}`);
  return { row: parseProducerPerformance(r.stdout), output };
}
