// A partition's log: segments by base offset, the append path the broker calls, reads by
// offset and timestamp, flush policies, the recovery-point checkpoint and the clean-shutdown
// marker.
//
// After a failed write, flush or checkpoint the log refuses appends (StorageError 'offline')
// until it is reopened, as Kafka takes the log directory offline: after a failed fsync the
// kernel may already have dropped the dirty pages, so retrying could acknowledge data that is
// not there. Reads keep working; a failed append's partial bytes are cut off first.
import fs from 'node:fs';
import path from 'node:path';
import {
  ATTRIBUTES_OFFSET,
  CorruptBatchError,
  CRC_OFFSET,
  crc32c,
  decodeBatch,
  LOG_APPEND_TIME_FLAG,
  LOG_OVERHEAD,
  readBatchHeader,
  stampBatch,
  validateBatch,
  type ValidateOptions,
} from '../records/index.ts';
import { readFully, WINDOW_BYTES } from './batch-walker.ts';
import { StorageError } from './errors.ts';
import { resolveLogConfig } from './config.ts';
import { allocAligned, checkDirectIoDir, DIRECT_ALIGNMENT, type AlignedBuffer } from './direct-io.ts';
import { fsyncDir } from '../common/atomic-file.ts';
import { removeCleanMarker, writeCheckpoint, writeCleanMarker } from './files.ts';
import { LatencyRecorder, usSince } from '../common/latency.ts';
import { loadSegments, type Loaded, type LoadOptions } from './load.ts';
import { LogSegment } from './segment.ts';
import type { AppendOptions, AppendResult, LogConfig, LogStats, ReadResult, RecoveryReport } from './types.ts';

/** Kafka writes the recovery-point checkpoint from a periodic task; at most this often here. */
const CHECKPOINT_INTERVAL_MS = 1000;

const NO_APPEND_OPTIONS: AppendOptions = Object.freeze({});

export interface LogOpenOptions extends LoadOptions {
  /** Clock for segment.ms, log-append time and checkpoint pacing (tests inject one). */
  now?: () => number;
}

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

function errText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const msg = String(err?.message ?? e);
  return err?.code && !msg.startsWith(err.code) ? `${err.code}: ${msg}` : msg;
}

/** log.fsync.error=retry: attempts of one flush before the log goes offline anyway. */
const FSYNC_RETRY_ATTEMPTS = 3;

export class Log {
  readonly dir: string;
  readonly config: LogConfig;
  readonly recovery: RecoveryReport;
  private readonly segments: LogSegment[];
  private active: LogSegment;
  private readonly staging: AlignedBuffer | null;
  private readonly window = Buffer.allocUnsafe(WINDOW_BYTES);
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private failure: string | null = null;
  private _recoveryPoint: number;
  private checkpointed: number;
  private lastCheckpointMs: number;
  /** Made once: append runs per batch and must not allocate what it can reuse. */
  private readonly verifyOptions: ValidateOptions;
  private readonly headerOptions: ValidateOptions;
  private readonly writeLatency = new LatencyRecorder();
  private readonly flushLatency = new LatencyRecorder();
  private counters = { appends: 0, records: 0, bytes: 0, flushes: 0, rollFlushes: 0, rolls: 0, checkpoints: 0, indexSyncs: 0, fsyncRetries: 0 };
  private lastFsyncError: string | null = null;

  /** Creates dir if needed; runs recovery unless the clean-shutdown marker is present, and removes the marker. */
  static open(dir: string, config: Partial<LogConfig> = {}, opts: LogOpenOptions = {}): Log {
    const cfg = resolveLogConfig(config);
    const abs = path.resolve(dir);
    fs.mkdirSync(abs, { recursive: true });
    if (cfg.io === 'direct') checkDirectIoDir(abs);
    const loaded = loadSegments(abs, cfg, opts);
    try {
      return new Log(abs, cfg, loaded, opts.now ?? Date.now);
    } catch (e) {
      for (const s of loaded.segments) {
        try {
          s.close();
        } catch {
          // the open error is the one to report
        }
      }
      throw e;
    }
  }

