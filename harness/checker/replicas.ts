// Every replica's view of a partition, through the client driver: its HW, its log end offset
// and a digest of its stored batches below an offset. Replicas that agree hash the same bytes
// up to the lowest HW among them; a difference there means a committed record differs between
// copies, which leader-epoch truncation (KIP-101) exists to prevent.
import { isUnreadableAnswer } from './replica-bytes.ts';
import type { ClusterClient, ReplicaDigest } from '../drivers/types.ts';

/** What the checker needs from a cluster: who the brokers are, who leads, and each replica's digest. */
export type ReplicaSource = Pick<ClusterClient, 'brokers' | 'leaderId'> & Required<Pick<ClusterClient, 'replicaDigest'>>;

export type ReplicaState = ReplicaDigest;

/** One state per broker that holds a replica of the partition (hash up to `upTo`, default its own HW). */
export async function replicaStates(source: ReplicaSource, topic: string, partition: number, upTo?: number): Promise<ReplicaState[]> {
  const answers = await Promise.all(source.brokers.map((b) => source.replicaDigest(b.id, topic, partition, upTo)));
  return answers.filter((a): a is ReplicaState => a !== null);
}

/**
 * Polls until, for every partition, each replica's log ends where the leader's does and the
 * leader's HW reached its log end (followers fetched everything and truncated what diverged).
 * Followers learn the HW on their next fetch (a long poll), so once caught up it waits up to
 * `hwGraceMs` more for their HWs to match, which lets the hashes compare the whole log.
 * Returns caughtUp false at the deadline: the caller checks anyway and says so; null where the
 * driver reads no replica digests (nothing to wait for that it could see).
 */
export async function waitForReplicasCaughtUp(
  client: Pick<ClusterClient, 'brokers' | 'leaderId' | 'replicaDigest'>,
  topic: string,
  partitions: number[],
  timeoutMs: number,
  hwGraceMs = 2000,
): Promise<{ caughtUp: boolean | null; detail: string }> {
  // A driver that reads no replica digests cannot tell: not evaluated (null), never "caught up".
  const { replicaDigest } = client;
  if (!replicaDigest) return { caughtUp: null, detail: "not evaluated: the client driver reads no replica's log end" };
  const source: ReplicaSource = { brokers: client.brokers, leaderId: (t, p) => client.leaderId(t, p), replicaDigest: replicaDigest.bind(client) };
  const deadline = Date.now() + timeoutMs;
  let caughtUpSince: number | null = null;
  for (;;) {
    const lagging: string[] = [];
    let followerHwBehind = false;
    for (const p of partitions) {
      const leader = source.leaderId(topic, p);
      if (leader === null) {
        lagging.push(`${topic}-${p}: no leader`);
        continue;
      }
      try {
        const states = await replicaStates(source, topic, p, 0);
        const l = states.find((s) => s.brokerId === leader);
        if (!l) lagging.push(`${topic}-${p}: leader ${leader} holds no replica`);
        else {
          const behind = states.filter((s) => s.leo !== l.leo).map((s) => `broker ${s.brokerId} LEO ${s.leo}`);
          if (behind.length || l.hw !== l.leo) lagging.push(`${topic}-${p}: leader ${leader} HW ${l.hw} LEO ${l.leo}${behind.length ? `; ${behind.join(', ')}` : ''}`);
          if (states.some((s) => s.hw !== l.hw)) followerHwBehind = true;
        }
      } catch (err) {
        lagging.push(`${topic}-${p}: ${(err as Error).message}`);
      }
    }
    const now = Date.now();
    if (lagging.length === 0) {
      caughtUpSince ??= now;
      if (!followerHwBehind || now - caughtUpSince >= hwGraceMs || now >= deadline) return { caughtUp: true, detail: '' };
    } else {
      caughtUpSince = null;
      if (now >= deadline) return { caughtUp: false, detail: lagging.join('; ') };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface PartitionAgreement {
  partition: number;
  leader: number | null;
  /** The lowest HW among the replicas: every replica's bytes below it are compared. */
  upTo: number;
  /** The leader's HW. */
  leaderHw: number;
  hashes: Record<number, string>;
  /** null: not evaluated (the driver reads no replica digests). */
  agree: boolean | null;
  /** Replicas whose bytes below upTo their broker could not read, with what it answered (they do not agree). */
  unreadable?: Record<number, string>;
}

export async function checkReplicaAgreement(source: ReplicaSource, topic: string, partitions: number[]): Promise<PartitionAgreement[]> {
  const out: PartitionAgreement[] = [];
  for (const p of partitions) {
    const leader = source.leaderId(topic, p);
    const first = await replicaStates(source, topic, p, 0);
    if (first.length === 0) throw new Error(`log-hash ${topic}-${p}: no broker holds a replica`);
    const upTo = Math.min(...first.map((s) => s.hw));
    // A replica whose bytes below upTo cannot be read (its broker answers a storage error: a bad
    // block, a file rewritten under it) does not agree: it is named with what its broker said.
    const hashes: Record<number, string> = {};
    const unreadable: Record<number, string> = {};
    await Promise.all(
      first.map(async (s) => {
        try {
          const d = await source.replicaDigest(s.brokerId, topic, p, upTo);
          if (d) hashes[s.brokerId] = d.hash;
        } catch (err) {
          if (!isUnreadableAnswer(err)) throw err;
          unreadable[s.brokerId] = (err as Error).message;
          hashes[s.brokerId] = `unreadable: ${(err as Error).message.slice(0, 200)}`;
        }
      }),
    );
    const leaderHw = first.find((s) => s.brokerId === leader)?.hw ?? -1;
    out.push({ partition: p, leader, upTo, leaderHw, hashes, agree: new Set(Object.values(hashes)).size <= 1, ...(Object.keys(unreadable).length ? { unreadable } : {}) });
  }
  return out;
}
