// `durolab bench-peers`: durolab's broker vs Apache Kafka under the same Kafka-client load.
// For each RF (1, 3) and load shape (closed loop, fixed rate) it writes one scenario with the
// target axis (matrix: { target, acks }) and runs it through `durolab bench` (the scenario
// runner: no second load loop), once per repetition, alternating the order of the two targets
// so neither always runs on a warmer machine. It then prints medians, ratios durolab / Kafka and
// PASS/FAIL against "durolab >= 1.0x Kafka's records/s and <= 1.0x its p99", and writes
// results/peers/<run id>.json and results/peers/latest.json.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import type { RunResult } from '../results/types.ts';
import { newRunId } from '../results/store.ts';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import { parseCommandFlags, parseIntFlag, parseNumberFlag } from '../../engine/common/flags.ts';
import { median as medianOrNull } from '../../engine/common/stats.ts';
import { renderTable } from '../../engine/common/text-table.ts';

const TARGETS = ['durolab', 'kafka'] as const;
type Target = (typeof TARGETS)[number];

interface Figures { recordsPerSec: number; p50Us: number; p99Us: number; p999Us: number }
interface Row {
  rf: number; acks: string; load: string;
  durolab: Figures; kafka: Figures;
  ratio: Figures; verdict: 'PASS' | 'FAIL'; loadAvg: number;
  repetitions: { durolab: Figures[]; kafka: Figures[] };
}

/** Every list here holds at least one repetition. */
const median = (xs: number[]): number => medianOrNull(xs) ?? NaN;

const HELP = `usage: durolab bench-peers [--quick] [--repeat N>=1 (default 3)] [--duration SEC (default 4, + 2 s warm-up)] [--rate BATCHES_PER_S (default 500)]

The same Kafka-client load (1 KiB records, 16 per batch, 8 connections, linger 0) against durolab's
broker and Apache Kafka, RF 1 and RF 3, acks 1 and all, closed loop and a fixed rate, repeated
(the two systems alternate order); medians, ratios durolab / Kafka and the goal (>= 1.0x records/s,
<= 1.0x p99; fixed-rate rows compare coordinated-omission-corrected percentiles) per row, written
to results/peers/<run id>.json and results/peers/latest.json. --quick: one short row (RF 1, acks 1).`;

function scenarioYaml(name: string, rf: number, rate: number | null, order: Target[], quick: boolean, sec: { warmup: number; duration: number }): string {
  return stringify({
    question: `bench-peers ${name}: durolab's broker vs Apache Kafka, same Kafka-client load`,
    cluster: { brokers: rf, topic: 'peers', partitions: 1, replicationFactor: rf, minInsyncReplicas: rf > 1 ? 2 : 1 },
    settings: { io: 'buffered', acks: 1 },
    matrix: { target: order, acks: quick ? ['1'] : ['1', 'all'] },
    workload: {
      driver: 'kafka', recordBytes: '1KiB', recordsPerBatch: 16, connections: 8, pipelining: 1,
      rate: rate ?? 'closed', warmup: `${sec.warmup}s`, duration: `${sec.duration}s`, repetitions: 1,
    },
  });
}

