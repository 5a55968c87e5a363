// Helpers shared by the storage tests: temporary partition directories on the real disk and
// batches with recognisable contents.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeBatch } from '../records/index.ts';

const created: string[] = [];

export function tmpDir(prefix = 'durolab-storage-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(d);
  return d;
}

export function removeTmpDirs(): void {
  for (const d of created.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export interface BatchSpec {
  records?: number;
  valueBytes?: number;
  timestamp?: number;
  /** Per-record timestamps (overrides timestamp). */
  timestamps?: number[];
  fill?: number;
}

/** A batch whose record values say which batch (seed) and record they are. */
export function makeBatch(seed: number, spec: BatchSpec = {}): Buffer {
  const n = spec.timestamps?.length ?? spec.records ?? 1;
  const valueBytes = spec.valueBytes ?? 100;
  const ts = spec.timestamp ?? 1_700_000_000_000 + seed;
  const records = [];
  for (let i = 0; i < n; i++) {
    const v = Buffer.alloc(valueBytes, (spec.fill ?? seed + i) & 0xff);
    v.write(`b${seed}r${i}`.slice(0, valueBytes));
    records.push({ key: Buffer.from(`k${seed}-${i}`), value: v, timestamp: spec.timestamps?.[i] ?? ts });
  }
  return encodeBatch({ records, firstTimestamp: spec.timestamps?.[0] ?? ts });
}

export function copyDir(src: string, dst: string): void {
  fs.cpSync(src, dst, { recursive: true });
}

export function fileSize(p: string): number {
  return fs.statSync(p).size;
}
