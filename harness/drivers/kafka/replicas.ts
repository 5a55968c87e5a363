// Replica state through the kafka driver. Leaders, replica sets and ISR come from Metadata; a
// leader's high watermark from ListOffsets. A replica's stored bytes are read from its segment
// files where the target keeps data dirs on this host (Kafka's log format is RecordBatch v2 in
// `<log.dirs>/<topic>-<partition>/<base offset>.log`, as durolab's); Kafka serves consumer
// Fetch from leaders only, so elsewhere only the leader's copy is seen (through Fetch).
// A follower's own HW is not exposed by any client API: it is taken as min(leader HW, its LEO),
// so digests compare what every replica holds below the committed offset.
import { createHash } from 'node:crypto';
import { readReplicaFiles } from '../replica-files.ts';
import type { BrokerMetrics, ReplicaDigest, ReplicaLog } from '../types.ts';
import { servedByIdentity } from './identity.ts';
import { KafkaWire, metadataFromAny, type PartitionMetadata } from './wire.ts';

export interface ReplicaContext {
  bootstrap: string[];
  brokers: ReadonlyArray<{ id: number; dataDir: string; kafka?: string }>;
  dataOnHost: boolean;
}

async function partitionMeta(ctx: ReplicaContext, topic: string, partition: number): Promise<PartitionMetadata> {
  const md = await metadataFromAny(ctx.bootstrap, [topic]);
  const p = md.partitions.find((x) => x.topic === topic && x.partition === partition);
  if (!p) throw new Error(`kafka driver: ${topic}-${partition} is not in the cluster's metadata${md.topicErrors[topic] ? ` (${md.topicErrors[topic]})` : ''}`);
  return p;
}

function addressOf(ctx: ReplicaContext, brokerId: number): string {
  const b = ctx.brokers.find((x) => x.id === brokerId);
  if (!b?.kafka) throw new Error(`kafka driver: broker ${brokerId} has no Kafka address`);
  return b.kafka;
}

async function leaderHw(ctx: ReplicaContext, p: PartitionMetadata): Promise<number | null> {
  if (p.leader < 0) return null;
  const w = new KafkaWire(addressOf(ctx, p.leader), 5000);
  try {
    return await w.listOffset(p.topic, p.partition, -1);
  } catch {
    return null;
  } finally {
    w.close();
  }
}

/** The leader's batches below `upTo` through Fetch (no data dir on this host). */
async function fetchedBytes(address: string, topic: string, partition: number, upTo: number): Promise<Buffer> {
  const w = new KafkaWire(address, 30_000);
  const chunks: Buffer[] = [];
  try {
    let offset = await w.listOffset(topic, partition, -2);
    while (offset < upTo) {
      const f = await w.fetch(topic, partition, offset, 8 * 1024 * 1024);
      const split = servedByIdentity(f.records, { partialTail: true });
      if (split.raw.length === 0) break;
      for (const [i, b] of split.raw.entries()) {
        if (b.lastOffset >= upTo) return Buffer.concat(chunks);
        const s = split.spans[i]!;
        chunks.push(f.records.subarray(s.position, s.position + s.size));
        offset = b.lastOffset + 1;
      }
    }
    return Buffer.concat(chunks);
  } finally {
    w.close();
  }
}

export async function kafkaReplicaDigest(ctx: ReplicaContext, brokerId: number, topic: string, partition: number, upTo?: number): Promise<ReplicaDigest | null> {
  const p = await partitionMeta(ctx, topic, partition);
  if (!p.replicas.includes(brokerId)) return null;
  const lhw = await leaderHw(ctx, p);
  if (!ctx.dataOnHost) {
    if (brokerId !== p.leader || lhw === null) return null;
    const limit = upTo ?? lhw;
    const bytes = await fetchedBytes(addressOf(ctx, brokerId), topic, partition, limit);
    return { brokerId, hw: lhw, leo: lhw, upTo: limit, hash: createHash('sha256').update(bytes).digest('hex') };
  }
  const dataDir = ctx.brokers.find((b) => b.id === brokerId)?.dataDir;
  if (!dataDir) throw new Error(`kafka driver: broker ${brokerId} has no data dir`);
  const all = readReplicaFiles(dataDir, brokerId, topic, partition, Number.MAX_SAFE_INTEGER);
  if (!all) return null;
  const last = all.log.batches[all.log.batches.length - 1];
  const leo = last ? last.lastOffset + 1 : 0;
  const hw = brokerId === p.leader && lhw !== null ? lhw : Math.min(lhw ?? leo, leo);
  const limit = upTo ?? hw;
  const below = readReplicaFiles(dataDir, brokerId, topic, partition, limit)!;
  return { brokerId, hw, leo, upTo: limit, hash: below.log.sha256 };
}

export async function kafkaReadReplicaLog(ctx: ReplicaContext, brokerId: number, topic: string, partition: number, upTo: number): Promise<ReplicaLog | null> {
  if (!ctx.dataOnHost) {
    throw new Error(`read replica log ${topic}-${partition} of broker ${brokerId}: this target keeps data dirs off the host and Kafka serves Fetch from leaders only (compare replicaDigest instead)`);
  }
  const dataDir = ctx.brokers.find((b) => b.id === brokerId)?.dataDir;
  if (!dataDir) throw new Error(`kafka driver: broker ${brokerId} has no data dir`);
  return readReplicaFiles(dataDir, brokerId, topic, partition, upTo)?.log ?? null;
}

/** Per broker: the partitions it holds, with role, epoch, HW / LEO and bytes on disk where the data dirs are on this host. */
export async function kafkaBrokerMetrics(ctx: ReplicaContext): Promise<{ brokers: BrokerMetrics[]; down: Array<{ brokerId: number; reason: string }> }> {
  const md = await metadataFromAny(ctx.bootstrap, null);
  const live = new Set(md.brokers.map((b) => b.id));
  const down = ctx.brokers.filter((b) => !live.has(b.id)).map((b) => ({ brokerId: b.id, reason: 'not registered with the controller (Metadata does not list it)' }));
  const hws = new Map<string, number | null>();
  for (const p of md.partitions) hws.set(`${p.topic}-${p.partition}`, await leaderHw(ctx, p));
  const brokers: BrokerMetrics[] = ctx.brokers
    .filter((b) => live.has(b.id))
    .map((b) => ({
      brokerId: b.id,
      partitions: md.partitions
        .filter((p) => p.replicas.includes(b.id) && !p.topic.startsWith('__'))
        .map((p) => {
          const disk = ctx.dataOnHost ? readReplicaFiles(b.dataDir, b.id, p.topic, p.partition, Number.MAX_SAFE_INTEGER)?.log : null;
          const last = disk?.batches[disk.batches.length - 1];
          const hw = hws.get(`${p.topic}-${p.partition}`) ?? -1;
          return {
            topic: p.topic,
            partition: p.partition,
            role: p.leader === b.id ? 'leader' : 'follower',
            leaderEpoch: p.leaderEpoch,
            hw,
            leo: last ? last.lastOffset + 1 : hw,
            isr: p.isr,
            bytes: disk ? disk.bytes : 0,
            // Kafka does not report its flushes or rolls to clients (JMX only).
            flushes: 0,
            rolls: 0,
            flushTimeUs: { p50: 0, p99: 0, p999: 0, max: 0 },
          };
        }),
    }));
  return { brokers, down };
}
