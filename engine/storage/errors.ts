// What the log refuses or fails at, in the storage layer's own terms. The layers above map
// these to their protocol's names (engine/replication/errors.ts: Kafka's error names); the
// storage layer knows nothing of Kafka error codes or HTTP.

export type StorageErrorKind = 'offline' | 'unreadable' | 'corrupt-batch' | 'too-large' | 'out-of-range' | 'invalid-argument';

export abstract class StorageError extends Error {
  abstract readonly kind: StorageErrorKind;
  /** Facts for the caller's answer (sizes, limits, offsets, errno), never needed to act. */
  readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** An I/O error took the log offline (or it already was): appends, flushes and truncation are refused until it is reopened. */
export class LogOfflineError extends StorageError {
  readonly kind = 'offline';
}

/** Bytes already in the log cannot be read back (a short read, a batch that no longer validates). */
export class UnreadableLogError extends StorageError {
  readonly kind = 'unreadable';
}

/** An appended batch fails its CRC or framing, or the buffer is not exactly one batch; nothing was written. */
export class CorruptBatchAppendError extends StorageError {
  readonly kind = 'corrupt-batch';
}

/** An appended batch exceeds message.max.bytes or segment.bytes; nothing was written. */
export class BatchTooLargeError extends StorageError {
  readonly kind = 'too-large';
}

/** A read below the log start offset or beyond the log end offset. */
export class OffsetOutOfRangeError extends StorageError {
  readonly kind = 'out-of-range';
}

/** A call with arguments the log cannot act on (not a Buffer, a follower batch at the wrong offset, negative limits). */
export class InvalidStorageArgumentError extends StorageError {
  readonly kind = 'invalid-argument';
}
