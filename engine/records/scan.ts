import { validateBatch } from './decode.ts';
import { walkRecords } from './record-walk.ts';
import { CorruptBatchError } from './errors.ts';
import { LOG_OVERHEAD, type BatchHeader, type DecodedRecord, type ValidateOptions } from './types.ts';

/**
 * Validates the batches of buf in turn and yields each with its position (positionBase +
 * index) and size. Throws CorruptBatchError at the first invalid one, including a partial
 * batch at the end; stops cleanly when the last batch ends exactly at buf's end.
 */
export function* iterateBatches(
  buf: Buffer,
  opts?: ValidateOptions,
): Generator<{ position: number; header: BatchHeader; size: number }> {
  const base = opts?.positionBase ?? 0;
  let pos = 0;
  while (pos < buf.length) {
    const header = validateBatch(buf, pos, opts);
    const size = LOG_OVERHEAD + header.length;
    yield { position: base + pos, header, size };
    pos += size;
  }
}

export interface ValidPrefix {
  /** Bytes from buf[0] that form whole valid batches; always a batch boundary. */
  validBytes: number;
  batches: number;
  /** Last offset of the last valid batch, -1 when there is none. */
  lastOffset: number;
  /** lastOffset + 1 (0 when there is no valid batch; the caller knows the segment's base). */
  nextOffset: number;
  /** Why the scan stopped before buf's end; null when all of buf is valid. */
  error: CorruptBatchError | null;
}

/**
 * How far buf is a valid sequence of batches (crash recovery truncates there). Never throws
 * for any bytes: a torn batch stops the scan with 'short', a zero-filled tail with
 * 'length-out-of-range' (length 0). Offsets are not required to increase between batches.
 */
export function scanValidPrefix(buf: Buffer, opts?: ValidateOptions): ValidPrefix {
  let pos = 0;
  let batches = 0;
  let lastOffset = -1;
  let error: CorruptBatchError | null = null;
  while (pos < buf.length) {
    let header: BatchHeader;
    try {
      header = validateBatch(buf, pos, opts);
    } catch (e) {
      if (!(e instanceof CorruptBatchError)) throw e;
      error = e;
      break;
    }
    pos += LOG_OVERHEAD + header.length;
    batches++;
    lastOffset = header.baseOffset + header.lastOffsetDelta;
  }
  return { validBytes: pos, batches, lastOffset, nextOffset: lastOffset + 1, error };
}

/** Every record of concatenated batches, in order; throws CorruptBatchError on bad bytes. */
export function* recordsOf(batches: Buffer): Generator<DecodedRecord> {
  for (const { position, header } of iterateBatches(batches)) {
    const records: DecodedRecord[] = [];
    walkRecords(batches, position, header, 0, records, false);
    yield* records;
  }
}
