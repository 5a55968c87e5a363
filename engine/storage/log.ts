// A partition's log (Kafka's UnifiedLog/LocalLog): segments by base offset, the append path the
// broker calls, rolls, truncation and close. Reads are in log-read.ts; cutting the segment list
// back in log-truncate.ts; flushes, the recovery point and its checkpoint, and the background
// flush of a rolled segment in log-flush.ts; opening a directory (LogLoader) in load.ts.
//
// After a failed write, flush or checkpoint the log refuses appends (StorageError 'offline')
// until it is reopened, as Kafka takes the log directory offline: after a failed fsync the
// kernel may already have dropped the dirty pages, so retrying could acknowledge data that is
// not there. Reads keep working; a failed append's partial bytes are cut off first.
import fs from 'node:fs';
import path from 'node:path';
import { MAGIC_V2, stampBatchFields, type BatchHeader, type ValidateOptions } from '../records/index.ts';
import { sharedWindow } from './batch-walker.ts';
import { StorageError } from './errors.ts';
import { resolveLogConfig } from './config.ts';
import { allocAligned, checkDirectIoDir, DIRECT_ALIGNMENT, type AlignedBuffer } from './direct-io.ts';
import { fsyncDir } from '../common/atomic-file.ts';
import { makeLogDir, removeCleanMarker, writeCleanMarker } from './files.ts';
import { LatencyRecorder, usSince } from '../common/latency.ts';
import { loadSegments, type Loaded, type LoadOptions } from './load.ts';
import { errText, LogFlusher } from './log-flush.ts';
import { validateAndAssignOffsets } from './log-validator.ts';
import { offsetForTimestamp, readBatches, sliceBatches, type ReadContext } from './log-read.ts';
import { truncateSegments } from './log-truncate.ts';
import { LogSegment, type SegmentInfo } from './segment.ts';
import { NativeAppender, WRITTEN } from './native-append.ts';
import { writeError } from './file-write.ts';
import type { AppendOptions, AppendResult, LogConfig, LogStats, ReadResult, RecoveryReport, SliceResult } from './types.ts';

const NO_APPEND_OPTIONS: AppendOptions = Object.freeze({});

export interface LogOpenOptions extends LoadOptions {
  /** Clock for segment.ms, log-append time and checkpoint pacing (tests inject one). */
  now?: () => number;
  /** Called once, when an I/O error takes the log offline, with the error its callers get (details: dir, errno, file, atMs). */
  onOffline?: (e: StorageError) => void;
}

/** Why and since when a log is offline: the details every refusal carries, so the answers name the first cause. */
interface OfflineCause {
  text: string;
  errno: string | null;
  file: string;
  atMs: number;
}

export class Log {
  readonly dir: string;
  readonly config: LogConfig;
  readonly recovery: RecoveryReport;
  private readonly segments: LogSegment[];
  private active: LogSegment;
  private readonly staging: AlignedBuffer | null;
  private readonly window = sharedWindow();
  private readonly now: () => number;
  private closed = false;
  private failure: OfflineCause | null = null;
  private readonly onOffline: ((e: StorageError) => void) | undefined;
  private readonly flusher: LogFlusher;
  private readonly readContext: ReadContext;
  /** Made once: append runs per batch and must not allocate what it can reuse. */
  private readonly verifyOptions: ValidateOptions;
  private readonly headerOptions: ValidateOptions;
  private readonly nativeAppender: NativeAppender;
  private readonly writeLatency = new LatencyRecorder();
  private readonly rollLatency = new LatencyRecorder();
  private counters = { appends: 0, records: 0, bytes: 0, rolls: 0 };

