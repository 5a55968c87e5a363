// Contract of the segment engine (engine/storage). Kafka's names are kept where a setting
// has one (segment.bytes, segment.ms, segment.index.bytes, index.interval.bytes,
// flush.messages, flush.ms, message.max.bytes).

import type { FlushPolicy, FsyncErrorPolicy, IoMode, SyncCall } from '../settings/values.ts';
// Declared once, in the settings registry.
export type { FlushPolicy, IoMode, SyncCall } from '../settings/values.ts';
import type { LatencySummary } from '../common/latency.ts';

export interface LogConfig {
  io: IoMode;
  flush: FlushPolicy;
  sync: SyncCall;
  segmentBytes: number; // segment.bytes, default 1 GiB
  segmentMs: number; // segment.ms, default 7 days
  segmentIndexBytes: number; // segment.index.bytes, default 10 MiB
  indexIntervalBytes: number; // index.interval.bytes, default 4096
  maxBatchBytes: number; // message.max.bytes, default 1 MiB + 12 (Kafka: 1048588)
  /**
   * Check each appended batch's CRC-32C and record framing before writing it (default true,
   * as Kafka's leader does). false skips the check (a follower or otherwise trusted path, and
   * for measuring what it costs: at 64 KiB validation takes ~14 µs here, about as long as the
   * page-cache write itself; see README "CRC cost").
   */
  verifyBatches: boolean;
  /** log.fsync.error: after a failed fsync/fdatasync, go offline (fail-stop) or retry it and acknowledge (retry: unsafe, for comparison). */
  fsyncError: FsyncErrorPolicy;
}

export interface AppendOptions {
  /** Stamped into the batch header (partitionLeaderEpoch). Default: leave as sent. */
  leaderEpoch?: number;
  /**
   * true (leader): baseOffset is assigned from the log end offset and stamped.
   * false (follower): the batch keeps its offsets, which must equal the log end offset.
   */
  assignOffsets?: boolean;
  nowMs?: number;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  segmentBaseOffset: number;
  position: number;
  logAppendTimeMs: number;
  bytes: number;
  records: number;
  /** Time in write(2)/pwrite(2) for this append, µs. */
  writeUs: number;
  /** Time in fsync/fdatasync inside this append (0 when the policy did not flush), µs. */
  flushUs: number;
  flushed: boolean;
}

export interface ReadResult {
  /** Whole batches, concatenated as stored. Empty when nothing is available. */
  data: Buffer;
  firstOffset: number;
  /** Offset after the last batch returned (the next fetch position). */
  nextOffset: number;
}

/** A byte range of a segment file, by the descriptor that reads it. */
export interface FileSlice {
  fd: number;
  position: number;
  length: number;
  /** The segment's path, for messages. */
  file: string;
}

/** A read as file slices (Log.slice): the batches ReadResult would hold, not read. */
export interface SliceResult {
  slices: FileSlice[];
  bytes: number;
  firstOffset: number;
  nextOffset: number;
}

export interface RecoveryReport {
  cleanShutdown: boolean;
  recoveryPoint: number;
  segmentsScanned: number;
  batchesValidated: number;
  bytesTruncated: number;
  /** Whole or partial batches dropped at and after the first invalid byte. */
  batchesTruncated: number;
  segmentsDeleted: number;
  indexesRebuilt: number;
  strayFiles: string[];
  logEndOffset: number;
  durationMs: number;
  /** Human-readable reason for the truncation, if any (corruption reason and position). */
  truncation?: { segmentBaseOffset: number; position: number; reason: string };
  /** Segments present after open (scanned or trusted). */
  segments: number;
  /**
   * Of bytesTruncated, the bytes of all-zero tails (O_DIRECT block padding or preallocated
   * space after an unclean stop): no batch was lost there.
   */
  zeroTailBytes: number;
  /** Files removed by open: orphan index files (no .log beside them) and a stale checkpoint tmp. */
  deletedFiles: string[];
}

export interface LogStats {
  appends: number;
  records: number;
  bytes: number;
  flushes: number;
  flushTimeUs: LatencySummary;
  writeTimeUs: LatencySummary;
  segments: number;
  rolls: number;
  logStartOffset: number;
  logEndOffset: number;
  recoveryPoint: number;
  /**
   * Flushes of a segment when it was rolled (Kafka flushes the old segment on roll), completed;
   * not in `flushes`. They run in libuv's thread pool, off the event loop: the recovery point
   * moves past a rolled segment when its flush has completed.
   */
  rollFlushes: number;
  /** Time a roll held the caller (the event loop): sealing the old segment and creating the new one, no sync. */
  rollTimeUs: LatencySummary;
  /** Roll flushes still running in the background. */
  rollFlushesPending: number;
  /** How long the background roll flushes took (the rolled segment's files and the directory synced). */
  rollFlushTimeUs: LatencySummary;
  /** Recovery-point checkpoint files written. */
  checkpoints: number;
  /**
   * fsync/fdatasync calls on .index/.timeindex files: before each checkpoint, at roll (in the
   * background) and close, never in a flush (a flush syncs the .log only).
   */
  indexSyncs: number;
  /** The recovery point in the checkpoint file (lags recoveryPoint by up to ~1 s). */
  checkpointedRecoveryPoint: number;
  /** Set after a write or flush error: the log refuses appends until it is reopened. */
  failed: string | null;
  /** log.fsync.error=retry: failed flushes that were retried (and, when the retry succeeded, acknowledged). */
  fsyncRetries: number;
  lastFsyncError: string | null;
}

export interface DumpBatch {
  baseOffset: number;
  lastOffset: number;
  position: number;
  size: number;
  crcValid: boolean;
  firstTimestamp: number;
  maxTimestamp: number;
  records: number;
  leaderEpoch: number;
}

export interface DumpIndex<E> {
  path: string;
  exists: boolean;
  sizeBytes: number;
  entries: E[];
  /** All-zero entries after the last real one: the preallocated room of an active (or crashed) segment's index. */
  zeroEntries: number;
  /** Why the entries are not a usable index (size, order, range), if they are not. */
  problem: string | null;
}

export interface DumpSegment {
  baseOffset: number;
  logPath: string;
  sizeBytes: number;
  batches: DumpBatch[];
  /** Where and why the walk of the .log stopped before its end (null when it reached the end). */
  stoppedAt: { position: number; reason: string } | null;
  index: DumpIndex<{ offset: number; position: number }>;
  timeIndex: DumpIndex<{ timestamp: number; offset: number }>;
}

export interface DumpResult {
  dir: string;
  segments: DumpSegment[];
  recoveryPointCheckpoint: number | null;
  cleanShutdownMarker: boolean;
  strayFiles: string[];
}
