// What the log refuses or fails at, in the storage layer's own terms. The layers above map
// these to their protocol's names (engine/replication/errors.ts: Kafka's error names); the
// storage layer knows nothing of Kafka error codes or HTTP.

/**
 * - offline: an I/O error took the log offline (or it already was): appends, flushes and
 *   truncation are refused until it is reopened; also a close that failed.
 * - unreadable: bytes already in the log cannot be read back (a short read, a batch that no
 *   longer validates).
 * - corrupt-batch: an appended batch fails its CRC or framing, or the buffer is not exactly one
 *   batch; nothing was written.
 * - too-large: an appended batch exceeds message.max.bytes or segment.bytes; nothing was written.
 * - out-of-range: a read below the log start offset or beyond the log end offset.
 * - invalid-argument: a call the log cannot act on (not a Buffer, a follower batch at the wrong
 *   offset, negative limits).
 */
const STORAGE_ERROR_KINDS = ['offline', 'unreadable', 'corrupt-batch', 'too-large', 'out-of-range', 'invalid-argument'] as const;
export type StorageErrorKind = (typeof STORAGE_ERROR_KINDS)[number];

/** `details`: facts for the caller's answer (sizes, limits, offsets, errno), never needed to act. */
export class StorageError extends Error {
  override readonly name = 'StorageError';

  constructor(
    readonly kind: StorageErrorKind,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
