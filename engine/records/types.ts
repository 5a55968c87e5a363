// Contract of the RecordBatch v2 codec (Kafka's DefaultRecordBatch layout). Offsets,
// timestamps and producer ids are i64 on the wire and JS numbers here: a value beyond
// Number.MAX_SAFE_INTEGER is reported as corruption rather than silently rounded.

/** Bytes before the length field's end: baseOffset (8) + length (4). Kafka's LOG_OVERHEAD. */
export const LOG_OVERHEAD = 12;
/** Full v2 batch header, baseOffset through recordCount. */
export const BATCH_HEADER_BYTES = 61;
export const MAGIC_V2 = 2;
/** Position of the CRC field and of the first byte it covers (attributes). */
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const RECORD_COUNT_OFFSET = 57;

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface RecordInput {
  key?: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeader[];
  /** Absolute timestamp in ms; defaults to the batch's firstTimestamp. */
  timestamp?: number;
}

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface BatchHeader {
  baseOffset: number;
  /** Bytes after the length field (the batch occupies LOG_OVERHEAD + length bytes). */
  length: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  firstTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export interface EncodeBatchOptions {
  baseOffset?: number; // default 0
  partitionLeaderEpoch?: number; // default -1
  producerId?: number; // default -1
  producerEpoch?: number; // default -1
  baseSequence?: number; // default -1
  firstTimestamp?: number; // default Date.now()
  /** Only compression 0 (none) is produced; bit 3 (log-append time) may be set. */
  attributes?: number;
  records: RecordInput[];
}

export type CorruptionReason =
  | 'short'
  | 'bad-magic'
  | 'crc-mismatch'
  | 'length-out-of-range'
  | 'record-count-mismatch'
  | 'varint-overflow'
  | 'record-overflow'
  | 'unsupported-compression'
  | 'value-out-of-range';

export interface ValidateOptions {
  /** Total batch size limit (LOG_OVERHEAD + length); larger -> 'length-out-of-range'. Default 1048588. */
  maxBatchBytes?: number;
  /** Added to positions in errors and results (the file position of buf[0]). */
  positionBase?: number;
  /**
   * Also walk every record's framing without allocating: varints, field lengths, record
   * lengths summing exactly to the batch end, and the shape a producer writes: recordCount
   * >= 1, lastOffsetDelta = recordCount - 1, offsetDelta = index. Empty batches and offset
   * gaps (which Kafka's log compaction leaves behind) are therefore rejected here but decode
   * without this option.
   */
  checkRecords?: boolean;
  /**
   * readBatchHeader / validateBatch fill this object and return it instead of allocating a
   * header (the append path reuses one per log: ~200 bytes and a young-generation GC less
   * often per append). The caller must not keep it across calls.
   */
  into?: BatchHeader;
}