  private constructor(dir: string, config: LogConfig, loaded: Loaded, now: () => number) {
    const { segments, report, touched, dirChanged } = loaded;
    this.dir = dir;
    this.config = config;
    this.recovery = report;
    this.segments = segments;
    this.now = now;
    this.verifyOptions = { maxBatchBytes: config.maxBatchBytes, checkRecords: true };
    this.headerOptions = { maxBatchBytes: config.maxBatchBytes };
    this.active = segments[segments.length - 1];
    // Once per log: the largest batch plus the partial block before it, rounded to whole blocks.
    this.staging = config.io === 'direct' ? allocAligned(config.maxBatchBytes + 2 * DIRECT_ALIGNMENT) : null;
    this.active.openWriter(config.io, this.staging);
    // What recovery changed must be durable before the checkpoint says it need not be checked again.
    for (const seg of touched) {
      seg.dirty = true;
      this.counters.indexSyncs += seg.flush(config.sync);
      if (seg !== this.active) seg.closeWriter();
    }
    if (dirChanged) fsyncDir(dir);
    this._recoveryPoint = this.logEndOffset;
    this.checkpointed = loaded.checkpoint ?? -1;
    this.lastCheckpointMs = now();
    if (this.checkpointed !== this._recoveryPoint) this.writeCheckpointNow();
    if (report.cleanShutdown) removeCleanMarker(dir);
    if (config.flush.kind === 'ms') {
      this.timer = setInterval(() => this.flushFromTimer(), config.flush.every);
      this.timer.unref();
    }
  }

  get logStartOffset(): number {
    return this.segments[0].baseOffset;
  }

  get logEndOffset(): number {
    return this.active.nextOffset;
  }

  /** Everything below it has been flushed (the checkpoint file may lag; see stats().checkpointedRecoveryPoint). */
  get recoveryPoint(): number {
    return this._recoveryPoint;
  }

  /** Why the log is offline (an I/O error since it was opened), or null. */
  get offlineReason(): string | null {
    return this.failure;
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new Error(`${what}: log ${this.dir} is closed`);
  }

  private checkWritable(what: string): void {
    this.checkOpen(what);
    if (this.failure !== null) {
      throw new StorageError('offline', `${what}: log ${this.dir} is offline after an earlier I/O error (${this.failure}); reopen it`, { dir: this.dir });
    }
  }

  /** Marks the log failed and returns the error to throw. */
  private fail(what: string, e: unknown): StorageError {
    this.failure = `${what}: ${errText(e)}`;
    return new StorageError('offline', `${this.failure}; the log refuses appends until it is reopened`, {
      dir: this.dir,
      errno: (e as NodeJS.ErrnoException)?.code ?? null,
    });
  }

