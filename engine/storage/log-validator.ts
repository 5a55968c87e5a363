// Step 1 of an append (Kafka's LogValidator, less offset assignment): the batch's size against
// message.max.bytes and segment.bytes, its header, CRC-32C and record framing (or the header
// alone with verifyBatches=false), and that the buffer holds exactly one batch. Nothing is
// written when a check fails.
import {
  ATTRIBUTES_OFFSET,
  checkSoleBatch,
  CorruptBatchError,
  CRC_OFFSET,
  crc32c,
  LOG_APPEND_TIME_FLAG,
  LOG_OVERHEAD,
  type BatchHeader,
  type ValidateOptions,
} from '../records/index.ts';
import { StorageError } from './errors.ts';
import type { LogConfig } from './types.ts';

/** `opts` has checkRecords set when the log verifies batches; made once per log, not per append. */
export function checkBatch(batch: Buffer, cfg: LogConfig, opts: ValidateOptions): BatchHeader {
  if (!Buffer.isBuffer(batch)) throw new StorageError('invalid-argument', `append takes a Buffer holding one record batch, got ${typeof batch}`);
  const size = batch.length;
  if (size > cfg.maxBatchBytes) {
    throw new StorageError('too-large', `batch of ${size} bytes exceeds maxBatchBytes (message.max.bytes) = ${cfg.maxBatchBytes}; nothing was written`, { size, limit: cfg.maxBatchBytes });
  }
  if (size > cfg.segmentBytes) {
    throw new StorageError('too-large', `batch of ${size} bytes exceeds segmentBytes (segment.bytes) = ${cfg.segmentBytes}; nothing was written`, { size, limit: cfg.segmentBytes });
  }
  let header: BatchHeader;
  try {
    // One header parse, one CRC pass and one record walk per append (one native call when the
    // addon runs); the batch is written from the caller's buffer (io=direct copies it once,
    // into the aligned staging buffer).
    header = checkSoleBatch(batch, opts);
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
  return header;
}

/** What validateAndAssignOffsets found: the batch's last offset in the log, its max timestamp, its record count. */
export interface AssignedOffsets {
  lastOffset: number;
  maxTimestamp: number;
  records: number;
}

/**
 * Kafka's LogValidator on the JS path of an append: step 1 (checkBatch), then the offsets: a
 * leader's batch (assign) gets the log end offset as its base (the caller stamps it, after any
 * roll), a follower's must already start there; under log-append time the broker's clock
 * becomes the batch's max timestamp and the CRC is rewritten (in place, as Kafka does).
 */
export function validateAndAssignOffsets(batch: Buffer, cfg: LogConfig, opts: ValidateOptions, leo: number, assign: boolean, nowMs: number): AssignedOffsets {
  const header = checkBatch(batch, cfg, opts);
  if (!assign && header.baseOffset !== leo) {
    throw new StorageError('invalid-argument', `follower append: batch base offset ${header.baseOffset} is not the log end offset ${leo}; nothing was written`, { expected: leo, got: header.baseOffset });
  }
  let maxTimestamp = header.maxTimestamp;
  if ((header.attributes & LOG_APPEND_TIME_FLAG) !== 0 && assign) {
    maxTimestamp = nowMs;
    batch.writeBigInt64BE(BigInt(nowMs), 35);
    batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  }
  return { lastOffset: leo + header.lastOffsetDelta, maxTimestamp, records: header.recordCount };
}
