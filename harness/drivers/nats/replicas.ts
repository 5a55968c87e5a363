// Driver nats's view of each replica: its state from its own server's monitoring /jsz (the
// stream's messages, bytes, first and last sequence as stored there), its stored messages from
// the message block files in its store_dir (store-files.ts; the data dirs are on this host), and
// the stream's current replicas from the leader's stream info. Kafka's HW is the sequence after
// the last message (a JetStream replica applies only what its Raft group committed).
import type { BrokerMetrics, DriverCluster, ReplicaDigest, ReplicaLog } from '../types.ts';
import { monitorOf, natsServerId, streamReplicaOn } from './monitor.ts';
import { connectNats, jetstreamManager, natsStreamInfo, natsStreamName, onlyPartition, type StreamInfo } from './stream.ts';
import { readStoredStream, storedBatchOf, storedDigest, type StoredStream } from './store-files.ts';

/** How long a read of the block files waits for a server to write out what its state already counts (its write cache). */
const STORE_WRITE_WAIT_MS = 3000;

export interface NatsReplicaContext {
  cluster: DriverCluster;
  dataOnHost: boolean;
}

function brokerOf(ctx: NatsReplicaContext, brokerId: number): DriverCluster['brokers'][number] {
  const b = ctx.cluster.brokers.find((x) => x.id === brokerId);
  if (!b) throw new Error(`nats driver: no broker ${brokerId} (brokers ${ctx.cluster.brokers.map((x) => x.id).join(', ')})`);
  return b;
}

