// One timed run of one side of a bench row: the engine appending to a fresh partition, or
// the physical baseline appending to a fresh file (fio, or a raw fs.writeSync loop).
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { Log, type IoMode } from '../storage/index.ts';
import { LatencyRecorder, type LatencySummary } from '../common/latency.ts';
import { encodeSizedBatch } from './sized-batch.ts';
import type { BenchRowSpec } from './bench-plan.ts';

export type SideKind = 'engine' | 'fio' | 'writeSync';

export interface SideResult {
  kind: SideKind;
  bytes: number;
  ops: number;
  seconds: number;
  /** 10^6 bytes per second. */
  mbps: number;
  /** Per operation: engine = around Log.append (its flush included); fio = write clat (fdatasync excluded); writeSync = the write call. */
  latUs: LatencySummary;
  syncs: number;
  /** fdatasync latency (engine: its flushes; fio: jobs[].sync.lat_ns), null when the run never synced. */
  syncLatUs: LatencySummary | null;
  /** p50 of one operation including its sync when it syncs every write: the figure the per-batch target compares. */
  opP50Us: number;
}

export interface RunLimits {
  volumeBytes: number;
  maxSeconds: number;
}

export function runEngineSide(spec: BenchRowSpec, dir: string, limits: RunLimits): SideResult {
  const batch = encodeSizedBatch(spec.batchBytes, spec.recordsPerBatch, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
  const log = Log.open(dir, { io: spec.mode, flush: spec.flush, sync: 'fdatasync', verifyBatches: spec.verify });
  const lat = new LatencyRecorder();
  const maxMs = limits.maxSeconds * 1000;
  const opts = { assignOffsets: true };
  let bytes = 0;
  let ops = 0;
  try {
    // One clock read per append (performance.now: a double, no BigInt to allocate): each
    // latency runs from the end of the previous append, so it also holds this loop's own
    // bookkeeping (~0.1 µs), as fio's clat holds fio's.
    const start = performance.now();
    let t0 = start;
    while (bytes < limits.volumeBytes && t0 - start < maxMs) {
      // The same buffer every time: the log stamps the base offset in place (outside the CRC), as a broker does with a request's batch.
      log.append(batch, opts);
      const t1 = performance.now();
      lat.record((t1 - t0) * 1000);
      t0 = t1;
      bytes += batch.length;
      ops++;
    }
    const stats = log.stats();
    const seconds = (t0 - start) / 1000;
    const latUs = lat.summary();
    return {
      kind: 'engine',
      bytes,
      ops,
      seconds,
      mbps: bytes / seconds / 1e6,
      latUs,
      syncs: stats.flushes,
      syncLatUs: stats.flushes > 0 ? stats.flushTimeUs : null,
      opP50Us: latUs.p50,
    };
  } finally {
    log.close();
  }
}

/** fio's JSON, reduced to what a row needs. Exported for tests. */
export function parseFioJson(stdout: string, syncEvery: number): SideResult {
  const start = stdout.indexOf('{');
  if (start < 0) throw new Error(`fio printed no JSON: ${JSON.stringify(stdout.slice(0, 200))}`);
  let doc: any;
  try {
    doc = JSON.parse(stdout.slice(start));
  } catch (e) {
    throw new Error(`fio's JSON output does not parse (${(e as Error).message}): ${JSON.stringify(stdout.slice(start, start + 200))}`);
  }
  const job = doc?.jobs?.[0];
  const w = job?.write;
  if (!w || typeof w.io_bytes !== 'number' || typeof w.runtime !== 'number') {
    throw new Error('fio JSON: expected jobs[0].write.io_bytes and jobs[0].write.runtime');
  }
  if (job.error) throw new Error(`fio job error ${job.error}`);
  const pct = (p: Record<string, number> | undefined, key: string) => Math.round((p?.[key] ?? 0) / 1000);
  const fromNs = (l: any): LatencySummary => ({
    p50: pct(l?.percentile, '50.000000'),
    p90: pct(l?.percentile, '90.000000'),
    p99: pct(l?.percentile, '99.000000'),
    p999: pct(l?.percentile, '99.900000'),
    p9999: pct(l?.percentile, '99.990000'),
    max: Math.round((l?.max ?? 0) / 1000),
    mean: Math.round((l?.mean ?? 0) / 100) / 10,
    count: l?.N ?? 0,
  });
  const latUs = fromNs(w.clat_ns);
  latUs.count = w.total_ios ?? latUs.count;
  const syncLat = job.sync?.lat_ns;
  const syncs = typeof syncLat?.N === 'number' ? syncLat.N : 0;
  const syncLatUs = syncs > 0 ? fromNs(syncLat) : null;
  // fio runtime is whole milliseconds; a run shorter than 1 ms would divide by zero.
  const seconds = Math.max(w.runtime, 1) / 1000;
  return {
    kind: 'fio',
    bytes: w.io_bytes,
    ops: w.total_ios ?? 0,
    seconds,
    mbps: w.io_bytes / seconds / 1e6,
    latUs,
    syncs,
    syncLatUs,
    // fio reports write and fdatasync apart; one per-batch operation is one of each.
    opP50Us: latUs.p50 + (syncEvery === 1 && syncLatUs ? syncLatUs.p50 : 0),
  };
}

export function fioArgs(spec: BenchRowSpec, file: string, limits: RunLimits): string[] {
  const args = [
    '--name=durolab-baseline',
    `--filename=${file}`,
    '--rw=write',
    `--bs=${spec.batchBytes}`,
    `--size=${Math.max(spec.batchBytes, Math.floor(limits.volumeBytes / spec.batchBytes) * spec.batchBytes)}`,
    `--runtime=${Math.max(1, Math.round(limits.maxSeconds * 1000))}ms`,
    '--ioengine=psync',
    '--file_append=1',
    // The default invalidates the page cache before the run and forces writeback of a buffered file.
    '--invalidate=0',
    // A log does not preallocate; fio would, and its writes would then land in allocated extents.
    '--fallocate=none',
    '--output-format=json',
  ];
  if (spec.mode === 'direct') args.push('--direct=1');
  if (spec.mode === 'dsync') args.push('--sync=dsync');
  if (spec.syncEvery > 0) args.push(`--fdatasync=${spec.syncEvery}`);
  return args;
}

export async function runFioSide(spec: BenchRowSpec, file: string, limits: RunLimits, signal?: AbortSignal): Promise<SideResult> {
  const args = fioArgs(spec, file, limits);
  const r = await execa('fio', args, { reject: false, cancelSignal: signal, forceKillAfterDelay: 2000, timeout: Math.round(limits.maxSeconds * 1000) + 30_000 });
  if (r.isCanceled) throw new Error('fio was cancelled');
  if (r.exitCode !== 0) {
    throw new Error(`fio ${args.join(' ')} exited with ${r.exitCode ?? r.signal}: ${(r.stderr || r.stdout).toString().trim().slice(0, 400)}`);
  }
  return parseFioJson(r.stdout.toString(), spec.syncEvery);
}

/** tsconfig's lib has no WebAssembly types: the one constructor used here. */
const WasmMemory = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer } } })
  .WebAssembly.Memory;

