// The check's bound for `engine bench`: how close to a bare write loop any append that performs
// Kafka's leader check can come on this machine, measured beside the rows it explains. The
// addon's checkedWriteLoop (crc32c.c) writes the row's batch N times at consecutive positions of
// a fresh file, once with the append's check (CRC-32C, record framing, header fields) and offset
// stamp before every pwrite(2), once without: no JavaScript, no Log, no indexes. Their ratio is
// the ceiling for a one-thread checked append against fio's loop, so the gap between it and the
// engine's ratio is the engine's own overhead, and the gap between 1 and it is the check's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nativeCheckedWriteLoop } from '../records/crc.ts';
import { median } from '../common/stats.ts';
import type { BenchRowSpec } from './bench-plan.ts';
import { encodeSizedBatch } from './sized-batch.ts';

export interface CheckBound {
  /** Checked MB/s / bare MB/s, balanced over both orders (balancedRatio). */
  ratio: number;
  /** Medians over the runs; MB = 10^6 bytes. */
  checkedMBps: number;
  bareMBps: number;
  /** Runs of each loop. */
  runs: number;
}

/** The rows it is measured for: buffered writes that never sync, with the check on (where the check is a visible share of an append). */
export function checkBoundApplies(spec: BenchRowSpec): boolean {
  return spec.mode === 'buffered' && spec.flush.kind === 'never' && spec.verify;
}

/**
 * Over blocks of two consecutive runs (one of each order), the geometric mean of the block's two
 * ratios, then the median of those: a "second run is slower" factor cancels within a block. A
 * run without its block partner counts only when no block is complete.
 */
export function balancedRatio(ratios: readonly number[]): number {
  const blocks: number[] = [];
  for (let i = 0; i + 1 < ratios.length; i += 2) blocks.push(Math.sqrt(ratios[i] * ratios[i + 1]));
  return median(blocks.length > 0 ? blocks : [...ratios]) ?? NaN;
}

function errnoName(code: number): string {
  const name = Object.entries(os.constants.errno).find(([, v]) => v === code)?.[0];
  return name ?? `errno ${code}`;
}

/** One loop into a fresh file, removed afterwards: MB/s. */
function loopOnce(file: string, batch: Buffer, count: number, check: boolean): number {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
  let us: number;
  try {
    us = nativeCheckedWriteLoop!(fd, batch, count, check);
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  if (us < 0) throw new Error(`check bound: pwrite(2) into ${file} failed (${errnoName(-us)})`);
  return (batch.length * count) / Math.max(us, 1);
}

/**
 * `runs` runs of each loop (checked first in even pairs, bare first in odd ones), each writing
 * volumeBytes (at least one batch); where the addon does not run, the reason instead.
 */
export function measureCheckBound(spec: BenchRowSpec, dir: string, volumeBytes: number, runs: number): CheckBound | string {
  if (nativeCheckedWriteLoop === null) return 'no check bound: the crc32c addon does not run in this process (DUROLAB_CRC32C=node-rs, or it did not build)';
  const batch = encodeSizedBatch(spec.batchBytes, spec.recordsPerBatch, { producerId: 1, producerEpoch: 0, baseSequence: 0 });
  const count = Math.max(1, Math.floor(volumeBytes / batch.length));
  const file = path.join(dir, 'check-bound.dat');
  const checked: number[] = [];
  const bare: number[] = [];
  const ratios: number[] = [];
  // One untimed pass of each warms the file system's paths and the CRC kernel like the rows' warm-up.
  loopOnce(file, batch, Math.min(count, 64), true);
  loopOnce(file, batch, Math.min(count, 64), false);
  for (let i = 0; i < runs; i++) {
    let c: number;
    let b: number;
    if (i % 2 === 0) {
      c = loopOnce(file, batch, count, true);
      b = loopOnce(file, batch, count, false);
    } else {
      b = loopOnce(file, batch, count, false);
      c = loopOnce(file, batch, count, true);
    }
    checked.push(c);
    bare.push(b);
    ratios.push(c / b);
  }
  const r = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;
  return { ratio: r(balancedRatio(ratios), 3), checkedMBps: r(median(checked) ?? NaN, 1), bareMBps: r(median(bare) ?? NaN, 1), runs };
}