export async function main(argv: string[]): Promise<number> {
  let repeat: number, duration: number, rate: number, quick: boolean;
  try {
    const parsed = parseCommandFlags('bench-peers', argv, {
      quick: { type: 'boolean', default: false },
      repeat: { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
    }, HELP);
    if (parsed === null) return 0;
    const { values } = parsed;
    quick = values.quick === true;
    repeat = quick ? 1 : values.repeat === undefined ? 3 : parseIntFlag('--repeat', values.repeat, 1, 100);
    duration = quick ? 3 : values.duration === undefined ? 4 : parseNumberFlag('--duration', values.duration, 1, 3600);
    rate = values.rate === undefined ? 500 : parseNumberFlag('--rate', values.rate, 1, 1_000_000);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const values = { quick };
  const warmup = values.quick ? 1 : 2;
  const rfs = values.quick ? [1] : [1, 3];
  const loads: { name: string; rate: number | null }[] = values.quick ? [{ name: 'closed', rate: null }] : [{ name: 'closed', rate: null }, { name: `rate-${rate}`, rate }];
  const dir = mkdtempSync(join(tmpdir(), 'durolab-peers-'));
  const figs = new Map<string, { durolab: Figures[]; kafka: Figures[]; load: number[] }>();
  for (const rf of rfs) for (const load of loads) for (let r = 0; r < repeat; r++) {
    const order: Target[] = r % 2 === 0 ? ['durolab', 'kafka'] : ['kafka', 'durolab'];
    const name = `peers-rf${rf}-${load.name}`;
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, scenarioYaml(name, rf, load.rate, order, values.quick, { warmup, duration }));
    console.log(`bench-peers: RF ${rf}, ${load.name}, repetition ${r + 1}/${repeat}, order ${order.join(' then ')}`);
    const before = loadavg()[0]!;
    const res = await execa('node', ['bin/durolab.mjs', 'bench', file], { reject: false, all: true });
    const m = /results:\s+(\S+run\.json)/.exec(res.all ?? '');
    if (!m) { console.error(`bench-peers: ${name} wrote no run.json (exit ${res.exitCode}):\n${res.all}`); return 1; }
    const run = JSON.parse(readFileSync(m[1]!, 'utf8')) as RunResult;
    for (const c of run.cells) {
      if (c.status !== 'ok') { console.error(`bench-peers: ${name} cell ${c.id} ${c.status}: ${c.note ?? ''}`); return 1; }
      const t = (c.target ?? run.target) as string;
      const key = `${rf}|${String(c.params.acks)}|${load.name}`;
      const e = figs.get(key) ?? { durolab: [], kafka: [], load: [] };
      // A fixed-rate row compares coordinated-omission-corrected percentiles (a stall delays the schedule too).
      const lat = load.rate !== null && c.correctedLatencyUs ? c.correctedLatencyUs : c.latencyUs;
      const f = { recordsPerSec: c.throughput.recordsPerSec, p50Us: lat.p50, p99Us: lat.p99, p999Us: lat.p999 };
      if (t === 'kafka') e.kafka.push(f); else e.durolab.push(f);
      e.load.push(before, loadavg()[0]!);
      figs.set(key, e);
    }
  }
  const med = (fs: Figures[]): Figures => ({ recordsPerSec: median(fs.map((f) => f.recordsPerSec)), p50Us: median(fs.map((f) => f.p50Us)), p99Us: median(fs.map((f) => f.p99Us)), p999Us: median(fs.map((f) => f.p999Us)) });
  const rows: Row[] = [...figs].map(([key, e]) => {
    const [rf, acks, load] = key.split('|') as [string, string, string];
    const d = med(e.durolab), k = med(e.kafka);
    const ratio = { recordsPerSec: d.recordsPerSec / k.recordsPerSec, p50Us: d.p50Us / k.p50Us, p99Us: d.p99Us / k.p99Us, p999Us: d.p999Us / k.p999Us };
    return { rf: Number(rf), acks, load, durolab: d, kafka: k, ratio, verdict: ratio.recordsPerSec >= 1 && ratio.p99Us <= 1 ? 'PASS' : 'FAIL', loadAvg: median(e.load), repetitions: { durolab: e.durolab, kafka: e.kafka } };
  });
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const head = ['RF', 'acks', 'load', 'durolab rec/s', 'kafka rec/s', 'x rec/s', 'x p50', 'x p99', 'x p99.9', 'durolab p99 µs', 'kafka p99 µs', 'verdict', 'loadavg'];
  const body = rows.map((r) => [String(r.rf), r.acks, r.load, fmt(r.durolab.recordsPerSec), fmt(r.kafka.recordsPerSec), r.ratio.recordsPerSec.toFixed(2), r.ratio.p50Us.toFixed(2), r.ratio.p99Us.toFixed(2), r.ratio.p999Us.toFixed(2), fmt(r.durolab.p99Us), fmt(r.kafka.p99Us), r.verdict, r.loadAvg.toFixed(2)]);
  console.log(renderTable(head, body, (i) => i >= 3 && i <= 10));
  const runId = newRunId();
  mkdirSync('results/peers', { recursive: true });
  const out = join('results/peers', `${runId}.json`);
  const json = JSON.stringify({ runId, goal: "durolab >= 1.0x Kafka's records/s and <= 1.0x its p99", repetitions: repeat, quick: values.quick, rows }, null, 2);
  writeFileAtomic(out, json);
  writeFileAtomic('results/peers/latest.json', json);
  console.log(`results: ${out}`);
  return rows.every((r) => r.verdict === 'PASS') ? 0 : 1;
}
