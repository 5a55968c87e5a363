// A read-only picture of a partition directory for `durolab engine dump` and for people
// looking at a damaged log: never changes a file and never throws on corrupt bytes (it says
// where and why it stopped).
import fs from 'node:fs';
import path from 'node:path';
import { BatchWalker, WINDOW_BYTES } from './batch-walker.ts';
import { listDir, readCheckpoint, segmentPaths } from './files.ts';
import { validateBatch } from '../records/index.ts';
import type { DumpBatch, DumpIndex, DumpResult, DumpSegment } from './types.ts';

/** Walks any length field up to this; a dump must show a batch larger than today's limit. */
const DUMP_MAX_BATCH_BYTES = 0x7fffffff;

function readIndex<E>(file: string, entrySize: number, parse: (b: Buffer, at: number) => E, check: (e: E[]) => string | null): DumpIndex<E> {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { path: file, exists: false, sizeBytes: 0, entries: [], zeroEntries: 0, problem: code === 'ENOENT' ? 'missing' : String(code) };
  }
  let end = data.length - (data.length % entrySize);
  let zeroEntries = 0;
  while (end >= entrySize && data.subarray(end - entrySize, end).every((b) => b === 0)) {
    end -= entrySize;
    zeroEntries++;
  }
  const entries: E[] = [];
  for (let at = 0; at + entrySize <= end; at += entrySize) entries.push(parse(data, at));
  const problem = data.length % entrySize !== 0 ? `size ${data.length} is not a multiple of ${entrySize}` : check(entries);
  return { path: file, exists: true, sizeBytes: data.length, entries, zeroEntries, problem };
}

function dumpSegment(dir: string, base: number): DumpSegment {
  const p = segmentPaths(dir, base);
  const fd = fs.openSync(p.log, 'r');
  const batches: DumpBatch[] = [];
  let size = 0;
  let stoppedAt: DumpSegment['stoppedAt'] = null;
  try {
    size = fs.fstatSync(fd).size;
    const w = new BatchWalker(fd, 0, size, DUMP_MAX_BATCH_BYTES, false, Buffer.allocUnsafe(WINDOW_BYTES));
    while (w.next()) {
      const h = w.header!;
      let crcValid = true;
      try {
        validateBatch(w.batchBytes(), 0, { maxBatchBytes: DUMP_MAX_BATCH_BYTES });
      } catch {
        crcValid = false;
      }
      batches.push({
        baseOffset: h.baseOffset,
        lastOffset: h.baseOffset + h.lastOffsetDelta,
        position: w.batchPosition,
        size: w.size,
        crcValid,
        firstTimestamp: h.firstTimestamp,
        maxTimestamp: h.maxTimestamp,
        records: h.recordCount,
        leaderEpoch: h.partitionLeaderEpoch,
      });
    }
    if (w.stop !== null) {
      const zeros = isZeroTail(fd, w.stop.position, size);
      stoppedAt = {
        position: w.stop.position,
        reason: `${w.stop.reason}: ${w.stop.detail}${zeros ? ` (the last ${size - w.stop.position} bytes are zeros)` : ''}`,
      };
    }
  } finally {
    fs.closeSync(fd);
  }
  const lastRel = batches.length > 0 ? batches[batches.length - 1].lastOffset - base : -1;
  const index = readIndex(
    p.index,
    8,
    (b, at) => ({ offset: base + b.readInt32BE(at), position: b.readInt32BE(at + 4) }),
    (es) => {
      for (let i = 0; i < es.length; i++) {
        if (i > 0 && (es[i].offset <= es[i - 1].offset || es[i].position <= es[i - 1].position)) return `entry ${i} is not above entry ${i - 1}`;
        if (es[i].position >= size) return `entry ${i}: position ${es[i].position} beyond the log's ${size} bytes`;
      }
      return null;
    },
  );
  const timeIndex = readIndex(
    p.timeIndex,
    12,
    (b, at) => ({ timestamp: Number(b.readBigInt64BE(at)), offset: base + b.readInt32BE(at + 8) }),
    (es) => {
      for (let i = 0; i < es.length; i++) {
        if (i > 0 && (es[i].timestamp <= es[i - 1].timestamp || es[i].offset < es[i - 1].offset)) return `entry ${i} is out of order`;
        if (es[i].offset - base > lastRel) return `entry ${i}: offset ${es[i].offset} beyond the segment's last batch`;
      }
      return null;
    },
  );
  return { baseOffset: base, logPath: p.log, sizeBytes: size, batches, stoppedAt, index, timeIndex };
}

function isZeroTail(fd: number, from: number, to: number): boolean {
  const buf = Buffer.allocUnsafe(Math.min(WINDOW_BYTES, Math.max(1, to - from)));
  for (let pos = from; pos < to; ) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
    if (n === 0) break;
    for (let i = 0; i < n; i++) if (buf[i] !== 0) return false;
    pos += n;
  }
  return true;
}

export function dumpLog(dir: string): DumpResult {
  const abs = path.resolve(dir);
  const listing = listDir(abs);
  const cp = listing.hasCheckpoint ? readCheckpoint(abs) : { offset: null };
  return {
    dir: abs,
    segments: listing.logs.map((base) => dumpSegment(abs, base)),
    recoveryPointCheckpoint: cp.offset,
    cleanShutdownMarker: listing.hasCleanMarker,
    strayFiles: [...listing.strays, ...listing.orphanIndexes.map((n) => `${n} (index without a .log)`)],
  };
}