  /** Creates dir if needed; runs recovery unless the clean-shutdown marker is present, and removes the marker. */
  static open(dir: string, config: Partial<LogConfig> = {}, opts: LogOpenOptions = {}): Log {
    const cfg = resolveLogConfig(config);
    const abs = path.resolve(dir);
    makeLogDir(abs);
    if (cfg.io === 'direct') checkDirectIoDir(abs);
    const loaded = loadSegments(abs, cfg, opts);
    try {
      return new Log(abs, cfg, loaded, opts.now ?? Date.now, opts.onOffline);
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

  private constructor(dir: string, config: LogConfig, loaded: Loaded, now: () => number, onOffline?: (e: StorageError) => void) {
    const { segments, report, touched, dirChanged } = loaded;
    this.dir = dir;
    this.onOffline = onOffline;
    this.config = config;
    this.recovery = report;
    this.segments = segments;
    this.now = now;
    // One header object per log, filled by every append's validation (nothing keeps it).
    const into: BatchHeader = { baseOffset: 0, length: 0, partitionLeaderEpoch: 0, magic: MAGIC_V2, crc: 0, attributes: 0, lastOffsetDelta: 0, firstTimestamp: 0, maxTimestamp: 0, producerId: 0, producerEpoch: 0, baseSequence: 0, recordCount: 0 };
    this.verifyOptions = { maxBatchBytes: config.maxBatchBytes, checkRecords: true, into };
    this.headerOptions = { maxBatchBytes: config.maxBatchBytes, into };
    this.nativeAppender = new NativeAppender(config);
    this.active = segments[segments.length - 1];
    // Once per log: the largest batch plus the partial block before it, rounded to whole blocks.
    this.staging = config.io === 'direct' ? allocAligned(config.maxBatchBytes + 2 * DIRECT_ALIGNMENT) : null;
    this.readContext = { dir, segments, maxBatchBytes: config.maxBatchBytes, window: this.window };
    this.active.openWriter(config.io, this.staging);
    const log = this;
    this.flusher = new LogFlusher(
      {
        dir,
        config,
        segments,
        active: () => log.active,
        now,
        fail: (what, e, file) => log.fail(what, e, file),
        down: () => log.closed || log.failure !== null,
      },
      this.logEndOffset,
      loaded.checkpoint ?? -1,
    );
    // What recovery changed must be durable before the checkpoint says it need not be checked again.
    for (const seg of touched) {
      seg.dirty = true;
      this.flusher.counters.indexSyncs += seg.flush(config.sync);
      if (seg !== this.active) seg.closeWriter();
    }
    if (dirChanged) fsyncDir(dir);
    if (this.flusher.checkpointed !== this.flusher.recoveryPoint) this.flusher.writeCheckpointNow();
    if (report.cleanShutdown) removeCleanMarker(dir);
    if (config.flush.kind === 'ms') this.flusher.startTimer(config.flush.every);
  }

  get logStartOffset(): number {
    return this.segments[0].baseOffset;
  }

  get logEndOffset(): number {
    return this.active.nextOffset;
  }

  /** Everything below it has been flushed (the checkpoint file may lag; see stats().checkpointedRecoveryPoint). */
  get recoveryPoint(): number {
    return this.flusher.recoveryPoint;
  }

  /** Why the log is offline (an I/O error since it was opened), or null. */
  get offlineReason(): string | null {
    return this.failure?.text ?? null;
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new Error(`${what}: log ${this.dir} is closed`);
  }

  private checkWritable(what: string): void {
    this.checkOpen(what);
    if (this.failure !== null) {
      const f = this.failure;
      throw new StorageError('offline', `${what}: log ${this.dir} is offline after an earlier I/O error (${f.text}); reopen it`, this.causeDetails(f));
    }
  }

  private causeDetails(f: OfflineCause): Record<string, unknown> {
    return { dir: this.dir, errno: f.errno, file: f.file, atMs: f.atMs };
  }

  /**
   * Marks the log failed and returns the error to throw. `file`: the file the failed call was on
   * (default: the error's own path, else the log dir). The first failure is the cause every later
   * refusal names, and the one onOffline hears of.
   */
  private fail(what: string, e: unknown, file?: string): StorageError {
    const first = this.failure === null;
    const cause: OfflineCause = {
      text: `${what}: ${errText(e)}`,
      errno: (e as NodeJS.ErrnoException)?.code ?? null,
      file: file ?? (e as NodeJS.ErrnoException)?.path ?? this.dir,
      atMs: Date.now(),
    };
    if (first) this.failure = cause;
    const err = new StorageError('offline', `${cause.text}; the log refuses appends until it is reopened`, this.causeDetails(cause));
    if (first) this.onOffline?.(err);
    return err;
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
    const nowMs = opts.nowMs ?? this.now();
    const leo = this.active.nextOffset;
    const assign = opts.assignOffsets !== false;
    if (assign) {
      // The leader's common case in one native call (native-append.ts); anything it does not write goes the JS way below.
      const seg = this.active;
      const code = this.nativeAppender.append(seg, batch, leo, opts.leaderEpoch, nowMs);
      if (code === WRITTEN) {
        const f = this.nativeAppender.out;
        const position = seg.size;
        const lastOffset = leo + f[5]!;
        seg.appended(batch.length, lastOffset, f[7]!, nowMs, cfg.indexIntervalBytes);
        return this.appendDone(seg, position, leo, lastOffset, f[11]!, batch.length, nowMs, f[12]!);
      }
      if (code < 0) throw this.writeFailed(seg, batch.length, writeError(code));
    }
    const size = batch.length;
    const { lastOffset, maxTimestamp, records } = validateAndAssignOffsets(batch, cfg, cfg.verifyBatches ? this.verifyOptions : this.headerOptions, leo, assign, nowMs);
    if (this.shouldRoll(size, lastOffset, nowMs)) this.roll();
    if (assign || opts.leaderEpoch !== undefined) stampBatchFields(batch, 0, assign ? leo : undefined, opts.leaderEpoch);
    const seg = this.active;
    const t0 = performance.now();
    let position: number;
    try {
      position = seg.append(batch, lastOffset, maxTimestamp, nowMs, cfg.indexIntervalBytes);
    } catch (e) {
      throw this.writeFailed(seg, size, e);
    }
    return this.appendDone(seg, position, leo, lastOffset, records, size, nowMs, usSince(t0));
  }

  /** After a failed write: the partial bytes cut off, the log offline; returns the error to throw. */
  private writeFailed(seg: LogSegment, size: number, e: unknown): StorageError {
    let cut = `the partial write was cut back to ${seg.size} bytes`;
    try {
      seg.writer?.cutBack(seg.size);
    } catch (e2) {
      cut = `cutting the partial write back to ${seg.size} bytes also failed (${errText(e2)}); recovery on reopen will cut it`;
    }
    return this.fail(`append of ${size} bytes to ${seg.paths.log} at position ${seg.size} failed (${cut})`, e, seg.paths.log);
  }

  /** The end of an append once its bytes are in the segment: figures, the flush policy, the result. */
  private appendDone(seg: LogSegment, position: number, baseOffset: number, lastOffset: number, records: number, size: number, nowMs: number, writeUs: number): AppendResult {
    this.writeLatency.record(writeUs);
    const c = this.counters;
    c.appends++;
    c.records += records;
    c.bytes += size;
    let flushUs = 0;
    const policy = this.config.flush;
    const flushed =
      policy.kind === 'per-batch' || (policy.kind === 'messages' && lastOffset + 1 - this.flusher.recoveryPoint >= policy.every);
    if (flushed) flushUs = this.flusher.flushNow();
    return {
      baseOffset,
      lastOffset,
      segmentBaseOffset: seg.baseOffset,
      position,
      logAppendTimeMs: nowMs,
      bytes: size,
      records,
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

  /**
   * New active segment at the log end offset. The old one is sealed (final time index entry,
   * index files trimmed, O_DIRECT padding cut) on the spot; its flush runs in the background
   * (Kafka's roll schedules flushUptoOffsetExclusive), and the recovery point moves past it
   * when that has completed.
   */
  private roll(): void {
    const old = this.active;
    const base = old.nextOffset;
    const t0 = performance.now();
    let seg: LogSegment;
    try {
      old.seal();
      old.closeWriter();
      seg = LogSegment.create(this.dir, base, this.config);
      try {
        seg.openWriter(this.config.io, this.staging);
      } catch (e) {
        seg.close();
        throw e;
      }
    } catch (e) {
      throw this.fail(`rolling ${old.paths.log} to a new segment at offset ${base} failed`, e, (e as NodeJS.ErrnoException)?.path ?? old.paths.log);
    }
    this.segments.push(seg);
    this.active = seg;
    this.counters.rolls++;
    this.flusher.flushSealedInBackground(old);
    this.rollLatency.record(usSince(t0));
  }

  /** Flushes now (whatever the policy) and returns the time it took in µs. */
  flush(): number {
    this.checkWritable('flush');
    return this.flusher.flushNow();
  }

  /**
   * Resolves when the background flushes of the segments rolled so far have finished (their
   * descriptors closed): the recovery point has moved past them unless the log went offline,
   * closed or was truncated meanwhile. Also after close(), before removing the directory.
   */
  rollFlushesSettled(): Promise<void> {
    return this.flusher.rollFlushesSettled();
  }

  /**
   * Whole batches from the one containing `offset`, up to maxBytes (at least one batch when
   * there is any), only batches whose last offset is below maxOffset (exclusive, e.g. the high
   * watermark). May span segments.
   */
  read(offset: number, maxBytes: number, maxOffset: number = Number.POSITIVE_INFINITY): ReadResult {
    this.checkOpen('read');
    return readBatches(this.readContext, offset, maxBytes, maxOffset);
  }

  /** What read() returns, as file slices (for sendfile); see sliceBatches. */
  slice(offset: number, maxBytes: number, maxOffset: number = Number.POSITIVE_INFINITY): SliceResult {
    this.checkOpen('read');
    return sliceBatches(this.readContext, offset, maxBytes, maxOffset);
  }

  /** First offset whose record timestamp is >= ts, or null when every record is older. */
  offsetForTimestamp(ts: number): number | null {
    this.checkOpen('offsetForTimestamp');
    return offsetForTimestamp(this.readContext, ts);
  }

  /**
   * Drops every batch that holds an offset >= offset (replica truncation, KIP-101). The cut is
   * at a batch boundary: when offset falls inside a batch the log end becomes that batch's base.
   */
  truncateTo(offset: number): void {
    this.checkWritable('truncateTo');
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`truncateTo: offset must be a non-negative integer, got ${offset}`);
    if (offset >= this.logEndOffset) return;
    const flusher = this.flusher;
    try {
      // Rolled segments still flushing in the background are flushed now: truncation may drop or reopen them.
      flusher.settleSync();
      this.active.closeWriter();
      this.active = truncateSegments(this.dir, this.segments, this.config, this.window, offset);
      this.active.openWriter(this.config.io, this.staging);
    } catch (e) {
      throw this.fail(`truncating ${this.dir} to offset ${offset} failed`, e);
    }
    if (flusher.recoveryPoint > this.logEndOffset) flusher.recoveryPoint = this.logEndOffset;
    // A checkpoint past the new end would let recovery skip data appended after this.
    if (flusher.checkpointed > flusher.recoveryPoint) flusher.maybeCheckpoint(true);
  }

  /** Clean shutdown: flush, checkpoint, clean-shutdown marker. A failed log closes without the marker, so the next open recovers. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const flusher = this.flusher;
    flusher.stopTimer();
    let error: unknown = null;
    if (this.failure === null) {
      try {
        flusher.settleSync();
        this.active.seal();
        this.active.flushLog(this.config.sync);
        flusher.recoveryPoint = this.logEndOffset;
        // Sealing trimmed the index files: durable before the clean-shutdown marker trusts them.
        flusher.syncIndexes();
        if (flusher.checkpointed !== flusher.recoveryPoint) flusher.writeCheckpointNow();
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
    this.flusher.drop();
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
    const f = this.flusher;
    return {
      appends: c.appends,
      records: c.records,
      bytes: c.bytes,
      flushes: f.counters.flushes,
      flushTimeUs: f.flushLatency.summary(),
      writeTimeUs: this.writeLatency.summary(),
      segments: this.segments.length,
      rolls: c.rolls,
      logStartOffset: this.logStartOffset,
      logEndOffset: this.logEndOffset,
      recoveryPoint: f.recoveryPoint,
      rollTimeUs: this.rollLatency.summary(),
      rollFlushes: f.counters.rollFlushes,
      rollFlushesPending: f.pendingRollFlushes,
      rollFlushTimeUs: f.rollFlushLatency.summary(),
      checkpoints: f.counters.checkpoints,
      indexSyncs: f.counters.indexSyncs,
      checkpointedRecoveryPoint: f.checkpointed,
      failed: this.failure?.text ?? null,
      fsyncRetries: f.counters.fsyncRetries,
      lastFsyncError: f.lastFsyncError,
    };
  }

  segmentInfos(): SegmentInfo[] {
    return this.segments.map((s) => s.info());
  }
}

/** Offline recovery (`durolab engine recover`): validates from the recovery point whatever the marker says, then closes cleanly. */
export function recoverLog(dir: string, config: Partial<LogConfig> = {}, opts: { full?: boolean } = {}): RecoveryReport {
  const log = Log.open(dir, config, { ignoreCleanMarker: true, full: opts.full });
  const report = log.recovery;
  log.close();
  return report;
}
