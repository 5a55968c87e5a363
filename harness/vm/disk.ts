// A VM's data disk. `DataDisk` is the seam: today a sparse raw file (which, since QEMU's
// writes land in the host page cache and the host never crashes, models a disk with no
// volatile write cache), or the harness's NBD server (harness/disk/nbd-disk.ts), which can
// keep unflushed writes in memory and lose them at a cut.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { requireExecutable } from './prerequisites.ts';

export interface DataDisk {
  /** 'file' or 'nbd'. */
  readonly kind: string;
  /** Human-readable, for logs and errors. */
  describe(): string;
  /** QEMU arguments attaching the disk as the guest's first virtio-blk device (/dev/vda). */
  qemuDriveArgs(): string[];
  /** What the guest's device shows of the disk (a resumed guest template must match it). */
  readonly sizeMiB: number;
  /** QEMU's cache mode: it sets the write-cache bit the guest sees. */
  readonly cacheMode: string;
  /** A raw image of the disk's content on the host, for offline inspection (copy it before changing it). */
  readonly imagePath: string;
  /** After a power cut killed QEMU: what the disk itself loses (an NBD volatile cache applies its onCut policy). */
  afterPowerCut?(): Promise<unknown>;
  /** After a clean shutdown (or at the end of a trial): the drive writes back what it still caches. */
  afterCleanShutdown?(): Promise<void>;
  /** Ends whatever serves the disk (the NBD server); the image stays. */
  close?(): Promise<void>;
}

/** QEMU option values double a comma to escape it. */
export const qemuEscape = (v: string): string => v.replaceAll(',', ',,');

export class FileDisk implements DataDisk {
  readonly kind = 'file';
  constructor(
    readonly path: string,
    readonly sizeMiB: number,
    /** virtio-blk cache mode; writeback is what a power-cut trial wants (guest flushes reach the file). */
    readonly cache: 'writeback' | 'none' | 'unsafe' | 'writethrough' | 'directsync' = 'writeback',
  ) {}

  get imagePath(): string {
    return this.path;
  }

  get cacheMode(): string {
    return this.cache;
  }

  describe(): string {
    return `file disk ${this.path} (${this.sizeMiB} MiB, cache=${this.cache})`;
  }

  qemuDriveArgs(): string[] {
    return ['-drive', `file=${qemuEscape(this.path)},format=raw,if=virtio,cache=${this.cache}`];
  }

  /** A sparse copy (for a trial that must keep the cut state while something else boots from it). */
  async copyTo(dest: string): Promise<FileDisk> {
    await sparseCopy(this.path, dest);
    return new FileDisk(dest, this.sizeMiB, this.cache);
  }

  async remove(): Promise<void> {
    await fs.rm(this.path, { force: true });
  }
}

export async function sparseCopy(src: string, dest: string): Promise<void> {
  const r = await execa('cp', ['--sparse=always', '--', src, dest], { reject: false });
  if (r.exitCode !== 0) throw new Error(`cp --sparse=always ${src} ${dest} failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
}

/**
 * Creates a sparse raw file of `sizeMiB` MiB holding a fresh ext4. Lazy inode-table and
 * journal init are off: otherwise the guest kernel zeroes them in the background after mount,
 * writes that would show up in the trial's diskstats.
 */
export async function createFileDisk(file: string, sizeMiB: number, opts: { mkfsArgs?: string[] } = {}): Promise<FileDisk> {
  if (!Number.isInteger(sizeMiB) || sizeMiB < 16) throw new Error(`createFileDisk ${file}: sizeMiB must be an integer >= 16, got ${sizeMiB}`);
  const mkfs = requireExecutable('mkfs.ext4');
  await fs.mkdir(path.dirname(file), { recursive: true });
  if (existsSync(file)) await fs.rm(file);
  const fh = await fs.open(file, 'wx');
  try {
    // Multiplication, not `sizeMiB << 20`: the shift overflows int32 at 2 GiB.
    await fh.truncate(sizeMiB * 1024 * 1024);
  } finally {
    await fh.close();
  }
  const r = await execa(mkfs, ['-F', '-q', '-E', 'lazy_itable_init=0,lazy_journal_init=0', ...(opts.mkfsArgs ?? []), file], { reject: false });
  if (r.exitCode !== 0) {
    await fs.rm(file, { force: true });
    throw new Error(`mkfs.ext4 ${file} failed (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim()}`);
  }
  return new FileDisk(file, sizeMiB);
}
