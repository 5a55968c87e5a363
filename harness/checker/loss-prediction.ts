// The loss window a trial's settings predict, computed from the ack ledger before anyone looks
// at what the disk kept: which acknowledged records the settings allow a fault to lose. Then
// the measured loss beside it: a lost record outside the predicted set is a finding (a lying
// drive or an engine bug), never noise. The rules, for a record acknowledged at time a with a
// cut (or move) at time c:
//
// 1. Replication. acks=all: the record is on at least min.insync.replicas replicas, so it
//    survives unless the fault hits at least that many brokers. acks=1: only the leader had it
//    for sure; a record acknowledged within replica.lag.time.max.ms of the fault may exist on
//    the leader alone (a follower that lagged that long left the ISR, but one that lagged less
//    may miss it), so it is at risk when the fault takes the leader's log or its leadership
//    (power cut, kill, planned move, full disk), even flushed: the replica that leads next may
//    lack it, and the old leader truncates to it. acks=0: nothing was confirmed; every record is
//    at risk. A full disk (fault disk-full) counts as a kill of the hit brokers from its start on:
//    their logs go offline (Kafka halts the broker), another replica leads, they restart after
//    the heal; the acks=1 window reaches from replica.lag.time.max.ms before the fill to the end
//    of the load, as the hit leader may acknowledge until its first ENOSPC.
// 2. The page cache. Only a power cut loses it (a full disk does not: the writes it refused
//    were never acknowledged, the pages written before reach the disk). A record not safe by rule 1 on a cut broker is
//    safe only if a flush completed over it, which the flush policy bounds:
//    per-batch, io=dsync: flushed before the answer (safe);
//    messages:N: at most N acknowledged records per partition unflushed (the last N offsets);
//    ms:T: at most 1.1 T + 0.5 s of acknowledgements (Kafka's scheduler checks every T/10);
//      NATS JetStream's sync_interval T fits the same bound: each store (the stream's blocks, its
//      Raft log, the meta group's) syncs T after its last pass ended (the first pass T/2..T after
//      it opened), so the unsynced span is at most T plus two passes;
//    io=direct, no flush: the data is on the device at the answer, the file's size in ext4's
//    journal within its commit interval (+1 s);
//    never: the kernel writes dirty pages back after vm.dirty_expire_centisecs, in passes
//    every vm.dirty_writeback_centisecs, committed by the next journal commit.
// Under a volatile write cache only a FLUSH makes a write durable: without an fdatasync of its
// own (no flush, O_DIRECT) every acknowledged record is at risk.
// 3. The ISR as sampled during the load (harness/probes/isr-sampler.ts), where known. acks=all
//    waits only for the ISR: a record acknowledged while the ISR was the leader alone is on that
//    leader only, at risk when the fault hits it (cut, killed or isolated: another replica may
//    lead without it), flushed or not. A leader isolated from its followers and controller (a
//    zombie) that goes on acknowledging with acks=1 puts what it acknowledged after its isolation
//    at risk: the leader elected in its place never had it. Without eligible leader replicas
//    (KIP-966 off), a power cut of the leader while the ISR was it alone puts what its page cache
//    held at risk under acks=all too, whatever min.insync.replicas: it is elected again on what its
//    disk kept, and the followers that had the records truncate to it.
// A disk that ignores FLUSH is not in the rules: the settings predict an honest drive, so its
// loss shows as records lost outside the window.
import type { Acks, FlushPolicy, IoMode } from '../../engine/settings/values.ts';
import { ackedRecordsOf, type LedgerBatch } from '../history/ledger.ts';
import type { LostBatch } from './checker.ts';
import type { LossPrediction } from '../results/types.ts';
import { isrAt, type IsrChange } from '../probes/isr-sampler.ts';

export interface LossPredictionInput {
  faultKind: string;
  /** Brokers the fault hit, and whether it takes their page cache (a power cut) or only their process/leadership. */
  victims: number[];
  losesPageCache: boolean;
  /** Leader of each partition at the fault, where known (acks=1 risk needs it). */
  leaders: Map<number, number>;
  acks: Acks;
  minInsyncReplicas: number;
  replicationFactor: number;
  flush: FlushPolicy;
  io: IoMode;
  replicaLagTimeMaxMs: number;
  dirtyExpireMs: number;
  dirtyWritebackMs: number;
  /** ext4's commit interval (mount option commit=N, default 5 s). */
  journalCommitMs: number;
  /** The disk has a volatile write cache (vm.disk model volatile-cache): only a FLUSH makes a write durable. */
  volatileCache: boolean;
  batches: Iterable<LedgerBatch>;
  /** Wall clock of the fault (CutInfo.atMs). */
  cutMs: number;
  lost: LostBatch[];
  /** The ISR changes sampled during the load (rule 3); absent: not sampled. */
  isr?: readonly IsrChange[];
  /** When the victims were cut off from their followers and the controller (a partition fault; rule 3), wall clock. */
  isolatedAtMs?: number;
  /** eligible.leader.replicas (KIP-966): false lets the last ISR member, cut, lead again with what its cut lost (rule 3). Absent: as on. */
  eligibleLeaderReplicas?: boolean;
}

