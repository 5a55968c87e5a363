// The current leader of a partition through Metadata, for everything the kafka driver asks a
// leader after (or during) the load: the checker's Fetch, the HW for replica digests and broker
// figures. A leader can move under the load (a broker fenced after a missed session, a killed
// one), so the partition's leader is looked up when needed, never remembered from the start,
// and a request a broker refuses because it no longer leads (NOT_LEADER_OR_FOLLOWER, ...) is
// asked again of whoever Metadata names next, until a bounded wait runs out: then the error
// says which brokers were tried and what Metadata last said.
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaWireError, metadataFromAny, type PartitionMetadata } from './wire.ts';

/** Answers that mean "ask the partition's leader again": it moved, is being elected, or its broker went away. */
export const LEADER_MOVED_ERRORS: ReadonlySet<string> = new Set([
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'NETWORK_EXCEPTION',
]);

/** Default bound of a leader lookup: Kafka's default request timeout. */
export const LEADER_WAIT_MS = 30_000;
const RETRY_MS = 100;

export function leaderMoved(err: unknown): err is KafkaWireError {
  return err instanceof KafkaWireError && LEADER_MOVED_ERRORS.has(err.errorName);
}

export interface LeaderContext {
  bootstrap: string[];
  /** host:port of a broker's Kafka listener. */
  addressOf(brokerId: number): string;
}

/**
 * A topic's Metadata answer shared for this long by the lookups that ask within it: reading back
 * 10,000 partitions would otherwise fetch the topic's whole metadata (~700 KB) 10,000 times.
 * Only a first lookup uses it; a retry (the leader moved, or none yet) asks afresh.
 */
const METADATA_SHARED_MS = 1000;
const sharedMetadata = new Map<string, { atMs: number; answer: ReturnType<typeof metadataFromAny> }>();

function topicMetadata(bootstrap: string[], topic: string, shared: boolean): ReturnType<typeof metadataFromAny> {
  const key = `${bootstrap.join(',')}\0${topic}`;
  const hit = sharedMetadata.get(key);
  if (shared && hit && Date.now() - hit.atMs < METADATA_SHARED_MS) return hit.answer;
  const answer = metadataFromAny(bootstrap, [topic]);
  sharedMetadata.set(key, { atMs: Date.now(), answer });
  answer.catch(() => sharedMetadata.delete(key));
  return answer;
}

/**
 * The partition's metadata once it names a leader, asking every bootstrap address in turn,
 * until `waitMs` runs out (an election in progress answers leader -1 or LEADER_NOT_AVAILABLE).
 */
export async function currentLeader(bootstrap: string[], topic: string, partition: number, waitMs = LEADER_WAIT_MS, fresh = false): Promise<PartitionMetadata> {
  const start = Date.now();
  const deadline = start + waitMs;
  let last = '';
  for (let attempt = 0; ; attempt++) {
    try {
      const md = await topicMetadata(bootstrap, topic, !fresh && attempt === 0);
      const p = md.partitions.find((x) => x.topic === topic && x.partition === partition);
      if (p && p.leader >= 0 && (p.error === null || !LEADER_MOVED_ERRORS.has(p.error))) return p;
      last = p
        ? `leader ${p.leader}${p.error ? `, ${p.error}` : ''}, ISR [${p.isr.join(', ')}]`
        : `no such partition${md.topicErrors[topic] ? ` (${md.topicErrors[topic]})` : ''}`;
      if (!p && md.topicErrors[topic] && !LEADER_MOVED_ERRORS.has(md.topicErrors[topic]!)) break;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() + RETRY_MS > deadline) break;
    await sleep(RETRY_MS);
  }
  throw new Error(`kafka driver: ${topic}-${partition} has no leader after ${Date.now() - start} ms of Metadata requests to ${bootstrap.join(', ')} (last answer: ${last})`);
}

/**
 * Runs `ask` against the partition's current leader; when that broker answers that it does not
 * lead (or cannot be reached), looks the leader up again and asks it, up to `waitMs` in all.
 */
export async function askLeader<T>(
  ctx: LeaderContext,
  topic: string,
  partition: number,
  what: string,
  ask: (leader: PartitionMetadata, address: string) => Promise<T>,
  waitMs = LEADER_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  // "broker 1 (epoch 3): NOT_LEADER_OR_FOLLOWER" -> how many times.
  const refused = new Map<string, number>();
  const told = () => [...refused].map(([k, n]) => (n > 1 ? `${k} (${n} times)` : k)).join('; ');
  for (let round = 0; ; round++) {
    const left = Math.max(RETRY_MS, deadline - Date.now());
    const leader = await currentLeader(ctx.bootstrap, topic, partition, left, round > 0).catch((err: Error) => {
      throw new Error(`${what} ${topic}-${partition}: ${err.message}${refused.size ? `; earlier, ${told()}` : ''}`);
    });
    try {
      return await ask(leader, ctx.addressOf(leader.leader));
    } catch (err) {
      if (!leaderMoved(err)) throw err;
      const k = `broker ${leader.leader} (epoch ${leader.leaderEpoch}): ${err.errorName}`;
      refused.set(k, (refused.get(k) ?? 0) + 1);
      if (Date.now() + RETRY_MS > deadline) {
        throw new Error(`${what} ${topic}-${partition}: no broker answered as its leader within ${waitMs} ms (${told()}); last error: ${err.message}`);
      }
      await sleep(RETRY_MS);
    }
  }
}
