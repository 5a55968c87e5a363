// GET /v1/admin/replica-log: a replica's own stored batches in an offset range, as raw bytes,
// whatever its role (leader, follower, offline). The harness compares replicas batch by batch
// on the host from these bytes (harness/checker/replica-bytes.ts), so a bug every broker shares
// in hashing or comparing cannot hide a divergence. The answer is bounded by fetch.max.bytes and
// read in chunks of FETCH_CHUNK_BYTES with a turn of the event loop between them, as consumer
// fetches are (fetch-read.ts). Batches are served as stored: no CRC check, so a corrupted copy
// is shown as it is.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BrokerError, type Partition } from '../replication/index.ts';
import { FETCH_CHUNK_BYTES } from './fetch-read.ts';

export interface ReplicaRead {
  parts: Buffer[];
  bytes: number;
  /** Offset after the last batch served (= `from` when nothing was). */
  nextOffset: number;
  /** The range asked for: batches whose last offset is in [from, upTo). */
  from: number;
  upTo: number;
  highWatermark: number;
  logStartOffset: number;
  logEndOffset: number;
  role: string;
}

/**
 * Whole stored batches whose last offset is below `upTo` (default: the log end), from the one
 * holding `from` (default: the log start). The first read returns at least one batch, even one
 * larger than maxBytes (Kafka's fetch rule); later reads stop before a batch that would take
 * the answer past maxBytes.
 */
export async function readReplicaChunks(p: Partition, from: number | undefined, upTo: number | undefined, maxBytes: number, gone: () => boolean): Promise<ReplicaRead> {
  const log = p.log;
  const start = from ?? log.logStartOffset;
  const limit = upTo ?? log.logEndOffset;
  if (start < log.logStartOffset || start > log.logEndOffset) {
    throw new BrokerError('OFFSET_OUT_OF_RANGE', `replica-log ${p.topic}-${p.partition}: from ${start} is outside the log [${log.logStartOffset}, ${log.logEndOffset}]`, {
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
    });
  }
  const out: ReplicaRead = {
    parts: [],
    bytes: 0,
    nextOffset: start,
    from: start,
    upTo: limit,
    highWatermark: p.highWatermark,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    role: p.role,
  };
  while (out.nextOffset < Math.min(limit, log.logEndOffset) && out.bytes < maxBytes) {
    if (out.parts.length > 0) {
      await nextTurn();
      if (gone()) break;
    }
    const room = maxBytes - out.bytes;
    const r = log.read(out.nextOffset, Math.min(room, FETCH_CHUNK_BYTES), limit);
    if (r.data.length === 0 || (out.parts.length > 0 && r.data.length > room)) break;
    out.parts.push(r.data);
    out.bytes += r.data.length;
    out.nextOffset = r.nextOffset;
  }
  return out;
}