  /**
   * Kafka's six steps: checks (size, CRC and record framing, one batch), offsets from the log
   * end offset, the batch's bytes as sent (stamped in place: baseOffset, leader epoch, and the
   * max timestamp under log-append time), write at the physical position, offset metadata,
   * sparse index; then the flush policy.
   */
  append(batch: Buffer, opts: AppendOptions = NO_APPEND_OPTIONS): AppendResult {
    if (this.closed || this.failure !== null) this.checkWritable('append');
    const cfg = this.config;
    if (!Buffer.isBuffer(batch)) throw new StorageError('invalid-argument', `append takes a Buffer holding one record batch, got ${typeof batch}`);
    const size = batch.length;
    if (size > cfg.maxBatchBytes) {
      throw new StorageError('too-large', `batch of ${size} bytes exceeds maxBatchBytes (message.max.bytes) = ${cfg.maxBatchBytes}; nothing was written`, { size, limit: cfg.maxBatchBytes });
    }
    if (size > cfg.segmentBytes) {
      throw new StorageError('too-large', `batch of ${size} bytes exceeds segmentBytes (segment.bytes) = ${cfg.segmentBytes}; nothing was written`, { size, limit: cfg.segmentBytes });
    }
    let header;
    try {
      // One header parse, one CRC pass and one record walk per append; the batch is written from
      // the caller's buffer (io=direct copies it once, into the aligned staging buffer).
      header = cfg.verifyBatches ? validateBatch(batch, 0, this.verifyOptions) : readBatchHeader(batch, 0, this.headerOptions);
    } catch (e) {
      if (e instanceof CorruptBatchError) {
        throw new StorageError('corrupt-batch', `${e.message}; nothing was written`, { reason: e.reason, position: e.position });
      }
      throw e;
    }
    const batchSize = LOG_OVERHEAD + header.length;
    if (batchSize !== size) {
      throw new StorageError('corrupt-batch', `append takes exactly one batch: the buffer holds ${size} bytes, its first batch ${batchSize}; nothing was written`);
    }
    const nowMs = opts.nowMs ?? this.now();
    const leo = this.active.nextOffset;
    const assign = opts.assignOffsets !== false;
    if (!assign && header.baseOffset !== leo) {
      throw new StorageError('invalid-argument', `follower append: batch base offset ${header.baseOffset} is not the log end offset ${leo}; nothing was written`, { expected: leo, got: header.baseOffset });
    }
    const baseOffset = leo;
    const lastOffset = baseOffset + header.lastOffsetDelta;
    let maxTimestamp = header.maxTimestamp;
    if ((header.attributes & LOG_APPEND_TIME_FLAG) !== 0 && assign) {
      // Log-append time: the broker's clock is the batch's time (Kafka rewrites maxTimestamp and the CRC).
      maxTimestamp = nowMs;
      batch.writeBigInt64BE(BigInt(nowMs), 35);
      batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
    }
    if (this.shouldRoll(size, lastOffset, nowMs)) this.roll();
    if (assign || opts.leaderEpoch !== undefined) {
      stampBatch(batch, 0, { baseOffset: assign ? baseOffset : undefined, partitionLeaderEpoch: opts.leaderEpoch });
    }
    const seg = this.active;
    const t0 = performance.now();
    let position: number;
    try {
      position = seg.append(batch, lastOffset, maxTimestamp, nowMs, cfg.indexIntervalBytes);
    } catch (e) {
      let cut = `the partial write was cut back to ${seg.size} bytes`;
      try {
        seg.writer?.cutBack(seg.size);
      } catch (e2) {
        cut = `cutting the partial write back to ${seg.size} bytes also failed (${errText(e2)}); recovery on reopen will cut it`;
      }
      throw this.fail(`append of ${size} bytes to ${seg.paths.log} at position ${seg.size} failed (${cut})`, e);
    }
    const writeUs = usSince(t0);
    this.writeLatency.record(writeUs);
    const c = this.counters;
    c.appends++;
    c.records += header.recordCount;
    c.bytes += size;
    let flushUs = 0;
    const policy = cfg.flush;
    const flushed =
      policy.kind === 'per-batch' || (policy.kind === 'messages' && lastOffset + 1 - this._recoveryPoint >= policy.every);
    if (flushed) flushUs = this.flushNow();
    return {
      baseOffset,
      lastOffset,
      segmentBaseOffset: seg.baseOffset,
      position,
      logAppendTimeMs: nowMs,
      bytes: size,
      records: header.recordCount,
      writeUs,
      flushUs,
      flushed,
    };
  }

  private shouldRoll(size: number, lastOffset: number, nowMs: number): boolean {
    const seg = this.active;
    if (seg.isEmpty) return false;
    if (seg.isFullFor(size, lastOffset, this.config.segmentBytes)) return true;
    return seg.rollBaseMs !== null && nowMs - seg.rollBaseMs > this.config.segmentMs;
  }

