import { readI64 } from './int64.ts';
import type { CorruptionReason } from './types.ts';

/**
 * The only error the decoders throw for bad bytes. Reasons:
 * - short: fewer bytes present than the batch (or its fixed header) needs
 * - length-out-of-range: length field < 49 (no room for the header) or above maxBatchBytes - 12;
 *   a run of zero bytes (a preallocated or torn tail) lands here
 * - bad-magic: magic byte is not 2
 * - crc-mismatch: CRC-32C over attributes..end differs from the stored one
 * - unsupported-compression: attributes bits 0-2 are not 0
 * - value-out-of-range: an i64 (offset, timestamp, producer id) is not a safe JS integer
 * - varint-overflow: a varint longer than 5 bytes (varlong: 10) or wider than 32 (64) bits
 * - record-overflow: a record's framing is inconsistent: its length runs past the batch end,
 *   a field runs past the record end, a field length is invalid (< -1; header key or header
 *   count < 0), or the fields do not fill the record's declared length exactly
 * - record-count-mismatch: the records do not end exactly at the batch end after recordCount
 *   records; with checkRecords also recordCount < 1, lastOffsetDelta != recordCount - 1 or an
 *   offsetDelta that is not the record's index
 */
export class CorruptBatchError extends Error {
  readonly reason: CorruptionReason;
  /** Absolute position (positionBase + index) of the offending byte; the batch start for batch-level problems. */
  readonly position: number;
  /** Absolute position of the start of the batch that is corrupt. */
  readonly batchPosition: number;
  /** The batch's base offset when its first 8 bytes were present and a safe integer. */
  readonly baseOffset: number | null;
  /** What is wrong, without the position prefix. */
  readonly detail: string;

  constructor(
    reason: CorruptionReason,
    detail: string,
    batchPosition: number,
    baseOffset: number | null,
    position: number = batchPosition,
  ) {
    const where = position === batchPosition ? '' : ` (at position ${position})`;
    super(
      `corrupt batch at position ${batchPosition} (base offset ${baseOffset ?? 'unknown'}): ${reason}: ${detail}${where}`,
    );
    this.name = 'CorruptBatchError';
    this.reason = reason;
    this.position = position;
    this.batchPosition = batchPosition;
    this.baseOffset = baseOffset;
    this.detail = detail;
  }
}

function peekBaseOffset(buf: Buffer, pos: number): number | null {
  if (buf.length - pos < 8) return null;
  const v = readI64(buf, pos);
  return Number.isSafeInteger(v) ? v : null;
}

/** The error for the batch at pos of buf (positions absolute from `base`), the offending byte at `at`. */
export function corruptBatchAt(
  reason: CorruptionReason,
  detail: string,
  buf: Buffer,
  pos: number,
  base: number,
  at: number = pos,
): CorruptBatchError {
  return new CorruptBatchError(reason, detail, base + pos, peekBaseOffset(buf, pos), base + at);
}
