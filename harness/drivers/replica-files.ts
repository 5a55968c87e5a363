// A replica's stored batches read straight from its segment files, for targets that keep broker
// data dirs on this host and whose brokers serve no replica read (Apache Kafka serves Fetch from
// leaders only). Kafka's and durolab's layouts are the same: `<data dir>/<topic>-<partition>/
// <20-digit base offset>.log` holding RecordBatch v2. Batches are framed without requiring valid
// CRCs (each keeps its stored and its computed CRC), so a comparison can point at a changed batch.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BatchWalker } from '../../engine/storage/batch-walker.ts';
import { listDir, segmentPaths } from '../../engine/storage/files.ts';
import { splitStoredBatches } from './record-batches.ts';
import type { ReplicaLog } from './types.ts';

/** The partition's directory under a data dir and its segment listing; null when this data dir holds no replica of it. */
function replicaDir(dataDir: string, topic: string, partition: number): { dir: string; listing: ReturnType<typeof listDir> } | null {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  try {
    return { dir, listing: listDir(dir) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * The batches of `<dataDir>/<topic>-<partition>` whose last offset is below `upTo`, their bytes as
 * stored hashed segment by segment (a log of gigabytes is never held whole); null when this data
 * dir holds no replica of the partition.
 */
export function readReplicaFiles(dataDir: string, brokerId: number, topic: string, partition: number, upTo: number): { log: ReplicaLog } | null {
  const found = replicaDir(dataDir, topic, partition);
  if (!found) return null;
  const { dir, listing } = found;
  const log: ReplicaLog = { brokerId, upTo, batches: [], corrupt: 0, bytes: 0, sha256: '' };
  const hash = createHash('sha256');
  read: for (const base of [...listing.logs].sort((a, b) => a - b)) {
    // A segment starting at or past the limit holds nothing below it: not read at all.
    if (base >= upTo) break;
    const file = readFileSync(segmentPaths(dir, base).log);
    const split = splitStoredBatches(file);
    let pos = 0;
    for (const b of split.batches) {
      if (b.lastOffset >= upTo) break read;
      if (b.crc !== b.computedCrc) log.corrupt++;
      log.batches.push(b);
      hash.update(file.subarray(pos, pos + b.size));
      log.bytes += b.size;
      pos += b.size;
    }
    // A framing break inside a segment (not a zero-filled preallocated tail) is damage too.
    if (split.framingBroken) {
      log.corrupt++;
      break;
    }
  }
  log.sha256 = hash.digest('hex');
  return { log };
}

/**
 * The replica's log end offset and stored bytes, from the last segment's batch headers and the
 * earlier segments' sizes (a rolled segment holds whole batches): no batch body is read or
 * checked, so broker figures stay cheap on a log of gigabytes (readReplicaFiles reads and hashes
 * all of it). null when this data dir holds no replica; leo null when no segment holds a batch.
 */
export function replicaLogEnd(dataDir: string, topic: string, partition: number): { leo: number | null; bytes: number } | null {
  const found = replicaDir(dataDir, topic, partition);
  if (!found) return null;
  const { dir, listing } = found;
  const bases = [...listing.logs].sort((a, b) => a - b);
  let bytes = 0;
  for (const base of bases.slice(0, -1)) bytes += statSync(segmentPaths(dir, base).log).size;
  const last = bases[bases.length - 1];
  if (last === undefined) return { leo: null, bytes };
  const file = segmentPaths(dir, last).log;
  const fd = openSync(file, 'r');
  let leo: number | null = null;
  try {
    const w = new BatchWalker(fd, 0, statSync(file).size, 2 ** 30, false);
    while (w.next()) leo = w.header!.baseOffset + w.header!.lastOffsetDelta + 1;
    bytes += w.stop ? w.stop.position : w.position;
  } finally {
    closeSync(fd);
  }
  // An empty active segment: the log ends at its base offset.
  return { leo: leo ?? (bases.length > 1 ? last : null), bytes };
}
