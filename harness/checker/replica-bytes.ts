// Replica agreement from bytes, on the host: every replica's own stored batches up to the
// leader's high watermark are read through the client driver and compared batch by batch with
// the leader's (base offset, last offset, size, stored CRC, CRC of the bytes as they are now).
// A committed record that differs between copies is what leader-epoch truncation (KIP-101)
// exists to prevent; the brokers' own /v1/admin/log-hash stays a cross-check (replicas.ts),
// never the only evidence, since a bug all brokers share would hash the same wrong bytes.
import type { ClusterClient, StoredBatch } from '../drivers/types.ts';
import type { ReplicaAgreement } from '../results/types.ts';

export type ReplicaByteSource = Pick<ClusterClient, 'brokers' | 'leaderId'> & Required<Pick<ClusterClient, 'replicaDigest' | 'readReplicaLog'>>;

export interface Divergence {
  brokerId: number;
  /** Base offset of the first batch that differs from the leader's. */
  offset: number;
  why: string;
}

export interface PartitionBytes {
  partition: number;
  leader: number;
  /** The leader's HW: batches whose last offset is below it are compared. */
  upTo: number;
  followers: number[];
  compared: number;
  /** Every follower read agrees below it (the HW while none differs or ends early); a figure only when `followers` is not empty. */
  agreeUpTo: number;
  firstDivergentOffset: number | null;
  divergent: Divergence[];
  /** Followers whose stored log ends below the HW: behind, not different. */
  short: Array<{ brokerId: number; endOffset: number }>;
  /** Leader batches whose stored CRC does not match their bytes. */
  leaderCorrupt: number;
}

function describe(a: StoredBatch): string {
  return `[${a.baseOffset}..${a.lastOffset}] ${a.size} B crc ${a.crc.toString(16)}${a.computedCrc !== a.crc ? ` (bytes give ${a.computedCrc.toString(16)})` : ''}`;
}

/** The first batch where `follower` differs from `leader`, or where it ends early. */
export function compareStoredBatches(
  leader: StoredBatch[],
  follower: StoredBatch[],
): { compared: number; divergence: { offset: number; why: string } | null; endOffset: number | null } {
  let compared = 0;
  for (let i = 0; i < leader.length; i++) {
    const l = leader[i]!;
    const f = follower[i];
    if (!f) return { compared, divergence: null, endOffset: l.baseOffset };
    compared++;
    const same = l.baseOffset === f.baseOffset && l.lastOffset === f.lastOffset && l.size === f.size && l.crc === f.crc && l.computedCrc === f.computedCrc;
    if (!same) return { compared, divergence: { offset: Math.min(l.baseOffset, f.baseOffset), why: `leader ${describe(l)}, replica ${describe(f)}` }, endOffset: null };
  }
  // A follower holding more below the HW than the leader is a divergence too.
  const extra = follower[leader.length];
  if (extra) return { compared, divergence: { offset: extra.baseOffset, why: `replica holds ${describe(extra)} past the leader's last batch below its HW` }, endOffset: null };
  return { compared, divergence: null, endOffset: null };
}

/**
 * A follower's stored batches, or, when its broker cannot read them (it answers a storage error:
 * a bad block, bytes rewritten under it), a divergence at the offset its answer names (else at
 * 0): its copy differs from the leader's, whatever it would have held. null: it holds no replica.
 */
async function readOrUnreadable(source: ReplicaByteSource, brokerId: number, topic: string, p: number, upTo: number): Promise<{ batches: StoredBatch[] } | { unreadable: { offset: number; why: string } } | null> {
  try {
    return await source.readReplicaLog(brokerId, topic, p, upTo);
  } catch (err) {
    const message = (err as Error).message;
    // Only the broker's (or the disk's) word that the bytes cannot be read; anything else (a broker down, a timeout) is the check's failure.
    if (!isUnreadableAnswer(err)) throw err;
    const at = /offset (\d+)/.exec(message);
    return { unreadable: { offset: at ? Number(at[1]) : 0, why: `replica unreadable: ${message.slice(0, 300)}` } };
  }
}

