// RecordBatch v2 codec: Kafka's DefaultRecordBatch byte format.
export * from './types.ts';
export { CorruptBatchError } from './errors.ts';
export { crc32c, crc32cImplementation, crc32cImplementations, describeCrc32c, type Crc32cFunction, type Crc32cImplementation } from './crc.ts';
export { encodeBatch, stampBatch, stampBatchFields, COMPRESSION_MASK, LOG_APPEND_TIME_FLAG } from './encode.ts';
export {
  batchSizeAt,
  checkSoleBatch,
  readBatchHeader,
  validateBatch,
  decodeBatch,
  DEFAULT_MAX_BATCH_BYTES,
  MIN_BATCH_LENGTH,
} from './decode.ts';
export { iterateBatches, scanValidPrefix, recordsOf, type ValidPrefix } from './scan.ts';
export { readI64 } from './int64.ts';