export type { LossPrediction };

const DEFAULT_COMMIT_MS = 5000;

/** commit=N in an ext4 mount option string, in ms (ext4's default 5 s otherwise). */
export function journalCommitMsOf(mountOptions: string | undefined): number {
  const m = /(?:^|,)commit=(\d+)(?:,|$)/.exec(mountOptions ?? '');
  return m ? Number(m[1]) * 1000 : DEFAULT_COMMIT_MS;
}

type Risk = { kind: 'none' } | { kind: 'all' } | { kind: 'since'; ms: number; why: string } | { kind: 'last'; records: number; why: string };

/** What rule 2 (a cut page cache) leaves at risk. */
function unflushedRisk(i: LossPredictionInput): Risk {
  if (i.io === 'dsync' || i.flush.kind === 'per-batch') return { kind: 'none' };
  if (i.flush.kind === 'messages') return { kind: 'last', records: i.flush.every, why: `flush every ${i.flush.every} messages: at most the last ${i.flush.every} acknowledged per partition unflushed` };
  if (i.volatileCache && i.flush.kind === 'never') return { kind: 'all' };
  if (i.flush.kind === 'ms') return { kind: 'since', ms: Math.round(1.1 * i.flush.every) + 500, why: `flush every ${i.flush.every} ms: acknowledged in the last ${Math.round(1.1 * i.flush.every) + 500} ms` };
  if (i.io === 'direct') return { kind: 'since', ms: i.journalCommitMs + 1000, why: `O_DIRECT without a flush: the file size commits with ext4's journal, acknowledged in the last ${(i.journalCommitMs + 1000) / 1000} s` };
  const ms = i.dirtyExpireMs + i.dirtyWritebackMs + i.journalCommitMs;
  return { kind: 'since', ms, why: `no flush: dirty pages written back after ${i.dirtyExpireMs / 1000} s (+${i.dirtyWritebackMs / 1000} s writeback pass, +${i.journalCommitMs / 1000} s journal commit): acknowledged in the last ${ms / 1000} s` };
}

function riskOf(i: LossPredictionInput, partition: number): Risk {
  if (i.acks === 0) return { kind: 'all' };
  const leader = i.leaders.get(partition);
  const leaderHit = leader === undefined || i.victims.includes(leader);
  const lag: Risk = { kind: 'since', ms: i.replicaLagTimeMaxMs, why: `acks=1: acknowledged by the leader alone in the last ${i.replicaLagTimeMaxMs / 1000} s (replica.lag.time.max.ms)` };
  if (!i.losesPageCache) {
    // A kill or a move: every page cache survives. Only a change of leader can drop a record,
    // and only one the old leader alone had: never a committed one (acks=all), never with one replica.
    return i.acks === 'all' || i.replicationFactor === 1 || !leaderHit ? { kind: 'none' } : lag;
  }
  const cache = unflushedRisk(i);
  if (i.acks === 'all') {
    // On at least min ISR replicas: safe while one of them kept its page cache, unless the cut
    // leader was the ISR's last member and no eligible leader replica stands in (rule 3, KIP-966):
    // it leads again on what its disk kept, and the replicas that had more truncate to it.
    if (i.eligibleLeaderReplicas === false && leader !== undefined && leaderHit && lastInIsr(i, partition, leader)) return cache;
    return i.victims.length < Math.min(i.minInsyncReplicas, i.replicationFactor) ? { kind: 'none' } : cache;
  }
  if (i.replicationFactor === 1) return leaderHit ? cache : { kind: 'none' };
  if (!leaderHit) return i.victims.length >= i.replicationFactor ? cache : { kind: 'none' };
  // acks=1 with the leader hit: what the leader alone had is lost if another replica leads
  // after the fault (it truncates to that one), flushed or not. A rack cut (every replica) also
  // loses what no replica flushed: the larger of the two windows (the last N messages of a flush
  // interval lie within replica.lag.time.max.ms at any rate above N per 30 s).
  if (i.victims.length < i.replicationFactor) return lag;
  if (cache.kind === 'all') return cache;
  return cache.kind === 'since' && cache.ms > (lag as { ms: number }).ms ? cache : lag;
}

/** The sampled ISR at the fault was the leader alone. */
function lastInIsr(i: LossPredictionInput, partition: number, leader: number): boolean {
  const isr = i.isr ? isrAt(i.isr, partition, i.cutMs)?.isr : undefined;
  return isr !== undefined && isr !== null && isr.length === 1 && isr[0] === leader;
}

function describe(r: Risk): string {
  switch (r.kind) {
    case 'none':
      return 'nothing acknowledged is at risk';
    case 'all':
      return 'every acknowledged record is at risk';
    default:
      return r.why;
  }
}

