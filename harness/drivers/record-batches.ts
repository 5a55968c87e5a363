// Splitting served or stored bytes into RecordBatch v2 batches, keeping each batch's identity
// and counting batches that fail validation. Protocol-agnostic: every driver's consumer and the
// host-side replica reader use it.
import { ATTRIBUTES_OFFSET, batchSizeAt, crc32c, readBatchHeader, validateBatch, CorruptBatchError } from '../../engine/records/index.ts';
import type { ServedBatch, StoredBatch } from './types.ts';

/** A batch's identity from its header: offsets, producer id, base sequence, record count. */
function servedBatch(h: { baseOffset: number; lastOffsetDelta: number; producerId: number; baseSequence: number; recordCount: number }): ServedBatch {
  return { baseOffset: h.baseOffset, lastOffset: h.baseOffset + h.lastOffsetDelta, producerId: h.producerId, baseSequence: h.baseSequence, records: h.recordCount };
}

export interface SplitBatches {
  batches: ServedBatch[];
  /** Invalid batches (CRC, framing); a framing error ends the split. */
  corrupt: number;
  /** Start position of each valid batch in the buffer, and its size. */
  spans: Array<{ position: number; size: number }>;
}

/** Splits bytes into batches; an invalid batch is counted and skipped by its length field. */
export function splitBatches(buf: Buffer): SplitBatches {
  const batches: ServedBatch[] = [];
  const spans: SplitBatches['spans'] = [];
  let corrupt = 0;
  let pos = 0;
  while (pos < buf.length) {
    const size = batchSizeAt(buf, pos);
    if (size === null || size <= 12 || pos + size > buf.length) {
      corrupt++;
      break;
    }
    try {
      batches.push(servedBatch(validateBatch(buf, pos)));
      spans.push({ position: pos, size });
    } catch (err) {
      if (!(err instanceof CorruptBatchError)) throw err;
      corrupt++;
    }
    pos += size;
  }
  return { batches, corrupt, spans };
}

export interface SplitStored {
  batches: StoredBatch[];
  /** Bytes taken by whole batches (a torn or unframed tail is not included). */
  consumed: number;
  /** A batch header that cannot be framed (bad length or magic) ended the split. */
  framingBroken: boolean;
}

/**
 * Splits a replica's stored bytes into batches without requiring valid CRCs: each batch keeps
 * its stored CRC and the CRC of its bytes as they are now, so a comparison can point at the
 * batch whose bytes changed. Only framing (length, magic) ends the split.
 */
export function splitStoredBatches(buf: Buffer): SplitStored {
  const batches: StoredBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const size = batchSizeAt(buf, pos);
    if (size === null || pos + size > buf.length) break;
    let h;
    try {
      h = readBatchHeader(buf, pos);
    } catch (err) {
      if (!(err instanceof CorruptBatchError)) throw err;
      return { batches, consumed: pos, framingBroken: true };
    }
    batches.push({
      ...servedBatch(h),
      size,
      crc: h.crc,
      computedCrc: crc32c(buf.subarray(pos + ATTRIBUTES_OFFSET, pos + size)),
    });
    pos += size;
  }
  return { batches, consumed: pos, framingBroken: false };
}
