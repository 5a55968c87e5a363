// The HTTP driver's view of replicas and brokers: GET /v1/admin/log-hash (a replica's HW, LEO
// and the sha256 of its stored batches below an offset), GET /v1/metrics (per-partition
// figures), and a replica's stored batches read from its data dir when that is on this host
// (the /v1 API serves consumer fetches from leaders only).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { listDir, segmentPaths } from '../../../engine/storage/files.ts';
import { splitBatches } from '../record-batches.ts';
import type { BrokerMetrics, ReplicaDigest, ReplicaLog } from '../types.ts';

const logHashAnswer = z.object({ brokerId: z.number(), hw: z.number(), leo: z.number(), upTo: z.number(), hash: z.string() });

/** null when the broker holds no replica of the partition. */
export async function logHash(url: string, brokerId: number, topic: string, partition: number, upTo: number | undefined): Promise<ReplicaDigest | null> {
  const q = `topic=${encodeURIComponent(topic)}&partition=${partition}${upTo === undefined ? '' : `&upTo=${upTo}`}`;
  const where = `GET ${url}/v1/admin/log-hash?${q} (broker ${brokerId})`;
  const res = await fetch(`${url}/v1/admin/log-hash?${q}`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${where} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (res.status !== 200) {
    if ((body as { error?: unknown } | null)?.error === 'UNKNOWN_TOPIC_OR_PARTITION') return null;
    throw new Error(`${where} answered ${res.status}: ${text.slice(0, 200)}`);
  }
  const a = logHashAnswer.safeParse(body);
  if (!a.success) throw new Error(`${where}: expected {brokerId, hw, leo, upTo, hash}, found ${text.slice(0, 200)}`);
  return { brokerId, hw: a.data.hw, leo: a.data.leo, upTo: a.data.upTo, hash: a.data.hash };
}

const num = z.number().catch(0);
const partitionMetrics = z.object({
  topic: z.string(),
  partition: z.number(),
  role: z.string(),
  leaderEpoch: num,
  hw: num,
  leo: num,
  isr: z.array(z.number()).catch([]),
  bytes: num,
  flushes: num,
  rolls: num,
  flushTimeUs: z.object({ p50: num, p99: num, p999: num, max: num }).catch({ p50: 0, p99: 0, p999: 0, max: 0 }),
});
const metricsAnswer = z.object({ partitions: z.array(partitionMetrics) });

export async function brokerMetrics(url: string, brokerId: number): Promise<BrokerMetrics> {
  const where = `GET ${url}/v1/metrics (broker ${brokerId})`;
  const res = await fetch(`${url}/v1/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${where} answered ${res.status}: ${text.slice(0, 200)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${where}: the body is not JSON: ${text.slice(0, 200)}`);
  }
  const m = metricsAnswer.safeParse(body);
  if (!m.success) throw new Error(`${where}: expected {partitions: [{topic, partition, role, ...}]}: ${m.error.issues[0]?.message ?? ''}`);
  return { brokerId, partitions: m.data.partitions };
}

/**
 * A replica's stored batches below `upTo`, read from the segment files under its data dir
 * (`<dataDir>/<topic>-<partition>/<base offset>.log`). null when the broker holds no replica.
 * Preallocated or zero-padded tails (O_DIRECT) end a segment's data.
 */
export function readReplicaFromDisk(dataDir: string, brokerId: number, topic: string, partition: number, upTo: number): ReplicaLog | null {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  let listing;
  try {
    listing = listDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const out: ReplicaLog = { brokerId, upTo, batches: [], corrupt: 0, bytes: Buffer.alloc(0) };
  const chunks: Buffer[] = [];
  for (const base of listing.logs) {
    const file = readFileSync(segmentPaths(dir, base).log);
    let end = 0;
    while (end + 12 <= file.length && file.readInt32BE(end + 8) > 0) end += 12 + file.readInt32BE(end + 8);
    const split = splitBatches(file.subarray(0, Math.min(end, file.length)));
    out.corrupt += split.corrupt;
    for (const [i, b] of split.batches.entries()) {
      if (b.lastOffset >= upTo) {
        out.bytes = Buffer.concat(chunks);
        return out;
      }
      const span = split.spans[i]!;
      out.batches.push(b);
      chunks.push(file.subarray(span.position, span.position + span.size));
    }
  }
  out.bytes = Buffer.concat(chunks);
  return out;
}