  /** New active segment at the log end offset; the old one is sealed and flushed (Kafka flushes it on roll). */
  private roll(): void {
    const old = this.active;
    const base = old.nextOffset;
    const t0 = performance.now();
    let seg: LogSegment;
    try {
      old.seal();
      // Indexes too: once the checkpoint passes this segment, recovery trusts its index files.
      this.counters.indexSyncs += old.flush(this.config.sync);
      old.closeWriter();
      seg = LogSegment.create(this.dir, base, this.config);
      try {
        seg.openWriter(this.config.io, this.staging);
        fsyncDir(this.dir);
      } catch (e) {
        seg.close();
        throw e;
      }
    } catch (e) {
      throw this.fail(`rolling ${old.paths.log} to a new segment at offset ${base} failed`, e);
    }
    this.segments.push(seg);
    this.active = seg;
    this.counters.rolls++;
    this.counters.rollFlushes++;
    this.flushLatency.record(usSince(t0));
    this._recoveryPoint = base;
    this.maybeCheckpoint(false);
  }

  /**
   * fsync/fdatasync of the active segment's .log; moves the recovery point to the log end.
   * The index files are synced before the next checkpoint instead (syncIndexes): recovery
   * rebuilds the indexes of every segment from the checkpointed recovery point on.
   */
  private flushNow(): number {
    const t0 = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        this.active.flushLog(this.config.sync);
        break;
      } catch (e) {
        // log.fsync.error=retry: the unsafe behaviour kept for comparison. The kernel has marked
        // the failed pages clean, so the retry succeeds and the batch is acknowledged without
        // its data on disk (ATC'20, "Can applications recover from fsync failures?").
        if (this.config.fsyncError === 'retry' && attempt < FSYNC_RETRY_ATTEMPTS) {
          this.counters.fsyncRetries++;
          this.lastFsyncError = `${this.config.sync} of ${this.active.paths.log} failed (${errText(e)}); retried (log.fsync.error=retry)`;
          process.stderr.write(`durolab log ${this.dir}: ${this.lastFsyncError}\n`);
          continue;
        }
        throw this.fail(`${this.config.sync} of ${this.active.paths.log} failed${attempt > 1 ? ` ${attempt} times` : ''}`, e);
      }
    }
    this._recoveryPoint = this.active.nextOffset;
    this.maybeCheckpoint(false);
    const us = usSince(t0);
    this.flushLatency.record(us);
    this.counters.flushes++;
    return us;
  }

  private flushFromTimer(): void {
    if (this.closed || this.failure !== null || this.logEndOffset <= this._recoveryPoint) return;
    try {
      this.flushNow();
    } catch {
      // Recorded in this.failure; the next append reports it. A timer must not throw.
    }
  }

  /**
   * Index entries written and durable in every segment. Before a checkpoint: once the
   * checkpoint has moved past a segment, recovery trusts that segment's index files.
   */
  private syncIndexes(): void {
    const call = this.config.sync;
    for (const seg of this.segments) this.counters.indexSyncs += seg.flushIndexes(call);
  }

  private writeCheckpointNow(): void {
    this.syncIndexes();
    writeCheckpoint(this.dir, this._recoveryPoint);
    this.checkpointed = this._recoveryPoint;
    this.lastCheckpointMs = this.now();
    this.counters.checkpoints++;
  }

  private maybeCheckpoint(force: boolean): void {
    if (this.checkpointed === this._recoveryPoint) return;
    if (!force && this.now() - this.lastCheckpointMs < CHECKPOINT_INTERVAL_MS) return;
    try {
      this.writeCheckpointNow();
    } catch (e) {
      throw this.fail(`syncing the index files and writing the recovery-point checkpoint in ${this.dir} failed`, e);
    }
  }

  /** Flushes now (whatever the policy) and returns the time it took in µs. */
  flush(): number {
    this.checkWritable('flush');
    return this.flushNow();
  }

  private segmentIndexFor(offset: number): number {
    const segs = this.segments;
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

  /**
   * Whole batches from the one containing `offset`, up to maxBytes (at least one batch when
   * there is any), only batches whose last offset is below maxOffset (exclusive, e.g. the high
   * watermark). May span segments.
   */
  read(offset: number, maxBytes: number, maxOffset: number = Number.POSITIVE_INFINITY): ReadResult {
    this.checkOpen('read');
    const start = this.logStartOffset;
    const leo = this.logEndOffset;
    if (!Number.isSafeInteger(offset) || offset < start || offset > leo) {
      throw new StorageError('out-of-range', `read at offset ${offset}: the log ${this.dir} holds [${start}, ${leo})`, {
        logStartOffset: start,
        logEndOffset: leo,
      });
    }
    if (!(maxBytes >= 0) || !(maxOffset >= 0)) {
      throw new StorageError('invalid-argument', `read at offset ${offset}: maxBytes (${maxBytes}) and maxOffset (${maxOffset}) must be non-negative numbers`);
    }
    const ranges: Array<{ seg: LogSegment; from: number; to: number }> = [];
    let total = 0;
    let firstOffset = -1;
    let nextOffset = offset;
    let done = false;
    for (let i = Math.max(0, this.segmentIndexFor(offset)); i < this.segments.length && !done; i++) {
      const seg = this.segments[i];
      const from = seg.baseOffset <= offset ? seg.offsetIndex.lookupPosition(offset - seg.baseOffset) : 0;
      const w = seg.walker(from, this.config.maxBatchBytes, this.window);
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
    const data = Buffer.allocUnsafe(total);
    let off = 0;
    for (const r of ranges) {
      const len = r.to - r.from;
      if (readFully(r.seg.readFd, data, off, len, r.from) !== len) {
        throw new StorageError('unreadable', `read at offset ${offset}: ${r.seg.paths.log} ended before position ${r.to}`);
      }
      off += len;
    }
    return { data, firstOffset: firstOffset < 0 ? offset : firstOffset, nextOffset };
  }

  /** First offset whose record timestamp is >= ts, or null when every record is older. */
  offsetForTimestamp(ts: number): number | null {
    this.checkOpen('offsetForTimestamp');
    for (const seg of this.segments) {
      if (seg.isEmpty || seg.maxTimestampSoFar < ts) continue;
      // Records up to a time index entry's offset are no newer than its timestamp.
      const ti = seg.timeIndex.lastBelow(ts);
      const from = ti < 0 ? seg.baseOffset : seg.baseOffset + seg.timeIndex.relOffsetAt(ti) + 1;
      const w = seg.walker(seg.positionOf(from, this.config.maxBatchBytes, this.window), this.config.maxBatchBytes, this.window);
      while (w.next()) {
        if (w.header!.maxTimestamp < ts) continue;
        const { records } = decodeBatch(w.batchBytes(), 0, { maxBatchBytes: this.config.maxBatchBytes });
        for (const r of records) if (r.offset >= from && r.timestamp >= ts) return r.offset;
      }
    }
    return null;
  }

  /**
   * Drops every batch that holds an offset >= offset (replica truncation, KIP-101). The cut is
   * at a batch boundary: when offset falls inside a batch the log end becomes that batch's base.
   */
  truncateTo(offset: number): void {
    this.checkWritable('truncateTo');
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`truncateTo: offset must be a non-negative integer, got ${offset}`);
    if (offset >= this.logEndOffset) return;
    try {
      const idx = this.segmentIndexFor(offset);
      const keep = idx < 0 ? 0 : idx + 1;
      const drop = this.segments.splice(keep);
      this.active.closeWriter();
      for (const seg of drop) {
        seg.close();
        for (const p of [seg.paths.log, seg.paths.index, seg.paths.timeIndex]) fs.rmSync(p, { force: true });
      }
      if (this.segments.length === 0) {
        // Below the log start: start over at offset (Kafka's truncateFullyAndStartAt).
        this.segments.push(LogSegment.create(this.dir, offset, this.config));
      } else {
        const seg = this.segments[this.segments.length - 1];
        const pos = seg.positionOf(offset, this.config.maxBatchBytes, this.window);
        seg.closeWriter();
        fs.truncateSync(seg.paths.log, pos);
        seg.size = pos;
        seg.dirty = true;
        // Both indexes are keyed by batch last offsets: the cut batch and later ones hold offsets >= offset.
        seg.offsetIndex.truncateToRel(offset - seg.baseOffset);
        seg.timeIndex.truncateToRel(offset - seg.baseOffset);
        const tail = seg.scanTail(this.config.maxBatchBytes, this.window);
        if (tail.stop !== null) throw new Error(`${seg.paths.log}: ${tail.stop.reason} at position ${tail.stop.position} after truncation`);
        if (pos === 0) seg.rollBaseMs = null;
        seg.offsetIndex.persist();
        seg.timeIndex.persist();
      }
      this.active = this.segments[this.segments.length - 1];
      this.active.openWriter(this.config.io, this.staging);
      if (drop.length > 0) fsyncDir(this.dir);
    } catch (e) {
      throw this.fail(`truncating ${this.dir} to offset ${offset} failed`, e);
    }
    if (this._recoveryPoint > this.logEndOffset) this._recoveryPoint = this.logEndOffset;
    // A checkpoint past the new end would let recovery skip data appended after this.
    if (this.checkpointed > this._recoveryPoint) this.maybeCheckpoint(true);
  }

  /** Clean shutdown: flush, checkpoint, clean-shutdown marker. A failed log closes without the marker, so the next open recovers. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    let error: unknown = null;
    if (this.failure === null) {
      try {
        this.active.seal();
        this.active.flushLog(this.config.sync);
        this._recoveryPoint = this.logEndOffset;
        // Sealing trimmed the index files: durable before the clean-shutdown marker trusts them.
        this.syncIndexes();
        if (this.checkpointed !== this._recoveryPoint) this.writeCheckpointNow();
        writeCleanMarker(this.dir);
      } catch (e) {
        error = e;
      }
    }
    for (const seg of this.segments) {
      try {
        seg.close();
      } catch (e) {
        error ??= e;
      }
    }
    if (error !== null) {
      throw new StorageError('offline', `closing ${this.dir} failed (${errText(error)}); no clean-shutdown marker was written, so the next open recovers`);
    }
  }

  /**
   * Closes the files without flushing, checkpointing or writing the clean-shutdown marker:
   * what a killed process leaves behind (page-cache data stays; the next open recovers).
   * For fault injection and tests.
   */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const seg of this.segments) {
      try {
        seg.close();
      } catch {
        // nothing to save: this is a simulated crash
      }
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  stats(): LogStats {
    const c = this.counters;
    return {
      appends: c.appends,
      records: c.records,
      bytes: c.bytes,
      flushes: c.flushes,
      flushTimeUs: this.flushLatency.summary(),
      writeTimeUs: this.writeLatency.summary(),
      segments: this.segments.length,
      rolls: c.rolls,
      logStartOffset: this.logStartOffset,
      logEndOffset: this.logEndOffset,
      recoveryPoint: this._recoveryPoint,
      rollFlushes: c.rollFlushes,
      checkpoints: c.checkpoints,
      indexSyncs: c.indexSyncs,
      checkpointedRecoveryPoint: this.checkpointed,
      failed: this.failure,
      fsyncRetries: c.fsyncRetries,
      lastFsyncError: this.lastFsyncError,
    };
  }

  segmentInfos(): SegmentInfo[] {
    return this.segments.map((s) => ({
      baseOffset: s.baseOffset,
      logPath: s.paths.log,
      indexPath: s.paths.index,
      timeIndexPath: s.paths.timeIndex,
      sizeBytes: s.size,
      nextOffset: s.nextOffset,
      indexEntries: s.offsetIndex.entries,
      timeIndexEntries: s.timeIndex.entries,
    }));
  }
}

/** Offline recovery (`durolab engine recover`): validates from the recovery point whatever the marker says, then closes cleanly. */
export function recoverLog(dir: string, config: Partial<LogConfig> = {}, opts: { full?: boolean } = {}): RecoveryReport {
  const log = Log.open(dir, config, { ignoreCleanMarker: true, full: opts.full });
  const report = log.recovery;
  log.close();
  return report;
}
