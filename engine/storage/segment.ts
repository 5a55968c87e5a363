// One segment: <base>.log with its sparse .index and .timeindex. append() is Kafka's
// LogSegment.append; the Log has done the checks and the offset assignment before it.
import fs from 'node:fs';
import { BatchWalker } from './batch-walker.ts';
import type { AlignedBuffer } from './direct-io.ts';
import { segmentPaths, type SegmentPaths } from './files.ts';
import { OffsetIndex, TimeIndex } from './indexes.ts';
import { openSegmentWriter, type SegmentWriter } from './segment-writer.ts';
import type { IoMode, LogConfig, SyncCall } from './types.ts';

/** One segment as `durolab engine` and tests print it. */
export interface SegmentInfo {
  baseOffset: number;
  logPath: string;
  indexPath: string;
  timeIndexPath: string;
  sizeBytes: number;
  nextOffset: number;
  indexEntries: number;
  timeIndexEntries: number;
}

export class LogSegment {
  readonly baseOffset: number;
  readonly paths: SegmentPaths;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly readFd: number;
  writer: SegmentWriter | null = null;
  /** Logical size of the .log (the file may be longer: O_DIRECT padding, or a tail recovery has not cut yet). */
  size: number;
  nextOffset: number;
  maxTimestampSoFar = -1;
  offsetOfMaxTimestampSoFar: number;
  bytesSinceLastIndexEntry = 0;
  /** When segment.ms counts from: the first append's time, or after a reopen the first batch's max timestamp (as Kafka). */
  rollBaseMs: number | null = null;
  /** Log bytes written since the last sync. */
  dirty = false;

  private constructor(
    dir: string,
    baseOffset: number,
    config: LogConfig,
    readFd: number,
    size: number,
    /** readFd was opened read-write (create): a buffered writer shares it. */
    private readonly readFdWritable = false,
  ) {
    this.baseOffset = baseOffset;
    this.paths = segmentPaths(dir, baseOffset);
    this.offsetIndex = new OffsetIndex(this.paths.index, config.segmentIndexBytes);
    this.timeIndex = new TimeIndex(this.paths.timeIndex, config.segmentIndexBytes);
    this.readFd = readFd;
    this.size = size;
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestampSoFar = baseOffset;
  }

