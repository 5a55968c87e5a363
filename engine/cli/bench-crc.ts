// `durolab engine bench --crc`: CRC-32C throughput of every implementation that runs here
// (the native addon with its own kernel, ISA-L alone through the same addon, @node-rs/crc32),
// side by side per buffer size, the median of repetitions, and the goal (>= 20 GB/s at 64 KiB
// and larger, for the implementation the engine runs) as PASS/FAIL.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { crc32cImplementation, crc32cImplementations, describeCrc32c, type Crc32cImplementation } from '../records/index.ts';
import { median } from '../common/stats.ts';
import { renderTable } from '../common/text-table.ts';
import { fmtBatch } from './text-format.ts';

export const CRC_SIZES = [4096, 65536, 1048576, 16 * 1048576] as const;

/** The goal: at least this many GB/s (10^9 bytes) on buffers of at least CRC_GOAL_MIN_BYTES. */
export const CRC_GOAL_GBPS = 20;
export const CRC_GOAL_MIN_BYTES = 65536;

export interface CrcBenchOptions {
  /** Repetitions per implementation and size (alternating order); the median is reported. */
  reps: number;
  /** Seconds each repetition runs for. */
  seconds: number;
  sizes?: readonly number[];
}

export interface CrcBenchCell {
  implementation: string;
  bytes: number;
  /** Median over the repetitions, 10^9 bytes per second. */
  gbps: number;
  repsGbps: number[];
}

export interface CrcBenchResult {
  kind: 'durolab-crc-bench';
  schemaVersion: 1;
  startedAt: string;
  options: { reps: number; seconds: number };
  /** Which implementation the engine runs (the first column), and why not the addon when it is not. */
  engineUses: string;
  environment: { cpu: string; cores: number; node: string; loadAverage: { start: number[]; end: number[] } };
  implementations: Array<{ name: string; detail: string }>;
  cells: CrcBenchCell[];
  goal: { description: string; pass: boolean | null; checks: Array<{ bytes: number; gbps: number; pass: boolean }> };
}

/** One repetition: calls on the same buffer until `seconds` have passed; GB/s. */
function measure(impl: Crc32cImplementation, buf: Buffer, seconds: number): number {
  const fn = impl.crc32c;
  // Enough calls between clock reads that reading the clock costs nothing measurable.
  const perCheck = Math.max(1, Math.floor(4 * 2 ** 20 / buf.length));
  let sink = 0;
  let calls = 0;
  const t0 = performance.now();
  const stop = t0 + seconds * 1000;
  let t = t0;
  do {
    for (let i = 0; i < perCheck; i++) sink ^= fn(buf);
    calls += perCheck;
    t = performance.now();
  } while (t < stop);
  if (sink === 0.5) throw new Error('unreachable: keeps the CRC results alive');
  return (calls * buf.length) / ((t - t0) / 1000) / 1e9;
}

export function runCrcBench(opts: CrcBenchOptions): CrcBenchResult {
  const impls = crc32cImplementations();
  const sizes = opts.sizes ?? CRC_SIZES;
  const load0 = os.loadavg();
  const startedAt = new Date().toISOString();
  const cells: CrcBenchCell[] = [];
  for (const bytes of sizes) {
    const buf = randomBytes(bytes);
    for (const impl of impls) impl.crc32c(buf); // warm-up: code paths and the buffer's pages
    const reps = new Map<string, number[]>(impls.map((i) => [i.name, []]));
    for (let rep = 0; rep < opts.reps; rep++) {
      const order = rep % 2 === 0 ? impls : [...impls].reverse();
      for (const impl of order) reps.get(impl.name)!.push(measure(impl, buf, opts.seconds));
    }
    for (const impl of impls) {
      const xs = reps.get(impl.name)!;
      cells.push({ implementation: impl.name, bytes, gbps: round2(median(xs) ?? NaN), repsGbps: xs.map(round2) });
    }
  }
  // The goal is the engine's CRC: the addon's (native, or isa-l when forced), never the npm fallback.
  const engine = impls[0]!.name;
  const judged = engine === '@node-rs/crc32' ? [] : cells.filter((c) => c.implementation === engine && c.bytes >= CRC_GOAL_MIN_BYTES);
  const checks = judged.map((c) => ({ bytes: c.bytes, gbps: c.gbps, pass: c.gbps >= CRC_GOAL_GBPS }));
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  return {
    kind: 'durolab-crc-bench',
    schemaVersion: 1,
    startedAt,
    options: { reps: opts.reps, seconds: opts.seconds },
    engineUses: describeCrc32c(),
    environment: { cpu, cores: os.availableParallelism(), node: process.version, loadAverage: { start: load0.map(round2), end: os.loadavg().map(round2) } },
    implementations: impls.map((i) => ({ name: i.name, detail: i.detail })),
    cells,
    goal: {
      description: `CRC-32C of the engine's addon (${engine === '@node-rs/crc32' ? 'not running' : engine}) >= ${CRC_GOAL_GBPS} GB/s on buffers of ${fmtBatch(CRC_GOAL_MIN_BYTES)} and larger`,
      // null: the addon did not load, so nothing measured it (the reason is in engineUses).
      pass: checks.length === 0 ? null : checks.every((c) => c.pass),
      checks,
    },
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

export function formatCrcBench(r: CrcBenchResult): string {
  const names = r.implementations.map((i) => i.name);
  const gbps = (name: string, bytes: number) => r.cells.find((c) => c.implementation === name && c.bytes === bytes)?.gbps;
  const sizes = [...new Set(r.cells.map((c) => c.bytes))];
  // The engine's implementation (first) against each other one.
  const others = names.slice(1);
  const header = ['buffer', ...names.map((n) => `${n} GB/s`), ...others.map((n) => `${names[0]} / ${n}`)];
  const rows = sizes.map((bytes) => {
    const vals = names.map((n) => gbps(n, bytes) ?? NaN);
    return [fmtBatch(bytes), ...vals.map((v) => v.toFixed(2)), ...vals.slice(1).map((v) => `${(vals[0]! / v).toFixed(2)}x`)];
  });
  const g = r.goal;
  const verdict = g.pass === null ? 'N/A ' : g.pass ? 'PASS' : 'FAIL';
  return [
    `CRC-32C bench: median of ${r.options.reps} repetition(s) of ${r.options.seconds} s per implementation and buffer size; GB = 10^9 bytes`,
    `engine uses: ${crc32cImplementation.fallbackReason === null ? crc32cImplementation.name : r.engineUses}`,
    ...r.implementations.map((i) => `  ${i.name}: ${i.detail}`),
    `host: ${r.environment.cpu}, ${r.environment.cores} cores, node ${r.environment.node}; load average ${r.environment.loadAverage.start.join(' ')} -> ${r.environment.loadAverage.end.join(' ')} (the machine may be shared: re-measure doubtful rows)`,
    '',
    renderTable(header, rows),
    '',
    `${verdict}  ${g.description}` + (g.pass === null ? `: the addon is not running (${crc32cImplementation.fallbackReason})` : ''),
    ...g.checks.map((c) => `        ${c.pass ? 'ok  ' : 'FAIL'} ${fmtBatch(c.bytes)}: ${c.gbps.toFixed(2)} GB/s (limit ${CRC_GOAL_GBPS})`),
  ].join('\n');
}
