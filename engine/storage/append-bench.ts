// Append throughput of the engine against a raw fs.writeSync loop measured in the same run,
// on the same disk, with the same batch size: the ratio is what the performance target
// (>= 0.85 in buffered mode at 64 KiB) is about. Absolute MB/s depend on this machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeBatch } from '../records/index.ts';
import { allocAligned, alignUp } from './direct-io.ts';
import { Log } from './log.ts';
import type { FlushPolicy, IoMode, SyncCall } from './types.ts';

export interface AppendBenchOptions {
  dir?: string;
  batchBytes?: number;
  totalBytes?: number;
  io?: IoMode;
  flush?: FlushPolicy;
  sync?: SyncCall;
  /** Alternating raw/engine rounds; the median of each is reported. */
  rounds?: number;
  verifyBatches?: boolean;
}

export interface AppendBenchResult {
  batchBytes: number;
  totalBytes: number;
  io: IoMode;
  verifyBatches: boolean;
  rawMBps: number[];
  engineMBps: number[];
  rawMedianMBps: number;
  engineMedianMBps: number;
  ratio: number;
  engineWriteP50Us: number;
  engineWriteP99Us: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Raw baseline: the same write path (flags and per-batch sync), no engine. For io=direct the
 * raw loop writes whole aligned blocks from aligned memory (batch size rounded up to 4 KiB).
 */
function rawRound(file: string, batch: Buffer, count: number, io: IoMode, flush: FlushPolicy, sync: SyncCall): number {
  const flags =
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | (io === 'dsync' ? fs.constants.O_DSYNC : 0) | (io === 'direct' ? fs.constants.O_DIRECT : 0);
  let src = batch;
  if (io === 'direct') {
    src = allocAligned(alignUp(batch.length)).buf.subarray(0, alignUp(batch.length));
    batch.copy(src);
  }
  const fd = fs.openSync(file, flags, 0o644);
  const t0 = performance.now();
  let pos = 0;
  for (let i = 0; i < count; i++) {
    fs.writeSync(fd, src, 0, src.length, pos);
    pos += src.length;
    if (flush.kind === 'per-batch') (sync === 'fsync' ? fs.fsyncSync : fs.fdatasyncSync)(fd);
  }
  const ms = performance.now() - t0;
  fs.closeSync(fd);
  fs.rmSync(file);
  return (pos / 1e6) / (ms / 1000);
}

function engineRound(dir: string, batch: Buffer, count: number, io: IoMode, flush: FlushPolicy, sync: SyncCall, verifyBatches: boolean): { mbps: number; p50: number; p99: number } {
  fs.rmSync(dir, { recursive: true, force: true });
  const log = Log.open(dir, { io, flush, sync, verifyBatches });
  const t0 = performance.now();
  for (let i = 0; i < count; i++) log.append(batch);
  const ms = performance.now() - t0;
  const st = log.stats();
  log.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { mbps: (st.bytes / 1e6) / (ms / 1000), p50: st.writeTimeUs.p50, p99: st.writeTimeUs.p99 };
}

export function runAppendBench(opts: AppendBenchOptions = {}): AppendBenchResult {
  const batchBytes = opts.batchBytes ?? 65536;
  const totalBytes = opts.totalBytes ?? 256 * 1024 * 1024;
  const io = opts.io ?? 'buffered';
  const flush = opts.flush ?? { kind: 'never' };
  const sync = opts.sync ?? 'fdatasync';
  const rounds = opts.rounds ?? 3;
  const root = fs.mkdtempSync(path.join(opts.dir ?? os.tmpdir(), 'durolab-append-bench-'));
  try {
    // One record whose framing (length, attributes, deltas, key, value length, headers) brings the batch to batchBytes.
    const valueBytes = batchBytes - 61 - 10;
    const batch = encodeBatch({ records: [{ value: Buffer.alloc(valueBytes, 0x61) }] });
    const count = Math.max(1, Math.floor(totalBytes / batch.length));
    const raw: number[] = [];
    const eng: number[] = [];
    let p50 = 0;
    let p99 = 0;
    for (let r = 0; r < rounds; r++) {
      raw.push(rawRound(path.join(root, 'raw.bin'), batch, count, io, flush, sync));
      const e = engineRound(path.join(root, 'log'), batch, count, io, flush, sync, opts.verifyBatches ?? true);
      eng.push(e.mbps);
      p50 = e.p50;
      p99 = e.p99;
    }
    const rawMedianMBps = median(raw);
    const engineMedianMBps = median(eng);
    return {
      batchBytes: batch.length,
      totalBytes: count * batch.length,
      io,
      verifyBatches: opts.verifyBatches ?? true,
      rawMBps: raw,
      engineMBps: eng,
      rawMedianMBps,
      engineMedianMBps,
      ratio: engineMedianMBps / rawMedianMBps,
      engineWriteP50Us: p50,
      engineWriteP99Us: p99,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
