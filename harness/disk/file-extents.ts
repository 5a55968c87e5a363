// Where a file's bytes lie on its device: its extents as the filesystem reports them (FIEMAP,
// through filefrag(8) of e2fsprogs), in bytes. A read-error fault maps a broker's file to the
// NBD disk's byte ranges with it: on the host route the ext4 sits on the whole disk (a loop
// device over the FUSE export of the NBD disk), so a physical byte of the filesystem is the
// same byte of the disk. The file is fsynced first: delayed allocation leaves unwritten data
// without a place on the device.
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { execa } from 'execa';
import { findExecutable } from '../vm/prerequisites.ts';

export interface FileExtent {
  /** Byte offset in the file. */
  fileOffset: number;
  /** Byte offset on the device. */
  deviceOffset: number;
  length: number;
}

/** Parses `filefrag -v` output: its block size line and one line per extent. */
export function parseFilefrag(text: string, file: string): FileExtent[] {
  const bs = /blocks? of (\d+) bytes/.exec(text) ?? /blocksize of (\d+)/.exec(text);
  if (!bs) throw new Error(`filefrag -v ${file}: no block size in its output: ${text.slice(0, 200)}`);
  const block = Number(bs[1]);
  const out: FileExtent[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*(\d+):\s+(\d+):/.exec(line);
    if (!m) continue;
    out.push({ fileOffset: Number(m[1]) * block, deviceOffset: Number(m[3]) * block, length: Number(m[5]) * block });
  }
  return out;
}

/** The file's extents on its device, after an fsync of the file. */
export async function fileExtents(file: string): Promise<FileExtent[]> {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const bin = findExecutable('filefrag');
  if (!bin) throw new Error('filefrag (package e2fsprogs) is missing: a read-error fault cannot find where a file lies on the disk');
  const r = await execa(bin, ['-v', file], { reject: false, timeout: 30_000 });
  if (r.exitCode !== 0) throw new Error(`filefrag -v ${file}: ${String(r.stderr || r.stdout).trim()}`);
  return parseFilefrag(String(r.stdout), file);
}

/**
 * Drops the page cache of a file (GNU dd's iflag=nocache with count=0: posix_fadvise
 * DONTNEED over the whole file), so the next read goes to the device. Dirty pages are not
 * dropped: fileExtents' fsync wrote them first.
 */
export async function dropFileCache(file: string): Promise<void> {
  const r = await execa('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { reject: false, timeout: 30_000 });
  if (r.exitCode !== 0) throw new Error(`dd if=${file} iflag=nocache count=0: ${String(r.stderr).trim()}`);
}