/** The replica's stored messages below `upTo`, once its block files hold every message its state counts below it (or after the wait). */
async function storedUpTo(ctx: NatsReplicaContext, brokerId: number, topic: string, upTo: number, lastSeq: number): Promise<StoredStream | null> {
  if (!ctx.dataOnHost) throw new Error(`nats driver: broker ${brokerId}'s stored messages are not given by driver nats where the store dirs are not on this host`);
  const want = Math.min(upTo - 1, lastSeq);
  const end = Date.now() + STORE_WRITE_WAIT_MS;
  for (;;) {
    const s = readStoredStream(brokerOf(ctx, brokerId).dataDir, natsStreamName(topic), upTo);
    const top = s?.messages.at(-1)?.seq ?? 0;
    if (s === null || top >= want || Date.now() > end) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function natsReplicaDigest(ctx: NatsReplicaContext, brokerId: number, topic: string, partition: number, upTo?: number): Promise<ReplicaDigest | null> {
  onlyPartition(topic, partition);
  const replica = await streamReplicaOn(monitorOf(brokerOf(ctx, brokerId)), natsStreamName(topic));
  if (replica === null) return null;
  const hw = replica.state.last_seq + 1;
  const limit = upTo ?? hw;
  const stored = limit > 0 ? await storedUpTo(ctx, brokerId, topic, limit, replica.state.last_seq) : { messages: [], torn: 0 };
  return { brokerId, hw, leo: hw, upTo: limit, hash: storedDigest(stored?.messages ?? []) };
}

export async function natsReadReplicaLog(ctx: NatsReplicaContext, brokerId: number, topic: string, partition: number, upTo: number): Promise<ReplicaLog | null> {
  onlyPartition(topic, partition);
  const replica = await streamReplicaOn(monitorOf(brokerOf(ctx, brokerId)), natsStreamName(topic));
  if (replica === null) return null;
  const stored = await storedUpTo(ctx, brokerId, topic, upTo, replica.state.last_seq);
  if (stored === null) return null;
  const batches = stored.messages.map(storedBatchOf);
  return {
    brokerId,
    upTo,
    batches,
    corrupt: batches.filter((b) => b.crc !== b.computedCrc).length + stored.torn,
    bytes: batches.reduce((s, b) => s + b.size, 0),
    sha256: storedDigest(stored.messages),
  };
}

/**
 * The stream's info as a server answers it, asking one server at a time, the stream leader
 * first: a server cut off from the leader (a partition) cannot forward the request, another can.
 */
async function streamInfoFromAny(cluster: DriverCluster, topic: string, timeoutMs: number): Promise<StreamInfo | null> {
  const leader = cluster.leaderId(topic, 0);
  const order = [...cluster.brokers].sort((a, b) => Number(b.id === leader) - Number(a.id === leader));
  const failures: string[] = [];
  for (const b of order) {
    const nc = await connectNats([b.url], 'durolab-info', timeoutMs, false).catch((err: Error) => err);
    if (nc instanceof Error) {
      failures.push(`broker ${b.id}: ${nc.message}`);
      continue;
    }
    try {
      return await natsStreamInfo(await jetstreamManager(nc, { timeout: timeoutMs }), topic);
    } catch (err) {
      failures.push(`broker ${b.id}: ${(err as Error).message}`);
    } finally {
      await nc.close().catch(() => undefined);
    }
  }
  throw new Error(`nats driver: no server answered the info of stream ${natsStreamName(topic)} (${failures.join('; ')})`);
}

/** The stream's leader and its current replicas (JetStream's "current": caught up with the leader), by broker id; null without a leader. */
export async function natsCurrentReplicas(cluster: DriverCluster, topic: string, partition: number): Promise<number[] | null> {
  onlyPartition(topic, partition);
  const info = await streamInfoFromAny(cluster, topic, 2000);
  if (info === null) return null;
  if (!info.cluster) return cluster.brokers.length === 1 ? [cluster.brokers[0]!.id] : null;
  const leader = info.cluster.leader ? natsServerId(info.cluster.leader) : null;
  if (leader === null) return null;
  const current = (info.cluster.replicas ?? []).filter((r) => r.current && !r.offline).map((r) => natsServerId(r.name));
  return [leader, ...current.filter((id): id is number => id !== null)];
}

/** The stream's HW (sequence after its last message) as its leader reports it now. */
export async function natsHighWatermarks(cluster: DriverCluster, topic: string, partitions: readonly number[], timeoutMs: number): Promise<Map<number, number | { error: string }>> {
  const out = new Map<number, number | { error: string }>();
  for (const p of partitions) onlyPartition(topic, p);
  try {
    const info = await streamInfoFromAny(cluster, topic, timeoutMs);
    for (const p of partitions) out.set(p, info === null ? { error: `stream ${natsStreamName(topic)} does not exist` } : info.state.last_seq + 1);
  } catch (err) {
    for (const p of partitions) out.set(p, { error: (err as Error).message });
  }
  return out;
}

/** Per live server, the stream replicas it holds (state from its /jsz). */
export async function natsBrokerMetrics(ctx: NatsReplicaContext): Promise<{ brokers: BrokerMetrics[]; down: Array<{ brokerId: number; reason: string }> }> {
  const brokers: BrokerMetrics[] = [];
  const down: Array<{ brokerId: number; reason: string }> = [];
  for (const b of ctx.cluster.brokers) {
    try {
      const res = await fetch(`${monitorOf(b)}/jsz?accounts=true&streams=true`, { signal: AbortSignal.timeout(2000) });
      const j = (await res.json()) as { account_details?: Array<{ stream_detail?: Array<{ name: string; state: { bytes: number; last_seq: number }; cluster?: { leader?: string } }> }> };
      const streams = (j.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
      brokers.push({
        brokerId: b.id,
        partitions: streams.map((s) => ({
          topic: s.name,
          partition: 0,
          role: s.cluster?.leader === undefined || natsServerId(s.cluster.leader) === b.id ? 'leader' : 'follower',
          // JetStream's Raft term is not in /jsz's stream detail.
          leaderEpoch: -1,
          hw: s.state.last_seq + 1,
          leo: s.state.last_seq + 1,
          isr: [],
          bytes: s.state.bytes,
          // nats-server does not report its syncs or block rolls per stream (as Kafka reports neither to clients): absent, not 0.
        })),
      });
    } catch (err) {
      down.push({ brokerId: b.id, reason: `its monitoring /jsz did not answer: ${(err as Error).message}` });
    }
  }
  return { brokers, down };
}
