// Reading a data disk after a power cut without booting it: on a copy (the original stays the
// cut state), `e2fsck -E journal_only -y` replays the journal as the guest's mount would,
// then debugfs reads files. (`e2fsck -n` does not replay; `mount -o ro` replays by writing to
// the image, and needs a loop device.)
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sparseCopy, type DataDisk } from './disk.ts';
import { GUEST_DATA_MOUNT } from './init-script.ts';
import { requireExecutable } from './prerequisites.ts';

export class GuestFileNotFoundError extends Error {
  constructor(readonly disk: string, readonly guestPath: string) {
    super(`${guestPath} does not exist on disk ${disk} (after journal replay)`);
  }
}

export interface DirEntry {
  name: string;
  inode: number;
  /** st_mode, e.g. 0o100644 for a regular file. */
  mode: number;
  size: number;
  type: 'file' | 'dir' | 'symlink' | 'other';
}

/**
 * A path as the guest sees it (under the data mount, /data/...) or as it is in the disk's
 * filesystem (/...): the guest mounts the disk's root at /data.
 */
export function pathOnDisk(guestPath: string): string {
  if (!guestPath.startsWith('/')) throw new Error(`disk path must be absolute, got '${guestPath}'`);
  if (guestPath === GUEST_DATA_MOUNT) return '/';
  if (guestPath.startsWith(`${GUEST_DATA_MOUNT}/`)) return guestPath.slice(GUEST_DATA_MOUNT.length);
  return guestPath;
}

function debugfsQuote(p: string): string {
  if (/["\n\r]/.test(p)) throw new Error(`disk path ${JSON.stringify(p)}: quotes and newlines are not supported`);
  return `"${p}"`;
}

const diskPathOf = (disk: string | DataDisk): string => (typeof disk === 'string' ? disk : disk.imagePath);

export class DiskSnapshot {
  private constructor(
    /** The original disk image (untouched). */
    readonly source: string,
    /** The working copy, journal replayed. */
    readonly path: string,
    private readonly tmpDir: string,
    readonly journalReplay: { exitCode: number; output: string },
  ) {}

  /** Copies `disk` and replays its ext4 journal on the copy. Close it to delete the copy. */
  static async open(disk: string | DataDisk, opts: { tmpDir?: string } = {}): Promise<DiskSnapshot> {
    const source = diskPathOf(disk);
    if (!existsSync(source)) throw new Error(`disk image ${source} does not exist`);
    const e2fsck = requireExecutable('e2fsck');
    const tmpDir = await fs.mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'durolab-disk-'));
    const copy = path.join(tmpDir, path.basename(source));
    try {
      await sparseCopy(source, copy);
      const r = await execa(e2fsck, ['-E', 'journal_only', '-y', copy], { reject: false, all: true });
      // 0 = clean, 1 = errors fixed (the replay itself counts); 4+ = left uncorrected or failed.
      if (r.exitCode === undefined || r.exitCode >= 4) {
        throw new Error(`e2fsck -E journal_only -y on a copy of ${source} failed (exit ${r.exitCode}): ${(r.all ?? '').trim().slice(0, 500)}`);
      }
      return new DiskSnapshot(source, copy, tmpDir, { exitCode: r.exitCode, output: r.all ?? '' });
    } catch (err) {
      await fs.rm(tmpDir, { recursive: true, force: true });
      throw err;
    }
  }

  private async debugfs(request: string): Promise<{ stdout: string; stderr: string }> {
    const debugfs = requireExecutable('debugfs');
    const r = await execa(debugfs, ['-R', request, this.path], { reject: false });
    if (r.exitCode !== 0) throw new Error(`debugfs -R '${request}' ${this.source} (copy) failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
    // debugfs prints its version banner on stderr; errors follow it.
    const stderr = r.stderr.split('\n').filter((l) => l && !/^debugfs \d/.test(l)).join('\n');
    return { stdout: r.stdout, stderr };
  }

  async readFile(guestPath: string): Promise<Buffer> {
    const p = pathOnDisk(guestPath);
    const out = path.join(this.tmpDir, `dump-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    const { stderr } = await this.debugfs(`dump ${debugfsQuote(p)} ${debugfsQuote(out)}`);
    if (/not found|File not found/i.test(stderr) || !existsSync(out)) {
      await fs.rm(out, { force: true });
      if (/not found/i.test(stderr)) throw new GuestFileNotFoundError(this.source, guestPath);
      throw new Error(`debugfs could not dump ${p} from ${this.source} (copy): ${stderr || 'no output file'}`);
    }
    try {
      return await fs.readFile(out);
    } finally {
      await fs.rm(out, { force: true });
    }
  }

  async exists(guestPath: string): Promise<boolean> {
    const { stdout, stderr } = await this.debugfs(`stat ${debugfsQuote(pathOnDisk(guestPath))}`);
    return !/not found/i.test(stderr) && /Inode:/.test(stdout);
  }

  async listDir(guestPath: string): Promise<DirEntry[]> {
    const p = pathOnDisk(guestPath);
    // -p: "/inode/mode/uid/gid/name/size/" lines, easy to parse.
    const { stdout, stderr } = await this.debugfs(`ls -p ${debugfsQuote(p)}`);
    if (/not found/i.test(stderr)) throw new GuestFileNotFoundError(this.source, guestPath);
    const entries: DirEntry[] = [];
    for (const line of stdout.split('\n')) {
      const m = /^\/(\d+)\/(\d+)\/\d+\/\d+\/(.*)\/(\d*)\/$/.exec(line.trim());
      if (!m || m[3] === '.' || m[3] === '..' || m[1] === '0') continue;
      const mode = parseInt(m[2]!, 8);
      const fmt = mode & 0o170000;
      entries.push({
        name: m[3]!,
        inode: Number(m[1]),
        mode,
        size: Number(m[4] || 0),
        type: fmt === 0o100000 ? 'file' : fmt === 0o040000 ? 'dir' : fmt === 0o120000 ? 'symlink' : 'other',
      });
    }
    return entries.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** `e2fsck -fn`: is the filesystem consistent after the replay? */
  async fsck(): Promise<{ clean: boolean; exitCode: number; output: string }> {
    const r = await execa(requireExecutable('e2fsck'), ['-fn', this.path], { reject: false, all: true });
    return { clean: r.exitCode === 0, exitCode: r.exitCode ?? -1, output: r.all ?? '' };
  }

  async close(): Promise<void> {
    await fs.rm(this.tmpDir, { recursive: true, force: true });
  }
}

async function withSnapshot<T>(disk: string | DataDisk, fn: (s: DiskSnapshot) => Promise<T>): Promise<T> {
  const s = await DiskSnapshot.open(disk);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** One file from a disk, offline: on a copy, journal replayed. Throws GuestFileNotFoundError when absent. */
export function readFileFromDisk(disk: string | DataDisk, guestPath: string): Promise<Buffer> {
  return withSnapshot(disk, (s) => s.readFile(guestPath));
}

/** A directory listing from a disk, offline: on a copy, journal replayed. */
export function listDir(disk: string | DataDisk, guestPath: string): Promise<DirEntry[]> {
  return withSnapshot(disk, (s) => s.listDir(guestPath));
}