export async function compareReplicaBytes(source: ReplicaByteSource, topic: string, partitions: number[]): Promise<PartitionBytes[]> {
  const out: PartitionBytes[] = [];
  for (const p of partitions) {
    const leader = source.leaderId(topic, p);
    if (leader === null) throw new Error(`replica bytes ${topic}-${p}: the partition has no leader to compare against`);
    const digest = await source.replicaDigest(leader, topic, p, 0);
    if (!digest) throw new Error(`replica bytes ${topic}-${p}: leader ${leader} holds no replica`);
    const upTo = digest.hw;
    const leaderLog = await source.readReplicaLog(leader, topic, p, upTo);
    if (!leaderLog) throw new Error(`replica bytes ${topic}-${p}: leader ${leader} holds no replica`);
    const part: PartitionBytes = {
      partition: p,
      leader,
      upTo,
      followers: [],
      compared: 0,
      agreeUpTo: upTo,
      firstDivergentOffset: null,
      divergent: [],
      short: [],
      leaderCorrupt: leaderLog.batches.filter((b) => b.crc !== b.computedCrc).length,
    };
    for (const b of source.brokers) {
      if (b.id === leader) continue;
      const read = await readOrUnreadable(source, b.id, topic, p, upTo);
      if (!read) continue;
      part.followers.push(b.id);
      const c = 'unreadable' in read ? { compared: 0, divergence: read.unreadable, endOffset: null } : compareStoredBatches(leaderLog.batches, read.batches);
      part.compared += c.compared;
      if (c.divergence) {
        part.divergent.push({ brokerId: b.id, ...c.divergence });
        part.agreeUpTo = Math.min(part.agreeUpTo, c.divergence.offset);
        part.firstDivergentOffset = Math.min(part.firstDivergentOffset ?? Infinity, c.divergence.offset);
      } else if (c.endOffset !== null) {
        part.short.push({ brokerId: b.id, endOffset: c.endOffset });
        part.agreeUpTo = Math.min(part.agreeUpTo, c.endOffset);
      }
    }
    out.push(part);
  }
  return out;
}

/**
 * run.json's `replicas` figures of one trial. agreeUpTo speaks only for partitions where some
 * follower's bytes were read: absent for one none of whose followers was, and for the trial when
 * no partition was compared (not measured, never 0 nor the HW).
 */
export function replicaAgreementOf(parts: PartitionBytes[]): ReplicaAgreement {
  const first = parts.map((p) => p.firstDivergentOffset).filter((o): o is number => o !== null);
  const read = parts.filter((p) => p.followers.length > 0);
  return {
    compared: parts.reduce((a, p) => a + p.compared, 0),
    replicas: parts.reduce((a, p) => a + p.followers.length, 0),
    ...(read.length ? { agreeUpTo: Math.min(...read.map((p) => p.agreeUpTo)) } : {}),
    ...(first.length ? { firstDivergentOffset: Math.min(...first) } : {}),
    diverged: parts.filter((p) => p.divergent.length > 0).length,
    short: parts.reduce((a, p) => a + p.short.length, 0),
    partitions: parts.map((p) => ({
      partition: p.partition,
      leader: p.leader,
      upTo: p.upTo,
      compared: p.compared,
      ...(p.followers.length ? { agreeUpTo: p.agreeUpTo } : {}),
      ...(p.firstDivergentOffset !== null ? { firstDivergentOffset: p.firstDivergentOffset } : {}),
      divergent: p.divergent,
      short: p.short,
    })),
  };
}

/** A cell's `replicas` over its trials: counts summed, offsets the lowest; per-partition detail stays in the trials. */
export function addReplicaAgreements(a: ReplicaAgreement | undefined, b: ReplicaAgreement | undefined): ReplicaAgreement | undefined {
  if (!a) {
    if (!b) return undefined;
    const { partitions: _detail, ...totals } = b;
    return totals;
  }
  if (!b) return a;
  const first = [a.firstDivergentOffset, b.firstDivergentOffset].filter((o): o is number => o !== undefined);
  // The lowest of the trials that measured one; none measured, none.
  const agree = [a.agreeUpTo, b.agreeUpTo].filter((o): o is number => o !== undefined);
  return {
    compared: a.compared + b.compared,
    replicas: a.replicas + b.replicas,
    ...(agree.length ? { agreeUpTo: Math.min(...agree) } : {}),
    ...(first.length ? { firstDivergentOffset: Math.min(...first) } : {}),
    diverged: a.diverged + b.diverged,
    short: a.short + b.short,
  };
}

/** An answer that says a replica's stored bytes cannot be read: a storage error, a corrupt batch, EIO. */
export function isUnreadableAnswer(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException;
  return e?.code === 'EIO' || /KAFKA_STORAGE_ERROR|CORRUPT_MESSAGE|\bEIO\b|Input\/output error|i\/o error/i.test(String(e?.message ?? ''));
}
