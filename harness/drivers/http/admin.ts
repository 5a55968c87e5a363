// The HTTP driver's view of replicas and brokers: GET /v1/admin/log-hash (a replica's HW, LEO
// and the sha256 of its stored batches below an offset), GET /v1/metrics (per-partition
// figures), and GET /v1/admin/replica-log (a replica's own stored batches as bytes, whatever its
// role: the /v1 consumer API serves leaders only).
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { splitStoredBatches } from '../record-batches.ts';
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
  segments: z.number().optional(),
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
 * A replica's own stored batches below `upTo`, read as bytes through GET /v1/admin/replica-log
 * (any role, any target: the bytes come over HTTP, not from a host directory) in answers of at
 * most fetch.max.bytes, summarized batch by batch and hashed as they stream in (a long log is
 * never held whole). null when the broker holds no replica of the partition.
 */
export async function readReplicaOverHttp(url: string, brokerId: number, topic: string, partition: number, upTo: number): Promise<ReplicaLog | null> {
  const out: ReplicaLog = { brokerId, upTo, batches: [], corrupt: 0, bytes: 0, sha256: '' };
  const hash = createHash('sha256');
  let from: number | null = null;
  for (;;) {
    const q = `topic=${encodeURIComponent(topic)}&partition=${partition}&upTo=${upTo}${from === null ? '' : `&from=${from}`}`;
    const where = `GET ${url}/v1/admin/replica-log?${q} (broker ${brokerId})`;
    const res = await fetch(`${url}/v1/admin/replica-log?${q}`, { signal: AbortSignal.timeout(30_000) });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) {
      const text = body.toString('utf8');
      if (errorName(text) === 'UNKNOWN_TOPIC_OR_PARTITION') return null;
      throw new Error(`${where} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    const next = Number(res.headers.get('x-next-offset'));
    if (!Number.isSafeInteger(next)) throw new Error(`${where}: expected an x-next-offset header with an offset, found ${res.headers.get('x-next-offset')}`);
    const split = splitStoredBatches(body);
    for (const b of split.batches) out.batches.push(b);
    hash.update(body.subarray(0, split.consumed));
    out.bytes += split.consumed;
    out.corrupt += split.batches.filter((b) => b.crc !== b.computedCrc).length;
    if (split.framingBroken || split.consumed < body.length) {
      // A batch that cannot be framed ends what can be compared: the rest is not split.
      out.corrupt++;
      break;
    }
    if (body.length === 0 || next >= upTo || (from !== null && next <= from)) break;
    from = next;
  }
  out.sha256 = hash.digest('hex');
  return out;
}

function errorName(text: string): unknown {
  try {
    return (JSON.parse(text) as { error?: unknown } | null)?.error;
  } catch {
    return undefined;
  }
}
