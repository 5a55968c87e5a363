// GET /v1/admin/replica-log: a replica's own stored batches in an offset range, as raw bytes,
// whatever its role (leader, follower, offline). The harness compares replicas batch by batch
// on the host from these bytes (harness/checker/replica-bytes.ts), so a bug every broker shares
// in hashing or comparing cannot hide a divergence. The answer is bounded by fetch.max.bytes and
// read in chunks of FETCH_CHUNK_BYTES with a turn of the event loop between them, as consumer
// fetches are (fetch-read.ts). Batches are served as stored: no CRC check, so a corrupted copy
// is shown as it is.
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BrokerError, type Partition } from '../replication/index.ts';
import type { BrokerHost } from './broker-host.ts';
import { FETCH_CHUNK_BYTES } from './fetch-read.ts';
import { intParam, invalid, parseQuery, RECORD_BATCH_TYPE } from './http-util.ts';

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

/** `?topic=T&partition=P[&from=F][&upTo=U]` of the admin reads (log-hash, replica-log), with the partition looked up. */
export function partitionRangeQuery(broker: BrokerHost, search: string, extraKeys: string[] = []) {
  const query = parseQuery(search, ['topic', 'partition', 'from', 'upTo', ...extraKeys]);
  const topic = query.get('topic');
  if (!topic) throw invalid('topic', 'a topic name', topic);
  const index = intParam(query, 'partition', undefined, 0, 0x7fffffff);
  const p = broker.partitionOrThrow(topic, index);
  const from = query.has('from') ? intParam(query, 'from', undefined, 0) : undefined;
  const upTo = query.has('upTo') ? intParam(query, 'upTo', undefined, 0) : undefined;
  return { query, topic, index, p, from, upTo };
}

/** This broker's own stored batches of a partition in [from, upTo), raw, whatever its role. */
export async function serveReplicaLog(broker: BrokerHost, res: ServerResponse, search: string): Promise<void> {
  const { query, p, from, upTo } = partitionRangeQuery(broker, search, ['maxBytes']);
  const maxBytes = Math.min(intParam(query, 'maxBytes', broker.settings.fetchMaxBytes, 1, 1 << 30), broker.settings.fetchMaxBytes);
  const r = await readReplicaChunks(p, from, upTo, maxBytes, () => res.destroyed);
  if (res.destroyed) return;
  res.writeHead(200, {
    'content-type': RECORD_BATCH_TYPE,
    'content-length': r.bytes,
    'x-broker-id': String(broker.id),
    'x-role': r.role,
    'x-next-offset': String(r.nextOffset),
    'x-high-watermark': String(r.highWatermark),
    'x-log-start-offset': String(r.logStartOffset),
    'x-log-end-offset': String(r.logEndOffset),
  });
  for (const part of r.parts) res.write(part);
  res.end();
}