/** Page-aligned memory for O_DIRECT (Buffer.alloc is not aligned): a Buffer over a WebAssembly.Memory, which stays referenced through `keep`. */
function alignedBuffer(bytes: number): { keep: object; buf: Buffer } {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  const keep = new WasmMemory({ initial: pages, maximum: pages });
  return { keep, buf: Buffer.from(keep.buffer, 0, bytes) };
}

function openFlags(mode: IoMode): number {
  const c = fs.constants;
  let f = c.O_WRONLY | c.O_CREAT | c.O_EXCL;
  if (mode === 'direct') f |= c.O_DIRECT;
  if (mode === 'dsync') f |= c.O_DSYNC;
  return f;
}

/** The fallback baseline: fs.writeSync appends of bs bytes with the same open flags and sync cadence as fio would use. */
export function runWriteSyncSide(spec: BenchRowSpec, file: string, limits: RunLimits): SideResult {
  const mem = alignedBuffer(spec.batchBytes);
  const buf = mem.buf;
  for (let i = 0; i < buf.length; i++) buf[i] = 0x61 + (i % 26);
  const fd = fs.openSync(file, openFlags(spec.mode), 0o644);
  const lat = new LatencyRecorder();
  const opLat = new LatencyRecorder();
  const syncLat = new LatencyRecorder();
  const maxMs = limits.maxSeconds * 1000;
  let pos = 0;
  let ops = 0;
  let syncs = 0;
  let elapsedMs = 0;
  try {
    // Timed like the engine side: one performance.now() per step, each op from the end of the previous one.
    const start = performance.now();
    let t0 = start;
    while (pos < limits.volumeBytes && t0 - start < maxMs) {
      let off = 0;
      while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off, pos + off);
      const t1 = performance.now();
      let t2 = t1;
      ops++;
      if (spec.syncEvery > 0 && ops % spec.syncEvery === 0) {
        fs.fdatasyncSync(fd);
        t2 = performance.now();
        syncLat.record((t2 - t1) * 1000);
        syncs++;
      }
      lat.record((t1 - t0) * 1000);
      opLat.record((t2 - t0) * 1000);
      pos += buf.length;
      t0 = t2;
    }
    elapsedMs = t0 - start;
  } finally {
    fs.closeSync(fd);
    void mem.keep;
  }
  const seconds = elapsedMs / 1000;
  return {
    kind: 'writeSync',
    bytes: pos,
    ops,
    seconds,
    mbps: pos / seconds / 1e6,
    latUs: lat.summary(),
    syncs,
    syncLatUs: syncs > 0 ? syncLat.summary() : null,
    opP50Us: opLat.summary().p50,
  };
}

export async function fioAvailable(): Promise<string | null> {
  try {
    const r = await execa('fio', ['--version'], { reject: false, timeout: 10_000 });
    return r.exitCode === 0 ? r.stdout.toString().trim() : null;
  } catch {
    return null;
  }
}

export function runDirFor(root: string, rowIndex: number, rep: number, side: string): string {
  return path.join(root, `row${String(rowIndex + 1).padStart(2, '0')}-rep${rep + 1}-${side}`);
}