export function predictLoss(i: LossPredictionInput): LossPrediction {
  const byPartition = new Map<number, LedgerBatch[]>();
  for (const b of i.batches) {
    if (b.status !== 'acked') continue;
    let list = byPartition.get(b.partition);
    if (!list) byPartition.set(b.partition, (list = []));
    list.push(b);
  }
  const rules = new Set<string>();
  let atRisk = 0;
  const riskyOffsetFrom = new Map<number, number>();
  const riskySince = new Map<number, number>();
  for (const [partition, batches] of byPartition) {
    const r = riskOf(i, partition);
    rules.add(describe(r));
    if (r.kind === 'none') continue;
    if (r.kind === 'all') {
      riskySince.set(partition, -Infinity);
      atRisk += batches.reduce((a, b) => a + ackedRecordsOf(b), 0);
    } else if (r.kind === 'since') {
      const from = i.cutMs - r.ms;
      riskySince.set(partition, from);
      atRisk += batches.filter((b) => b.ackMs >= from).reduce((a, b) => a + ackedRecordsOf(b), 0);
    } else {
      const top = Math.max(...batches.map((b) => b.baseOffset + b.records - 1));
      const from = top + 1 - r.records;
      riskyOffsetFrom.set(partition, from);
      // A batch acknowledged without an offset has no place to judge: at risk.
      for (const b of batches) atRisk += b.baseOffset < 0 ? ackedRecordsOf(b) : Math.max(0, Math.min(ackedRecordsOf(b), b.baseOffset + b.records - from));
    }
  }
  // Rule 3, batch by batch, beside the partition windows above.
  const alone = leaderAloneRisk(i, byPartition, riskySince, riskyOffsetFrom);
  atRisk += alone.records;
  for (const why of alone.rules) rules.add(why);
  let beyond = 0;
  const beyondSample: LossPrediction['beyondSample'] = [];
  for (const l of i.lost) {
    const since = riskySince.get(l.partition);
    const fromOffset = riskyOffsetFrom.get(l.partition);
    let safe: number;
    if (alone.batches.has(`${l.partition}:${l.baseSequence}`)) safe = 0;
    else if (since !== undefined) safe = l.ackMs >= since ? 0 : l.records;
    else if (fromOffset !== undefined) safe = l.ackedOffset < 0 ? 0 : Math.max(0, Math.min(l.records, fromOffset - l.ackedOffset));
    else safe = l.records;
    if (safe === 0) continue;
    beyond += safe;
    if (beyondSample.length < 10) beyondSample.push({ partition: l.partition, offset: l.ackedOffset, ackedBeforeFaultMs: Math.round(i.cutMs - l.ackMs) });
  }
  return { rule: [...rules].join('; '), atRisk, beyond, beyondSample };
}

/** The red sentence for a trial whose loss exceeds its prediction, or null. */
export function beyondPredictionText(p: LossPrediction): string | null {
  if (p.beyond === 0) return null;
  const first = p.beyondSample[0];
  const where = first ? ` (first: partition ${first.partition} offset ${first.offset}, acknowledged ${(first.ackedBeforeFaultMs / 1000).toFixed(1)} s before the fault)` : '';
  return `lost ${p.beyond.toLocaleString('en-US')} acknowledged records the settings say were safe${where}: the disk lied or the engine has a bug`;
}

/**
 * Rule 3: batches held by a hit leader alone. acks=all: acknowledged while the ISR was that
 * leader only; acks=1: acknowledged by an isolated leader after its isolation. Counts only what
 * the partition windows (rules 1-2) did not already put at risk.
 */
function leaderAloneRisk(
  i: LossPredictionInput,
  byPartition: Map<number, LedgerBatch[]>,
  riskySince: Map<number, number>,
  riskyOffsetFrom: Map<number, number>,
): { records: number; batches: Set<string>; rules: string[] } {
  const out = { records: 0, batches: new Set<string>(), rules: [] as string[] };
  if (i.acks === 0) return out;
  for (const [partition, batches] of byPartition) {
    const leader = i.leaders.get(partition);
    if (leader === undefined || !i.victims.includes(leader)) continue;
    const since = riskySince.get(partition);
    const fromOffset = riskyOffsetFrom.get(partition);
    for (const b of batches) {
      const covered = (since !== undefined && b.ackMs >= since) || (fromOffset !== undefined && b.baseOffset >= fromOffset);
      if (covered) continue;
      const isr = i.acks === 'all' && i.isr ? isrAt(i.isr, partition, b.ackMs)?.isr : undefined;
      const aloneInIsr = isr !== undefined && isr !== null && isr.length === 1 && isr[0] === leader;
      const zombie = i.acks === 1 && i.isolatedAtMs !== undefined && b.ackMs >= i.isolatedAtMs;
      if (!aloneInIsr && !zombie) continue;
      out.batches.add(`${partition}:${b.baseSequence}`);
      out.records += ackedRecordsOf(b);
    }
  }
  if (out.records > 0) {
    if (i.acks === 'all') out.rules.push('acks=all with the ISR shrunk to the leader alone: what it acknowledged then is on the hit leader only');
    else out.rules.push('acks=1 on an isolated leader: what it acknowledged after its isolation is on that leader only');
  }
  return out;
}
