// Helpers shared by the storage tests: temporary partition directories on the real disk and
// batches with recognisable contents.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execaSync } from 'execa';
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

/** A small ext4 filesystem that fills for real, or why it could not be made. */
export type SmallFs = { dir: string; unmount: () => void; failure?: undefined } | { dir?: undefined; unmount?: undefined; failure: string };

/**
 * A `sizeMiB` ext4 image mounted over a loop device under a temp dir (removed by removeTmpDirs
 * after unmount()). Needs root, mkfs.ext4 and mount -o loop: otherwise `failure` says why.
 */
export function mountSmallExt4(sizeMiB: number): SmallFs {
  const root = tmpDir('durolab-smallfs-');
  const img = path.join(root, 'fs.img');
  const dir = path.join(root, 'mnt');
  fs.mkdirSync(dir);
  try {
    if (process.getuid?.() !== 0) throw new Error('not running as root: mounting a loop device needs root');
    fs.writeFileSync(img, '');
    fs.truncateSync(img, sizeMiB * 1024 * 1024);
    execaSync('mkfs.ext4', ['-q', '-F', img]);
    execaSync('mount', ['-o', 'loop', img, dir]);
    return { dir, unmount: () => void execaSync('umount', [dir]) };
  } catch (e) {
    return { failure: `a ${sizeMiB} MiB ext4 image mounted over a loop device (mkfs.ext4 from e2fsprogs, mount -o loop, root): ${(e as Error).message.split('\n')[0]}` };
  }
}
