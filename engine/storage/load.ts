// Opening a partition directory, as Kafka's LogLoader does: segments below the recovery point
// are trusted (their indexes sanity-checked, rebuilt on any doubt); from the segment holding
// the recovery point on, every batch is validated (CRC and record framing), the log is cut at
// the first invalid byte, later segments are deleted and the indexes rebuilt.
import fs from 'node:fs';
import path from 'node:path';
import { readFully, type WalkStop, WINDOW_BYTES } from './batch-walker.ts';
import { CHECKPOINT_TMP, listDir, readCheckpoint } from './files.ts';
import { LogSegment } from './segment.ts';
import type { LogConfig, RecoveryReport } from './types.ts';

export interface LoadOptions {
  /** Recover even when the clean-shutdown marker is present (offline `recover`). */
  ignoreCleanMarker?: boolean;
  /** Validate every segment from the first, whatever the recovery point says. */
  full?: boolean;
}

export interface Loaded {
  segments: LogSegment[];
  report: RecoveryReport;
  /** Segments whose files recovery changed or rebuilt: to be synced before the recovery point moves past them. */
  touched: Set<LogSegment>;
  dirChanged: boolean;
  /** The recovery point the checkpoint file holds (null when missing or unreadable). */
  checkpoint: number | null;
}

/** All bytes of [from, to) are zero: padding or preallocated space, not a torn batch. */
function isZeroRange(fd: number, from: number, to: number, window: Buffer): boolean {
  for (let pos = from; pos < to; ) {
    const n = readFully(fd, window, 0, Math.min(window.length, to - pos), pos);
    if (n === 0) return true;
    for (let i = 0; i < n; i++) if (window[i] !== 0) return false;
    pos += n;
  }
  return true;
}

/** How many batches start in [from, end): a header walk, plus one for non-zero bytes it cannot parse. Best effort on damaged bytes. */
function countBatchesFrom(seg: LogSegment, from: number, end: number, maxBatchBytes: number, window: Buffer): number {
  const saved = seg.size;
  seg.size = end;
  const w = seg.walker(from, maxBatchBytes, window);
  let n = 0;
  while (w.next()) n++;
  seg.size = saved;
  if (w.stop !== null && !isZeroRange(seg.readFd, w.stop.position, end, window)) n++;
  return n;
}

function loadIndexFile(file: string, entrySize: number): Buffer | string {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  if (data.length % entrySize !== 0) return `size ${data.length} is not a multiple of ${entrySize}`;
  return data;
}

/**
 * Rebuilds a segment's indexes and offset metadata from its batches, validating each one
 * fully (recovery) or reading headers only (an index rebuild of a trusted segment).
 * Returns where the walk stopped early, if it did.
 */
function rebuild(seg: LogSegment, config: LogConfig, window: Buffer, validate: boolean): { batches: number; stop: WalkStop | null } {
  seg.offsetIndex.reset();
  seg.timeIndex.reset();
  seg.nextOffset = seg.baseOffset;
  seg.maxTimestampSoFar = -1;
  seg.offsetOfMaxTimestampSoFar = seg.baseOffset;
  seg.bytesSinceLastIndexEntry = 0;
  seg.rollBaseMs = null;
  const w = seg.walker(0, config.maxBatchBytes, window, validate);
  let batches = 0;
  while (w.next()) {
    const h = w.header!;
    if (h.baseOffset !== seg.nextOffset) {
      w.stop = {
        position: w.batchPosition,
        errorPosition: w.batchPosition,
        reason: 'offset-discontinuity',
        detail: `batch base offset ${h.baseOffset}, expected ${seg.nextOffset}`,
      };
      break;
    }
    if (w.batchPosition === 0) seg.rollBaseMs = h.maxTimestamp;
    seg.indexBatch(w.batchPosition, w.size, h.baseOffset + h.lastOffsetDelta, h.maxTimestamp, config.indexIntervalBytes);
    batches++;
  }
  return { batches, stop: w.stop };
}

/** Trusted segment: keep its indexes if they pass every check, else rebuild them from headers. Returns a stop when the bytes themselves are in doubt. */
function loadTrusted(seg: LogSegment, config: LogConfig, window: Buffer, report: RecoveryReport, touched: Set<LogSegment>): WalkStop | null {
  const oi = loadIndexFile(seg.paths.index, 8);
  const ti = loadIndexFile(seg.paths.timeIndex, 12);
  let problem: string | null = typeof oi === 'string' ? `${seg.paths.index}: ${oi}` : typeof ti === 'string' ? `${seg.paths.timeIndex}: ${ti}` : null;
  if (problem === null) {
    seg.offsetIndex.load(oi as Buffer);
    seg.timeIndex.load(ti as Buffer);
    problem = seg.offsetIndex.problem(seg.size);
    if (problem === null) {
      const w = seg.scanTail(config.maxBatchBytes, window);
      if (w.stop !== null) {
        if (w.stop.reason !== 'index-mismatch') return w.stop;
        problem = w.stop.detail;
      } else {
        problem = seg.timeIndex.problem(seg.nextOffset - 1 - seg.baseOffset);
      }
    }
  }
  if (problem !== null) {
    const r = rebuild(seg, config, window, false);
    if (r.stop !== null) return r.stop;
    report.indexesRebuilt += 2;
    touched.add(seg);
  }
  if (seg.rollBaseMs === null && seg.size > 0) {
    const w = seg.walker(0, config.maxBatchBytes, window);
    if (w.next()) seg.rollBaseMs = w.header!.maxTimestamp;
  }
  return null;
}

