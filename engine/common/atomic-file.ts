// Replacing a file so that a reader or a crash sees the old or the new content, never a torn
// mix (Kafka's CheckpointFile does the same): write a temporary file, fsync it, rename it over
// the target, fsync the directory (the rename lives in the directory's metadata).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Create the parent directory first (default false). */
  mkdir?: boolean;
  /**
   * The temporary file's path (default: `<file>.tmp-<pid>-<random>` beside it). A fixed name
   * suits a single writer whose recovery recognises and removes a leftover.
   */
  tmp?: string;
}

/** fsync of a directory: makes a create, rename or unlink in it durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * fsync (or fdatasync) of `file` in libuv's thread pool, through a descriptor of its own
 * (fsync works on the inode: it makes durable what any descriptor wrote). The caller's
 * descriptors may be closed meanwhile. Rejects with the errno error of open/fsync.
 */
export async function syncFileAsync(file: string, dataOnly: boolean): Promise<void> {
  const fh = await fs.promises.open(file, fs.constants.O_RDONLY);
  try {
    await (dataOnly ? fh.datasync() : fh.sync());
  } finally {
    await fh.close();
  }
}

/** fsyncDir in libuv's thread pool, off the event loop. */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const fh = await fs.promises.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `file` with `data` atomically and durably (tmp + fsync + rename + fsync(dir)).
 * A failure removes the temporary file and throws an Error naming `file`.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): void {
  const dir = path.dirname(file);
  if (opts.mkdir) fs.mkdirSync(dir, { recursive: true });
  const tmp = opts.tmp ?? `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const fd = fs.openSync(tmp, 'w');
    try {
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off, off);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    // The errno code (ENOSPC, EACCES, ...) stays on the error for callers that branch on it.
    const code = (err as NodeJS.ErrnoException).code;
    throw Object.assign(new Error(`cannot write ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }), code ? { code } : {});
  }
  fsyncDir(dir);
}

/** `value` as indented JSON plus a newline, written with writeFileAtomic (parent created). */
export function writeJsonAtomic(file: string, value: unknown, indent = 2): void {
  writeFileAtomic(file, JSON.stringify(value, null, indent) + '\n', { mkdir: true });
}
