// Step 1 of an append (Kafka's LogValidator, less offset assignment): the batch's size against
// message.max.bytes and segment.bytes, its header, CRC-32C and record framing (or the header
// alone with verifyBatches=false), and that the buffer holds exactly one batch. Nothing is
// written when a check fails.
import { checkSoleBatch, CorruptBatchError, LOG_OVERHEAD, type BatchHeader, type ValidateOptions } from '../records/index.ts';
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
