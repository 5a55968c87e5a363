// GET /v1/admin/log-hash, bounded: sha256 over the stored bytes of the batches in an offset
// range, read in chunks of CHUNK_BYTES with a turn of the event loop between chunks, so
// hashing a large log never holds the loop (produce and fetch keep being served) and never
// holds more than one chunk in memory.
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CorruptBatchError, readBatchHeader } from '../records/index.ts';
import { BrokerError, type Partition } from '../replication/index.ts';

/** Bytes read (and hashed) per turn of the event loop. */
export const CHUNK_BYTES = 1 << 20;

export interface LogHashAnswer {
  hash: string;
  /** Range asked for: every whole batch whose last offset is in [from, upTo). */
  from: number;
  upTo: number;
  /** The range actually hashed: first batch's base offset, offset after the last batch (nextOffset). */
  firstOffset: number;
  nextOffset: number;
  batches: number;
  bytes: number;
  /** Chunks read; each one was followed by a turn of the event loop. */
  chunks: number;
  hw: number;
  leo: number;
}

/**
 * Hashes every batch whose last offset lies in [from, upTo): from defaults to the log start,
 * upTo to the HW when the request arrived (the HW may move on while the hash runs; the range
 * does not). With the defaults the hash equals the whole-log hash replicas compare.
 */
export async function hashLogRange(p: Partition, from: number | undefined, upTo: number | undefined, gone: () => boolean = () => false): Promise<LogHashAnswer> {
  const start = from ?? p.log.logStartOffset;
  const limit = upTo ?? p.highWatermark;
  if (start > limit) {
    throw new BrokerError('INVALID_REQUEST', `log-hash ${p.topic}-${p.partition}: from (${start}) must not exceed upTo (${limit})`, { parameter: 'from' });
  }
  const logStart = p.log.logStartOffset;
  if (start < logStart || start > p.log.logEndOffset) {
    throw new BrokerError('OFFSET_OUT_OF_RANGE', `log-hash ${p.topic}-${p.partition}: from ${start} is outside the log [${logStart}, ${p.log.logEndOffset}]`, {
      logStartOffset: logStart,
      logEndOffset: p.log.logEndOffset,
    });
  }
  const h = createHash('sha256');
  const maxBatchBytes = p.log.config.maxBatchBytes;
  let offset = start;
  let firstOffset = -1;
  let nextOffset = start;
  let batches = 0;
  let bytes = 0;
  let chunks = 0;
  outer: while (offset < Math.min(limit, p.log.logEndOffset)) {
    const r = p.log.read(offset, CHUNK_BYTES);
    if (r.data.length === 0) break;
    chunks++;
    let pos = 0;
    while (pos < r.data.length) {
      let header;
      try {
        header = readBatchHeader(r.data, pos, { maxBatchBytes });
      } catch (e) {
        if (e instanceof CorruptBatchError) throw new BrokerError('CORRUPT_MESSAGE', `log-hash ${p.topic}-${p.partition}: ${e.message}`, { reason: e.reason });
        throw e;
      }
      const size = header.length + 12; // LOG_OVERHEAD: baseOffset (8) + length (4)
      const last = header.baseOffset + header.lastOffsetDelta;
      if (last >= limit) break outer;
      if (last >= start) {
        if (firstOffset < 0) firstOffset = header.baseOffset;
        h.update(r.data.subarray(pos, pos + size));
        batches++;
        bytes += size;
      }
      nextOffset = last + 1;
      pos += size;
    }
    offset = r.nextOffset;
    await nextTurn();
    if (gone()) break;
  }
  return {
    hash: h.digest('hex'),
    from: start,
    upTo: limit,
    firstOffset: firstOffset < 0 ? start : firstOffset,
    nextOffset,
    batches,
    bytes,
    chunks,
    hw: p.highWatermark,
    leo: p.log.logEndOffset,
  };
}