function deleteSegmentFiles(seg: LogSegment): void {
  seg.close();
  for (const p of [seg.paths.log, seg.paths.index, seg.paths.timeIndex]) fs.rmSync(p, { force: true });
}

function emptyReport(): RecoveryReport {
  return {
    cleanShutdown: false,
    recoveryPoint: 0,
    segmentsScanned: 0,
    batchesValidated: 0,
    bytesTruncated: 0,
    batchesTruncated: 0,
    segmentsDeleted: 0,
    indexesRebuilt: 0,
    strayFiles: [],
    logEndOffset: 0,
    durationMs: 0,
    segments: 0,
    zeroTailBytes: 0,
    deletedFiles: [],
  };
}

export function loadSegments(dir: string, config: LogConfig, opts: LoadOptions = {}): Loaded {
  const t0 = performance.now();
  fs.mkdirSync(dir, { recursive: true });
  const report = emptyReport();
  const touched = new Set<LogSegment>();
  let dirChanged = false;
  const listing = listDir(dir);
  report.strayFiles = listing.strays;
  for (const name of listing.orphanIndexes) {
    fs.rmSync(path.join(dir, name), { force: true });
    report.deletedFiles.push(name);
  }
  if (listing.hasCheckpointTmp) {
    fs.rmSync(path.join(dir, CHECKPOINT_TMP), { force: true });
    report.deletedFiles.push(CHECKPOINT_TMP);
  }
  if (report.deletedFiles.length > 0) dirChanged = true;

  const checkpoint = readCheckpoint(dir);
  const clean = listing.hasCleanMarker && !opts.ignoreCleanMarker && checkpoint.offset !== null && !opts.full;
  report.cleanShutdown = listing.hasCleanMarker;
  const recoveryPoint = opts.full ? 0 : (checkpoint.offset ?? 0);
  report.recoveryPoint = recoveryPoint;

  const window = Buffer.allocUnsafe(WINDOW_BYTES);
  const segments: LogSegment[] = [];
  try {
    for (const base of listing.logs) segments.push(LogSegment.open(dir, base, config));
    let cut = -1; // index of the first segment to delete
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const prev = i > 0 ? segments[i - 1] : null;
      if (prev !== null && seg.baseOffset < prev.nextOffset) {
        report.truncation = {
          segmentBaseOffset: seg.baseOffset,
          position: 0,
          reason: `overlap: segment starts at offset ${seg.baseOffset} but the previous one ends at ${prev.nextOffset - 1}`,
        };
        cut = i;
        break;
      }
      const nextBase = i + 1 < segments.length ? segments[i + 1].baseOffset : Infinity;
      const isLast = i === segments.length - 1;
      const fileSize = seg.size;
      let stop: WalkStop | null = null;
      const trusted = clean || nextBase <= recoveryPoint;
      if (trusted) stop = loadTrusted(seg, config, window, report, touched);
      if (!trusted || stop !== null) {
        const r = rebuild(seg, config, window, true);
        report.segmentsScanned++;
        report.batchesValidated += r.batches;
        report.indexesRebuilt += 2;
        touched.add(seg);
        stop = r.stop;
      }
      if (stop === null) {
        if (!isLast) seg.timeIndex.maybeAppend(seg.maxTimestampSoFar, seg.offsetOfMaxTimestampSoFar - seg.baseOffset, true);
        continue;
      }
      const zeroTail = isZeroRange(seg.readFd, stop.position, fileSize, window);
      const lostBatches = zeroTail ? 0 : countBatchesFrom(seg, stop.position, fileSize, config.maxBatchBytes, window);
      seg.size = stop.position;
      fs.truncateSync(seg.paths.log, stop.position);
      touched.add(seg);
      report.bytesTruncated += fileSize - stop.position;
      if (!isLast) seg.timeIndex.maybeAppend(seg.maxTimestampSoFar, seg.offsetOfMaxTimestampSoFar - seg.baseOffset, true);
      if (zeroTail) {
        report.zeroTailBytes += fileSize - stop.position;
        // Padding after whole batches loses nothing; later segments stay when they continue the offsets.
        if (isLast || nextBase === seg.nextOffset) continue;
      }
      report.batchesTruncated += lostBatches;
      report.truncation ??= {
        segmentBaseOffset: seg.baseOffset,
        position: stop.errorPosition,
        reason: `${stop.reason}: ${stop.detail} (batch at position ${stop.position})`,
      };
      cut = i + 1;
      break;
    }
    if (cut >= 0 && cut < segments.length) {
      for (const seg of segments.splice(cut)) {
        report.bytesTruncated += seg.size;
        report.batchesTruncated += countBatchesFrom(seg, 0, seg.size, config.maxBatchBytes, window);
        touched.delete(seg);
        deleteSegmentFiles(seg);
        report.segmentsDeleted++;
      }
      dirChanged = true;
    }
    if (segments.length === 0) {
      segments.push(LogSegment.create(dir, 0, config));
      dirChanged = true;
    }
    // An index rebuilt in memory goes to its file now (recovery's writes are synced by the caller).
    for (const seg of touched) {
      seg.offsetIndex.persist();
      seg.timeIndex.persist();
    }
  } catch (e) {
    for (const seg of segments) {
      try {
        seg.close();
      } catch {
        // already failing: the first error is the one to report
      }
    }
    throw e;
  }
  report.segments = segments.length;
  report.logEndOffset = segments[segments.length - 1].nextOffset;
  report.durationMs = performance.now() - t0;
  return { segments, report, touched, dirChanged, checkpoint: checkpoint.offset };
}
