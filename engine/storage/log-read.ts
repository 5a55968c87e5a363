// The read side of a Log over its segments (Kafka's LocalLog.read and the timestamp lookup of
// UnifiedLog.fetchOffsetByTimestamp): whole batches by offset, read into a buffer or as file
// slices for sendfile, and the first offset by timestamp.
import { decodeBatch } from '../records/index.ts';
import { readFully } from './batch-walker.ts';
import { StorageError } from './errors.ts';
import type { LogSegment } from './segment.ts';
import type { ReadResult, SliceResult } from './types.ts';

/** Index of the last segment whose base offset is <= offset, -1 when there is none. */
export function segmentIndexFor(segs: readonly LogSegment[], offset: number): number {
  let lo = 0;
  let hi = segs.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (segs[mid].baseOffset <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

export interface ReadContext {
  dir: string;
  segments: readonly LogSegment[];
  maxBatchBytes: number;
  /** A scratch buffer for header walks (the Log's, reused). */
  window: Buffer;
}

/** Where a read's whole batches lie: byte ranges of segment files, in log order. */
interface Located {
  ranges: Array<{ seg: LogSegment; from: number; to: number }>;
  total: number;
  firstOffset: number;
  nextOffset: number;
}

/**
 * Whole batches from the one containing `offset`, up to maxBytes (at least one batch when
 * there is any), only batches whose last offset is below maxOffset (exclusive, e.g. the high
 * watermark). May span segments. Bytes past a segment's last whole batch (a torn tail) are
 * never part of a range: the walk stops at the segment's size, which counts whole appends only.
 */
function locateBatches(ctx: ReadContext, offset: number, maxBytes: number, maxOffset: number): Located {
  const segs = ctx.segments;
  const start = segs[0].baseOffset;
  const leo = segs[segs.length - 1].nextOffset;
  if (!Number.isSafeInteger(offset) || offset < start || offset > leo) {
    throw new StorageError('out-of-range', `read at offset ${offset}: the log ${ctx.dir} holds [${start}, ${leo})`, {
      logStartOffset: start,
      logEndOffset: leo,
    });
  }
  if (!(maxBytes >= 0) || !(maxOffset >= 0)) {
    throw new StorageError('invalid-argument', `read at offset ${offset}: maxBytes (${maxBytes}) and maxOffset (${maxOffset}) must be non-negative numbers`);
  }
  const ranges: Located['ranges'] = [];
  let total = 0;
  let firstOffset = -1;
  let nextOffset = offset;
  let done = false;
  for (let i = Math.max(0, segmentIndexFor(segs, offset)); i < segs.length && !done; i++) {
    const seg = segs[i];
    const from = seg.baseOffset <= offset ? seg.offsetIndex.lookupPosition(offset - seg.baseOffset) : 0;
    const w = seg.walker(from, ctx.maxBatchBytes, ctx.window);
    let rangeFrom = -1;
    let rangeTo = -1;
    while (w.next()) {
      const h = w.header!;
      const last = h.baseOffset + h.lastOffsetDelta;
      if (last < offset) continue;
      if (last >= maxOffset || (total > 0 && total + w.size > maxBytes)) {
        done = true;
        break;
      }
      if (rangeFrom < 0) rangeFrom = w.batchPosition;
      if (firstOffset < 0) firstOffset = h.baseOffset;
      rangeTo = w.position;
      total += w.size;
      nextOffset = last + 1;
    }
    if (w.stop !== null) {
      throw new StorageError('unreadable', `read at offset ${offset}: ${seg.paths.log} is unreadable at position ${w.stop.position} (${w.stop.reason}: ${w.stop.detail})`);
    }
    if (rangeFrom >= 0) ranges.push({ seg, from: rangeFrom, to: rangeTo });
  }
  return { ranges, total, firstOffset: firstOffset < 0 ? offset : firstOffset, nextOffset };
}

/** readBatches' batches, read into one buffer (the copy path). */
export function readBatches(ctx: ReadContext, offset: number, maxBytes: number, maxOffset: number): ReadResult {
  const { ranges, total, firstOffset, nextOffset } = locateBatches(ctx, offset, maxBytes, maxOffset);
  const data = Buffer.allocUnsafe(total);
  let off = 0;
  for (const r of ranges) {
    const len = r.to - r.from;
    if (readFully(r.seg.readFd, data, off, len, r.from) !== len) {
      throw new StorageError('unreadable', `read at offset ${offset}: ${r.seg.paths.log} ended before position ${r.to}`);
    }
    off += len;
  }
  return { data, firstOffset, nextOffset };
}

/**
 * The same batches as readBatches, as file slices (Kafka's FileRecords.slice): the segments'
 * read descriptors and byte ranges, nothing read. The descriptors are the log's: valid until a
 * segment is closed or deleted, so a caller that sends later duplicates them first.
 */
export function sliceBatches(ctx: ReadContext, offset: number, maxBytes: number, maxOffset: number): SliceResult {
  const { ranges, total, firstOffset, nextOffset } = locateBatches(ctx, offset, maxBytes, maxOffset);
  return { slices: ranges.map((r) => ({ fd: r.seg.readFd, position: r.from, length: r.to - r.from, file: r.seg.paths.log })), bytes: total, firstOffset, nextOffset };
}

/** First offset whose record timestamp is >= ts, or null when every record is older. */
export function offsetForTimestamp(ctx: ReadContext, ts: number): number | null {
  for (const seg of ctx.segments) {
    if (seg.isEmpty || seg.maxTimestampSoFar < ts) continue;
    // Records up to a time index entry's offset are no newer than its timestamp.
    const ti = seg.timeIndex.lastBelow(ts);
    const from = ti < 0 ? seg.baseOffset : seg.baseOffset + seg.timeIndex.relOffsetAt(ti) + 1;
    const w = seg.walker(seg.positionOf(from, ctx.maxBatchBytes, ctx.window), ctx.maxBatchBytes, ctx.window);
    while (w.next()) {
      if (w.header!.maxTimestamp < ts) continue;
      const { records } = decodeBatch(w.batchBytes(), 0, { maxBatchBytes: ctx.maxBatchBytes });
      for (const r of records) if (r.offset >= from && r.timestamp >= ts) return r.offset;
    }
  }
  return null;
}