  /** A new, empty segment; its files must not exist. */
  static create(dir: string, baseOffset: number, config: LogConfig): LogSegment {
    const p = segmentPaths(dir, baseOffset);
    const fd = fs.openSync(p.log, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
    const seg = new LogSegment(dir, baseOffset, config, fd, 0, true);
    try {
      fs.rmSync(p.index, { force: true });
      fs.rmSync(p.timeIndex, { force: true });
      seg.offsetIndex.activate();
      seg.timeIndex.activate();
    } catch (e) {
      seg.close();
      throw e;
    }
    return seg;
  }

  /** An existing .log, not loaded yet (see load.ts): size is the file's. */
  static open(dir: string, baseOffset: number, config: LogConfig): LogSegment {
    const p = segmentPaths(dir, baseOffset);
    const fd = fs.openSync(p.log, fs.constants.O_RDONLY);
    return new LogSegment(dir, baseOffset, config, fd, fs.fstatSync(fd).size);
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /** The segment becomes the active one: a writer for the .log, index files at full size. */
  openWriter(io: IoMode, staging: AlignedBuffer | null): void {
    if (this.writer === null) this.writer = openSegmentWriter(io, this.paths.log, this.size, this.readFd, staging, this.readFdWritable);
    this.offsetIndex.activate();
    this.timeIndex.activate();
  }

  /**
   * Steps 4-6 of Kafka's LogSegment.append: write at the physical position, update the
   * offset metadata, add a sparse index entry once more than index.interval.bytes were
   * appended since the last one. Returns the position; state changes only after the write
   * succeeded.
   */
  append(batch: Buffer, lastOffset: number, maxTimestamp: number, nowMs: number, indexIntervalBytes: number): number {
    const position = this.size;
    this.writer!.write(batch, position);
    this.appended(batch.length, lastOffset, maxTimestamp, nowMs, indexIntervalBytes);
    return position;
  }

  /** What follows the write of `size` bytes at the end (append's, or the native append's in log.ts): size, roll clock, indexes. */
  appended(size: number, lastOffset: number, maxTimestamp: number, nowMs: number, indexIntervalBytes: number): void {
    const position = this.size;
    this.size = position + size;
    this.dirty = true;
    if (this.rollBaseMs === null) this.rollBaseMs = nowMs;
    this.indexBatch(position, size, lastOffset, maxTimestamp, indexIntervalBytes);
  }

  /** What `durolab engine` and tests print of a segment (Log.segmentInfos). */
  info(): SegmentInfo {
    return {
      baseOffset: this.baseOffset,
      logPath: this.paths.log,
      indexPath: this.paths.index,
      timeIndexPath: this.paths.timeIndex,
      sizeBytes: this.size,
      nextOffset: this.nextOffset,
      indexEntries: this.offsetIndex.entries,
      timeIndexEntries: this.timeIndex.entries,
    };
  }

  /** An index has no room for another entry: the next append rolls. */
  get indexFull(): boolean {
    return this.offsetIndex.isFull || this.timeIndex.isFull;
  }

  /** The offset-metadata and index step of append, shared with index rebuilds so both give the same entries. */
  indexBatch(position: number, size: number, lastOffset: number, maxTimestamp: number, indexIntervalBytes: number): void {
    this.nextOffset = lastOffset + 1;
    if (maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTimestamp;
      this.offsetOfMaxTimestampSoFar = lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > indexIntervalBytes) {
      this.offsetIndex.append(lastOffset - this.baseOffset, position);
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar - this.baseOffset);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
  }

  /** Would this batch overflow the segment (Kafka's shouldRoll, less the clock). */
  isFullFor(batchBytes: number, lastOffset: number, segmentBytes: number): boolean {
    if (this.isEmpty) return false;
    return (
      this.size > segmentBytes - batchBytes ||
      this.indexFull ||
      lastOffset - this.baseOffset > 0x7fffffff
    );
  }

  /** Kafka's onBecomeInactiveSegment plus the cut of O_DIRECT padding: the final time index entry records the segment's max timestamp. */
  seal(): void {
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar - this.baseOffset, true);
    this.writer?.finish(this.size);
    this.offsetIndex.trim();
    this.timeIndex.trim();
  }

  /** The .log durable: what a flush waits for. The indexes follow at the next checkpoint (flushIndexes). */
  flushLog(call: SyncCall): void {
    if (this.writer !== null) this.writer.sync(call);
    else if (this.dirty) (call === 'fsync' ? fs.fsyncSync : fs.fdatasyncSync)(this.readFd);
    this.dirty = false;
  }

  /** Index entries written and made durable; returns the number of sync calls (0 when nothing changed). */
  flushIndexes(call: SyncCall): number {
    return (this.offsetIndex.sync(call) ? 1 : 0) + (this.timeIndex.sync(call) ? 1 : 0);
  }

  /** Log data and indexes durable (roll, close, after recovery). */
  flush(call: SyncCall): number {
    this.flushLog(call);
    return this.flushIndexes(call);
  }

  closeWriter(): void {
    if (this.writer !== null) {
      const w = this.writer;
      this.writer = null;
      w.close();
    }
    this.offsetIndex.closeFd();
    this.timeIndex.closeFd();
  }

  close(): void {
    this.closeWriter();
    fs.closeSync(this.readFd);
  }

  /**
   * Kafka's LogSegment.truncateTo: drops the batches holding offsets >= offset (the cut is at a
   * batch boundary), the index entries past it, and recomputes the tail state. The writer is
   * closed; the caller reopens it.
   */
  truncateTo(offset: number, maxBatchBytes: number, window: Buffer): void {
    const pos = this.positionOf(offset, maxBatchBytes, window);
    this.closeWriter();
    fs.truncateSync(this.paths.log, pos);
    this.size = pos;
    this.dirty = true;
    // Both indexes are keyed by batch last offsets: the cut batch and later ones hold offsets >= offset.
    this.offsetIndex.truncateToRel(offset - this.baseOffset);
    this.timeIndex.truncateToRel(offset - this.baseOffset);
    const tail = this.scanTail(maxBatchBytes, window);
    if (tail.stop !== null) throw new Error(`${this.paths.log}: ${tail.stop.reason} at position ${tail.stop.position} after truncation`);
    if (pos === 0) this.rollBaseMs = null;
    this.offsetIndex.persist();
    this.timeIndex.persist();
  }

  /** Header walk from pos to the logical end. */
  walker(from: number, maxBatchBytes: number, window?: Buffer, validate = false): BatchWalker {
    return new BatchWalker(this.readFd, from, this.size, maxBatchBytes, validate, window);
  }

  /** Recomputes what the tail after the last offset index entry says (next offset, max timestamp, index counter). Returns the walker's stop, if the tail is not whole batches. */
  scanTail(maxBatchBytes: number, window?: Buffer): BatchWalker {
    const n = this.offsetIndex.entries;
    const from = n === 0 ? 0 : this.offsetIndex.positionAt(n - 1);
    if (n > 0) this.nextOffset = this.baseOffset + this.offsetIndex.relOffsetAt(n - 1) + 1;
    else this.nextOffset = this.baseOffset;
    const t = this.timeIndex.entries;
    this.maxTimestampSoFar = t === 0 ? -1 : this.timeIndex.timestampAt(t - 1);
    this.offsetOfMaxTimestampSoFar = t === 0 ? this.baseOffset : this.baseOffset + this.timeIndex.relOffsetAt(t - 1);
    const w = this.walker(from, maxBatchBytes, window);
    let first = true;
    while (w.next()) {
      const h = w.header!;
      const last = h.baseOffset + h.lastOffsetDelta;
      if (first && n > 0 && last !== this.nextOffset - 1) {
        w.stop = { position: w.batchPosition, errorPosition: w.batchPosition, reason: 'index-mismatch', detail: `index entry says last offset ${this.nextOffset - 1}, batch says ${last}` };
        break;
      }
      if (!first || n === 0) {
        if (h.baseOffset !== this.nextOffset) {
          w.stop = { position: w.batchPosition, errorPosition: w.batchPosition, reason: 'offset-discontinuity', detail: `batch base offset ${h.baseOffset}, expected ${this.nextOffset}` };
          break;
        }
      }
      first = false;
      this.nextOffset = last + 1;
      if (h.maxTimestamp > this.maxTimestampSoFar) {
        this.maxTimestampSoFar = h.maxTimestamp;
        this.offsetOfMaxTimestampSoFar = last;
      }
      if (this.rollBaseMs === null && w.batchPosition === 0) this.rollBaseMs = h.maxTimestamp;
    }
    this.bytesSinceLastIndexEntry = this.size - from;
    return w;
  }

  /** Position of the first batch whose last offset is >= offset, or size when there is none. */
  positionOf(offset: number, maxBatchBytes: number, window?: Buffer): number {
    const w = this.walker(this.offsetIndex.lookupPosition(offset - this.baseOffset), maxBatchBytes, window);
    while (w.next()) {
      const h = w.header!;
      if (h.baseOffset + h.lastOffsetDelta >= offset) return w.batchPosition;
    }
    return this.size;
  }
}
