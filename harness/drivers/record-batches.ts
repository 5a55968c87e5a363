// Splitting served or stored bytes into RecordBatch v2 batches, keeping each batch's identity
// and counting batches that fail validation. Protocol-agnostic: every driver's consumer and the
// host-side replica reader use it.
import { batchSizeAt, validateBatch, CorruptBatchError } from '../../engine/records/index.ts';
import type { ServedBatch } from './types.ts';

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
      const h = validateBatch(buf, pos);
      batches.push({
        baseOffset: h.baseOffset,
        lastOffset: h.baseOffset + h.lastOffsetDelta,
        producerId: h.producerId,
        baseSequence: h.baseSequence,
        records: h.recordCount,
      });
      spans.push({ position: pos, size });
    } catch (err) {
      if (!(err instanceof CorruptBatchError)) throw err;
      corrupt++;
    }
    pos += size;
  }
  return { batches, corrupt, spans };
}
