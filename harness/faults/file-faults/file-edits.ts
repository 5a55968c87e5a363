// The byte-level changes the file faults make to a broker's data files, each recorded exactly:
// the file, the offset and length changed, the file's size before and after, and a SHA-256 of
// the bytes there before and after (run.json's fileChanges; a test reads them back). A bit flip
// flips one bit of every byte of a chunk; a truncation cuts bytes off the end; a lost write puts
// saved bytes back over what was written since. Every write goes through the file and is
// fsynced: a running broker's next read (its page cache, its mmap of an index) sees it.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, ftruncateSync, writeSync } from 'node:fs';
import type { FileChange } from '../../results/types.ts';
import type { DataFile } from '../../targets/data-files.ts';

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

function writeAt(fd: number, offset: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, offset + done);
}

/** One chunk's place in a file of `size` bytes: a seeded offset with `chunkBytes` inside the file (the whole file when it is smaller). */
export function chunkAt(size: number, chunkBytes: number, draw: () => number): { offset: number; length: number } {
  const length = Math.min(chunkBytes, size);
  return { offset: Math.floor(draw() * (size - length + 1)), length };
}

/**
 * Flips one bit of every byte in `chunks` chunks of `chunkBytes` at seeded offsets (every byte
 * changes, by one bit each, as a bad block's bits do). Empty files change nothing.
 */
export function flipBits(broker: number, f: DataFile, o: { chunks: number; chunkBytes: number; draw: () => number }): FileChange[] {
  const fd = openSync(f.path, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return [];
    const out: FileChange[] = [];
    for (let c = 0; c < o.chunks; c++) {
      const { offset, length } = chunkAt(size, o.chunkBytes, o.draw);
      const before = readAt(fd, offset, length);
      const after = Buffer.from(before);
      for (let i = 0; i < after.length; i++) after[i] = after[i]! ^ (1 << Math.floor(o.draw() * 8));
      writeAt(fd, offset, after);
      out.push({ broker, file: f.rel, offset, length, sizeBefore: size, sizeAfter: size, oldSha256: sha256(before), newSha256: sha256(after), how: 'bit-flip' });
    }
    fsyncSync(fd);
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Cuts `bytes` (or `fraction` of the size) off the end of the file; the change names the bytes removed. */
export function truncateEnd(broker: number, f: DataFile, o: { bytes?: number; fraction?: number }): FileChange[] {
  const fd = openSync(f.path, 'r+');
  try {
    const size = fstatSync(fd).size;
    const cut = o.bytes !== undefined ? Math.min(size, o.bytes) : Math.ceil(size * (o.fraction ?? 0));
    if (cut === 0) return [];
    const offset = size - cut;
    const removed = readAt(fd, offset, cut);
    ftruncateSync(fd, offset);
    fsyncSync(fd);
    return [{ broker, file: f.rel, offset, length: cut, sizeBefore: size, sizeAfter: offset, oldSha256: sha256(removed), newSha256: sha256(Buffer.alloc(0)), how: 'truncate' }];
  } finally {
    closeSync(fd);
  }
}

/** A chunk a lost write saved: where, and the bytes the drive "kept" (zeros past the end of the file as it was then). */
export interface SavedChunk {
  broker: number;
  path: string;
  rel: string;
  offset: number;
  bytes: Buffer;
  sizeAtSave: number;
}

/**
 * Saves `chunks` chunks of `chunkBytes` of a file for a later lost write: the first starts at the
 * sector (4 KiB) holding the file's end now, so the writes that follow it are what the drive
 * loses; further chunks at seeded offsets below it. Bytes past the end are saved as zeros.
 */
export function saveChunks(broker: number, f: DataFile, o: { chunks: number; chunkBytes: number; draw: () => number }): SavedChunk[] {
  const fd = openSync(f.path, 'r');
  try {
    const size = fstatSync(fd).size;
    const out: SavedChunk[] = [];
    for (let c = 0; c < o.chunks; c++) {
      const offset = c === 0 ? Math.floor(size / 4096) * 4096 : chunkAt(size, o.chunkBytes, o.draw).offset;
      const bytes = Buffer.alloc(o.chunkBytes);
      readAt(fd, offset, o.chunkBytes).copy(bytes);
      out.push({ broker, path: f.path, rel: f.rel, offset, bytes, sizeAtSave: size });
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts a saved chunk back over what is there now, within the file's current size (a lost write
 * leaves the size the metadata recorded). Nothing is recorded when the bytes are the same
 * (nothing was written there since), or the file is gone (a segment deleted meanwhile).
 */
export function restoreChunk(s: SavedChunk): FileChange | null {
  let fd: number;
  try {
    fd = openSync(s.path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.max(0, Math.min(s.bytes.length, size - s.offset));
    if (length === 0) return null;
    const now = readAt(fd, s.offset, length);
    const back = s.bytes.subarray(0, length);
    if (now.equals(back)) return null;
    writeAt(fd, s.offset, back);
    fsyncSync(fd);
    return { broker: s.broker, file: s.rel, offset: s.offset, length, sizeBefore: size, sizeAfter: size, oldSha256: sha256(now), newSha256: sha256(back), how: 'lost-write' };
  } finally {
    closeSync(fd);
  }
}
