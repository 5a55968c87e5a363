// `durolab bench-peers`: durolab's broker vs its peer systems (Apache Kafka) under the same
// client load. The systems and the target axis value and driver of each come from the target
// registry (harness/targets/side-bench.ts). For each RF (1, 3) and load shape (closed loop,
// fixed rate) it writes one scenario with the target axis (matrix: { target, acks }) and runs it
// through `durolab bench` (the scenario runner: no second load loop), once per repetition,
// alternating the order of the targets so none always runs on a warmer machine. It then prints
// medians, ratios durolab / each peer and PASS/FAIL against "durolab >= 1.0x the peer's
// records/s and <= 1.0x its p99", and writes results/peers/<run id>.json and
// results/peers/latest.json (a row: each system's figures under its name, `ratios` per peer,
// `ratio` the first peer's).
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
import { cellSystem, labSystem } from '../targets/run-targets.ts';
import { benchSystems, type BenchSystem } from '../targets/side-bench.ts';

interface Figures { recordsPerSec: number; p50Us: number; p99Us: number; p999Us: number }
/** Each system's median figures under its name (durolab, kafka), beside the row's other fields. */
type Row = {
  rf: number; acks: string; load: string;
  /** The lab's system over each peer; `ratio`: the first peer's. */
  ratios: Record<string, Figures>; ratio: Figures; verdict: 'PASS' | 'FAIL'; loadAvg: number;
  repetitions: Record<string, Figures[]>;
} & Record<string, unknown>;

/** The value a system's target takes on the matrix's target axis (its target's axis name, else its kind). */
const axisValue = (s: BenchSystem): string => s.spec.axisName ?? s.kind;

/** Every list here holds at least one repetition. */
const median = (xs: number[]): number => medianOrNull(xs) ?? NaN;

const HELP = `usage: durolab bench-peers [--quick] [--repeat N>=1 (default 3)] [--duration SEC (default 4, + 2 s warm-up)] [--rate BATCHES_PER_S (default 500)]

The same client load (1 KiB records, 16 per batch, 8 connections, linger 0) against durolab's
broker and each peer system of the target registry (Apache Kafka), RF 1 and RF 3, acks 1 and all,
closed loop and a fixed rate, repeated (the systems alternate order); medians, ratios durolab /
each peer and the goal (>= 1.0x records/s,
<= 1.0x p99; fixed-rate rows compare coordinated-omission-corrected percentiles) per row, written
to results/peers/<run id>.json and results/peers/latest.json. --quick: one short row (RF 1, acks 1).`;

