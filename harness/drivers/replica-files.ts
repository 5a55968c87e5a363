// A replica's stored batches read straight from its segment files, for targets that keep broker
// data dirs on this host and whose brokers serve no replica read (Apache Kafka serves Fetch from
// leaders only). Kafka's and durolab's layouts are the same: `<data dir>/<topic>-<partition>/
// <20-digit base offset>.log` holding RecordBatch v2. Batches are framed without requiring valid
// CRCs (each keeps its stored and its computed CRC), so a comparison can point at a changed batch.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { listDir, segmentPaths } from '../../engine/storage/files.ts';
import { splitStoredBatches } from './record-batches.ts';
import type { ReplicaLog } from './types.ts';

/**
 * The batches of `<dataDir>/<topic>-<partition>` whose last offset is below `upTo`, with their
 * bytes as stored (`raw`); null when this data dir holds no replica of the partition.
 */
export function readReplicaFiles(dataDir: string, brokerId: number, topic: string, partition: number, upTo: number): { log: ReplicaLog; raw: Buffer } | null {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  let listing;
  try {
    listing = listDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const log: ReplicaLog = { brokerId, upTo, batches: [], corrupt: 0, bytes: 0, sha256: '' };
  const chunks: Buffer[] = [];
  read: for (const base of listing.logs) {
    const file = readFileSync(segmentPaths(dir, base).log);
    const split = splitStoredBatches(file);
    let pos = 0;
    for (const b of split.batches) {
      if (b.lastOffset >= upTo) break read;
      if (b.crc !== b.computedCrc) log.corrupt++;
      log.batches.push(b);
      chunks.push(file.subarray(pos, pos + b.size));
      pos += b.size;
    }
    // A framing break inside a segment (not a zero-filled preallocated tail) is damage too.
    if (split.framingBroken) {
      log.corrupt++;
      break;
    }
  }
  const raw = Buffer.concat(chunks);
  log.bytes = raw.length;
  log.sha256 = createHash('sha256').update(raw).digest('hex');
  return { log, raw };
}
