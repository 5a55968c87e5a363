// Replica state through the kafka driver. Leaders, replica sets and ISR come from Metadata; a
// leader's high watermark from ListOffsets, asked of the leader Metadata names now (leader.ts). A replica's stored bytes are read from its segment
// files where the target keeps data dirs on this host (Kafka's log format is RecordBatch v2 in
// `<log.dirs>/<topic>-<partition>/<base offset>.log`, as durolab's); Kafka serves consumer
// Fetch from leaders only, so elsewhere only the leader's copy is seen (through Fetch).
// A follower's own HW is not exposed by any client API: it is taken as min(leader HW, its LEO),
// so digests compare what every replica holds below the committed offset.
import { createHash } from 'node:crypto';
import { readReplicaFiles, replicaLogEnd } from '../replica-files.ts';
import type { BrokerMetrics, ReplicaDigest, ReplicaLog } from '../types.ts';
import { servedByIdentity } from './identity.ts';
import { askLeader, LEADER_WAIT_MS, type LeaderContext } from './leader.ts';
import { KafkaWire, metadataFromAny, type PartitionMetadata } from './wire.ts';

export interface ReplicaContext {
  bootstrap: string[];
  brokers: ReadonlyArray<{ id: number; dataDir: string; kafka?: string }>;
  dataOnHost: boolean;
}

function addressOf(ctx: ReplicaContext, brokerId: number): string {
  const b = ctx.brokers.find((x) => x.id === brokerId);
  if (!b?.kafka) throw new Error(`kafka driver: broker ${brokerId} has no Kafka address`);
  return b.kafka;
}

const leaderContext = (ctx: ReplicaContext): LeaderContext => ({ bootstrap: ctx.bootstrap, addressOf: (id) => addressOf(ctx, id) });

/** The partition's current leader (Metadata) and its high watermark (ListOffsets), asked again of a new leader when it moved. */
async function leaderAndHw(ctx: ReplicaContext, topic: string, partition: number, waitMs = LEADER_WAIT_MS): Promise<{ meta: PartitionMetadata; hw: number }> {
  return askLeader(
    leaderContext(ctx),
    topic,
    partition,
    'high watermark of',
    async (meta, address) => {
      const w = new KafkaWire(address, 5000);
      try {
        return { meta, hw: await w.listOffset(topic, partition, -1) };
      } finally {
        w.close();
      }
    },
    waitMs,
  );
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
  const { meta: p, hw: lhw } = await leaderAndHw(ctx, topic, partition);
  if (!p.replicas.includes(brokerId)) return null;
  if (!ctx.dataOnHost) {
    if (brokerId !== p.leader) return null;
    const limit = upTo ?? lhw;
    const bytes = await fetchedBytes(addressOf(ctx, brokerId), topic, partition, limit);
    return { brokerId, hw: lhw, leo: lhw, upTo: limit, hash: createHash('sha256').update(bytes).digest('hex') };
  }
  const dataDir = ctx.brokers.find((b) => b.id === brokerId)?.dataDir;
  if (!dataDir) throw new Error(`kafka driver: broker ${brokerId} has no data dir`);
  // The LEO from batch headers; only the bytes below the limit are read and hashed.
  const end = replicaLogEnd(dataDir, topic, partition);
  if (!end) return null;
  const leo = end.leo ?? 0;
  const hw = brokerId === p.leader ? lhw : Math.min(lhw, leo);
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
  // Each partition's leader is asked for its HW now (a leader that moved since md is followed);
  // figures are a report, not a check: a partition without a leader after 5 s gets HW -1.
  const now = new Map<string, { meta: PartitionMetadata; hw: number } | null>();
  for (const p of md.partitions) {
    if (p.topic.startsWith('__')) continue;
    now.set(`${p.topic}-${p.partition}`, await leaderAndHw(ctx, p.topic, p.partition, 5000).catch(() => null));
  }
  const partitions = md.partitions.filter((p) => !p.topic.startsWith('__')).map((p) => now.get(`${p.topic}-${p.partition}`)?.meta ?? p);
  const brokers: BrokerMetrics[] = ctx.brokers
    .filter((b) => live.has(b.id))
    .map((b) => ({
      brokerId: b.id,
      partitions: partitions
        .filter((p) => p.replicas.includes(b.id))
        .map((p) => {
          // Headers only: the figures are read every few seconds, on logs of gigabytes.
          const disk = ctx.dataOnHost ? replicaLogEnd(b.dataDir, p.topic, p.partition) : null;
          const hw = now.get(`${p.topic}-${p.partition}`)?.hw ?? -1;
          return {
            topic: p.topic,
            partition: p.partition,
            role: p.leader === b.id ? 'leader' : 'follower',
            leaderEpoch: p.leaderEpoch,
            hw,
            leo: disk?.leo ?? hw,
            isr: p.isr,
            bytes: disk ? disk.bytes : 0,
            // Kafka does not report its flushes or rolls to clients (JMX only): absent, not 0.
          };
        }),
    }));
  return { brokers, down };
}