function scenarioYaml(name: string, rf: number, rate: number | null, order: BenchSystem[], quick: boolean, sec: { warmup: number; duration: number }): string {
  // Each system through its own driver: one workload.driver when they share it, else a driver axis with the other pairs excluded.
  const drivers = [...new Set(order.map((s) => s.bench.driver))];
  const exclude = drivers.length > 1 ? order.flatMap((s) => drivers.filter((d) => d !== s.bench.driver).map((d) => ({ target: axisValue(s), driver: d }))) : [];
  return stringify({
    question: `bench-peers ${name}: ${order.map((s) => s.spec.systemLabel).join(' vs ')}, same client load`,
    cluster: { brokers: rf, topic: 'peers', partitions: 1, replicationFactor: rf, minInsyncReplicas: rf > 1 ? 2 : 1 },
    // io is buffered by default: no system is asked for a write path it may not have.
    settings: { acks: 1 },
    matrix: { target: order.map(axisValue), acks: quick ? ['1'] : ['1', 'all'], ...(drivers.length > 1 ? { driver: drivers, exclude } : {}) },
    workload: {
      driver: drivers[0]!, recordBytes: '1KiB', recordsPerBatch: 16, connections: 8, pipelining: 1,
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
  const systems = benchSystems('peers');
  const lab = labSystem();
  const peers = systems.map((s) => s.system).filter((s) => s !== lab);
  const figs = new Map<string, { bySystem: Record<string, Figures[]>; load: number[] }>();
  for (const rf of rfs) for (const load of loads) for (let r = 0; r < repeat; r++) {
    const order = r % 2 === 0 ? systems : [...systems].reverse();
    const name = `peers-rf${rf}-${load.name}`;
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, scenarioYaml(name, rf, load.rate, order, values.quick, { warmup, duration }));
    console.log(`bench-peers: RF ${rf}, ${load.name}, repetition ${r + 1}/${repeat}, order ${order.map((s) => s.system).join(' then ')}`);
    const before = loadavg()[0]!;
    const res = await execa('node', ['bin/durolab.mjs', 'bench', file], { reject: false, all: true });
    const m = /results:\s+(\S+run\.json)/.exec(res.all ?? '');
    if (!m) { console.error(`bench-peers: ${name} wrote no run.json (exit ${res.exitCode}):\n${res.all}`); return 1; }
    const run = JSON.parse(readFileSync(m[1]!, 'utf8')) as RunResult;
    for (const c of run.cells) {
      if (c.status !== 'ok') { console.error(`bench-peers: ${name} cell ${c.id} ${c.status}: ${c.note ?? ''}`); return 1; }
      if (!c.throughput) { console.error(`bench-peers: ${name} cell ${c.id}: no repetition finished its load (throughput not measured)`); return 1; }
      const key = `${rf}|${String(c.params.acks)}|${load.name}`;
      const e = figs.get(key) ?? { bySystem: Object.fromEntries(systems.map((s) => [s.system, [] as Figures[]])), load: [] };
      // A fixed-rate row compares coordinated-omission-corrected percentiles (a stall delays the schedule too).
      const lat = load.rate !== null && c.correctedLatencyUs ? c.correctedLatencyUs : c.latencyUs;
      const f = { recordsPerSec: c.throughput.recordsPerSec, p50Us: lat.p50, p99Us: lat.p99, p999Us: lat.p999 };
      e.bySystem[cellSystem(run, c)]?.push(f);
      e.load.push(before, loadavg()[0]!);
      figs.set(key, e);
    }
  }
  const med = (fs: Figures[]): Figures => ({ recordsPerSec: median(fs.map((f) => f.recordsPerSec)), p50Us: median(fs.map((f) => f.p50Us)), p99Us: median(fs.map((f) => f.p99Us)), p999Us: median(fs.map((f) => f.p999Us)) });
  const over = (d: Figures, k: Figures): Figures => ({ recordsPerSec: d.recordsPerSec / k.recordsPerSec, p50Us: d.p50Us / k.p50Us, p99Us: d.p99Us / k.p99Us, p999Us: d.p999Us / k.p999Us });
  const rows: Row[] = [...figs].map(([key, e]) => {
    const [rf, acks, load] = key.split('|') as [string, string, string];
    const m = Object.fromEntries(Object.entries(e.bySystem).map(([s, xs]) => [s, med(xs)]));
    const ratios = Object.fromEntries(peers.map((p) => [p, over(m[lab]!, m[p]!)]));
    const pass = Object.values(ratios).every((x) => x.recordsPerSec >= 1 && x.p99Us <= 1);
    return { rf: Number(rf), acks, load, ...m, ratios, ratio: ratios[peers[0]!]!, verdict: pass ? 'PASS' : 'FAIL', loadAvg: median(e.load), repetitions: e.bySystem };
  });
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const fig = (r: Row, s: string) => r[s] as Figures;
  // With one peer the ratio columns read "x rec/s"; with more, each is named "x <peer> rec/s".
  const px = (p: string, what: string) => (peers.length > 1 ? `x ${p} ${what}` : `x ${what}`);
  const head = ['RF', 'acks', 'load', ...systems.map((s) => `${s.system} rec/s`), ...peers.flatMap((p) => ['rec/s', 'p50', 'p99', 'p99.9'].map((w) => px(p, w))), ...systems.map((s) => `${s.system} p99 µs`), 'verdict', 'loadavg'];
  const body = rows.map((r) => [
    String(r.rf), r.acks, r.load,
    ...systems.map((s) => fmt(fig(r, s.system).recordsPerSec)),
    ...peers.flatMap((p) => [r.ratios[p]!.recordsPerSec, r.ratios[p]!.p50Us, r.ratios[p]!.p99Us, r.ratios[p]!.p999Us].map((x) => x.toFixed(2))),
    ...systems.map((s) => fmt(fig(r, s.system).p99Us)),
    r.verdict, r.loadAvg.toFixed(2),
  ]);
  console.log(renderTable(head, body, (i) => i >= 3 && i < head.length - 2));
  const runId = newRunId();
  mkdirSync('results/peers', { recursive: true });
  const out = join('results/peers', `${runId}.json`);
  const json = JSON.stringify({ runId, goal: `${lab} >= 1.0x each peer's (${peers.join(', ')}) records/s and <= 1.0x its p99`, repetitions: repeat, quick: values.quick, rows }, null, 2);
  writeFileAtomic(out, json);
  writeFileAtomic('results/peers/latest.json', json);
  console.log(`results: ${out}`);
  return rows.every((r) => r.verdict === 'PASS') ? 0 : 1;
}
