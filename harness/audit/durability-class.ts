// A topic's durability class from what a cluster says about it (replication factor, min ISR,
// unclean election, flush.messages / flush.ms, the ISR now, ELR) and what the producer uses
// (acks, idempotence: a cluster cannot tell those, the operator gives them). Pure: the audit
// command reads the cluster, this names what the settings allow, lab-evidence.ts finds what
// the lab measured for the same settings.
import type { Acks, FlushPolicy } from '../../engine/settings/values.ts';
import { formatFlushPolicy } from '../../engine/settings/values.ts';
import { KAFKA_LONG_MAX } from '../../engine/server/kafka/config-view.ts';

/** Kafka's Long.MAX_VALUE: flush.messages / flush.ms that never flush (the engine's DescribeConfigs answers it). */
const LONG_MAX = BigInt(KAFKA_LONG_MAX);

export interface TopicFacts {
  topic: string;
  replicationFactor: number;
  partitions: number;
  minInsyncReplicas: number;
  uncleanLeaderElection: boolean;
  /** From flush.messages and flush.ms. */
  flush: FlushPolicy;
  /** Partitions whose ISR is smaller than their replica set right now, with it. */
  underReplicated: Array<{ partition: number; isr: number[]; replicas: number[] }>;
  /** Partitions with no leader right now. */
  offline: number[];
  /** eligible.leader.replicas.version >= 1 (KIP-966); null: the cluster lists no such feature. */
  eligibleLeaderReplicas: boolean | null;
  /** replica.lag.time.max.ms of the brokers (null: not read). */
  replicaLagTimeMaxMs: number | null;
}

export interface ProducerFacts {
  acks: Acks;
  idempotence: boolean;
  /** Whether the operator gave them (--acks/--idempotence) or the audit assumed the client defaults. */
  given: boolean;
}

export type Severity = 'loss' | 'availability' | 'note';

export interface Finding {
  severity: Severity;
  text: string;
}

export interface DurabilityClass {
  /** Short and stable: `acks=all RF3 minISR2 flush=never unclean=off`. */
  id: string;
  /** What an acknowledgement means under these settings, in one sentence. */
  guarantee: string;
  findings: Finding[];
}

/** flush.messages and flush.ms (Kafka's topic configs, strings as DescribeConfigs gives them) as a lab flush policy; null if unreadable. */
export function flushPolicyOf(flushMessages: string | null, flushMs: string | null): FlushPolicy | null {
  const big = (v: string | null): bigint | null => {
    if (v === null || !/^\d+$/.test(v)) return null;
    return BigInt(v);
  };
  const m = big(flushMessages);
  const t = big(flushMs);
  if (m === null || t === null) return null;
  if (m === 1n) return { kind: 'per-batch' };
  if (m < LONG_MAX && m <= BigInt(Number.MAX_SAFE_INTEGER)) return { kind: 'messages', every: Number(m) };
  if (t < LONG_MAX && t <= 2n ** 31n - 1n) return { kind: 'ms', every: Number(t) };
  return { kind: 'never' };
}

export function flushText(p: FlushPolicy): string {
  switch (p.kind) {
    case 'never':
      return 'no flush (flush.messages and flush.ms unset: the page cache only)';
    case 'per-batch':
      return 'flush.messages=1 (an fsync after every append)';
    case 'messages':
      return `flush.messages=${p.every}`;
    case 'ms':
      return `flush.ms=${p.every}`;
  }
}

export function classify(t: TopicFacts, p: ProducerFacts): DurabilityClass {
  const findings: Finding[] = [];
  const rf = t.replicationFactor;
  const minIsr = t.minInsyncReplicas;
  const acks = p.acks;
  const copies = acks === 'all' ? Math.min(Math.max(minIsr, 1), rf) : acks === 1 ? 1 : 0;
  let guarantee: string;
  if (acks === 0) guarantee = 'acks=0: the producer does not wait for the broker; nothing is acknowledged, so a loss is not even seen';
  else if (acks === 1) guarantee = "acks=1: an acknowledged record is in the leader's log only";
  else guarantee = `acks=all: an acknowledged record is in the log of every in-sync replica, which is at least ${copies} broker${copies === 1 ? '' : 's'} (min.insync.replicas ${minIsr}, RF ${rf})`;
  guarantee += t.flush.kind === 'per-batch' ? ', fsynced before the answer' : ", in the page cache (not yet on disk) when it is acknowledged";

  if (rf === 1) findings.push({ severity: 'loss', text: 'RF 1: one copy. Losing that broker\'s disk loses the topic, and acks=all means acks=1' });
  if (acks === 1 && rf > 1) {
    findings.push({ severity: 'loss', text: "acks=1: a leader that fails (crash, power) or hands over (a planned move: KAFKA-20554) before its followers fetched loses what it acknowledged" });
  }
  if (acks === 0) findings.push({ severity: 'loss', text: 'acks=0: records lost in flight, at a leader change or in a full buffer are never reported to the producer' });
  if (acks === 'all' && rf > 1 && minIsr <= 1) {
    const lag = t.replicaLagTimeMaxMs === null ? 'replica.lag.time.max.ms' : `replica.lag.time.max.ms, ${t.replicaLagTimeMaxMs} ms`;
    findings.push({ severity: 'loss', text: `min.insync.replicas ${minIsr}: acks=all is acks=1 once the other replicas fall out of the ISR (after ${lag}); losing the leader then loses what only it had` });
  }
  if (acks === 'all' && minIsr > rf) findings.push({ severity: 'availability', text: `min.insync.replicas ${minIsr} > RF ${rf}: every acks=all produce fails with NOT_ENOUGH_REPLICAS` });
  else if (acks === 'all' && rf > 1 && minIsr === rf) findings.push({ severity: 'availability', text: `min.insync.replicas ${minIsr} = RF ${rf}: one broker down stops every acks=all produce (NOT_ENOUGH_REPLICAS)` });
  if (t.flush.kind === 'never' && acks !== 0) {
    findings.push({ severity: 'loss', text: 'no flush: acknowledged records sit in page caches; a power loss of every replica at once (a rack, a site) loses those not yet written back (up to vm.dirty_expire_centisecs, 30 s by default, plus the writeback interval)' });
  } else if (t.flush.kind === 'messages') {
    findings.push({ severity: 'loss', text: `flush.messages=${t.flush.every}: up to ${t.flush.every - 1} acknowledged records per partition and replica are unflushed at any time; a power loss of every replica at once can lose them` });
  } else if (t.flush.kind === 'ms') {
    findings.push({ severity: 'loss', text: `flush.ms=${t.flush.every}: up to ${t.flush.every} ms of acknowledged records are unflushed; a power loss of every replica at once can lose them (Kafka checks flush.ms every log.flush.scheduler.interval.ms)` });
  }
  if (t.uncleanLeaderElection) {
    findings.push({ severity: 'loss', text: 'unclean.leader.election.enable=true: an out-of-sync replica can become leader, and the records it lacked are lost even with acks=all' });
  }
  if (t.eligibleLeaderReplicas === true) findings.push({ severity: 'note', text: 'ELR on (eligible.leader.replicas.version >= 1, KIP-966): with unclean election off, only replicas that hold every committed record can be elected after ISR shrinks' });
  else if (t.eligibleLeaderReplicas === false) findings.push({ severity: 'note', text: 'ELR off (eligible.leader.replicas.version 0): after the ISR shrank to its last member, only that member can lead (KIP-841)' });
  if (t.offline.length > 0) findings.push({ severity: 'availability', text: `now: partition(s) ${t.offline.join(', ')} have no leader` });
  if (t.underReplicated.length > 0) {
    const shown = t.underReplicated.slice(0, 5).map((u) => `${u.partition} (ISR [${u.isr.join(',')}] of [${u.replicas.join(',')}])`);
    const more = t.underReplicated.length > 5 ? ` and ${t.underReplicated.length - 5} more` : '';
    const below = t.underReplicated.filter((u) => u.isr.length < minIsr).length;
    findings.push({
      severity: below > 0 && acks === 'all' ? 'availability' : 'note',
      text: `now: under-replicated partition(s) ${shown.join(', ')}${more}${below > 0 ? `; ${below} below min.insync.replicas, where acks=all produce fails now` : ''}`,
    });
  }
  if (!p.idempotence && acks !== 0) findings.push({ severity: 'note', text: 'idempotence off: a retried batch can be written twice (duplicates, not loss)' });
  if (!p.given) findings.push({ severity: 'note', text: 'producer settings not given: judged for acks=all with idempotence, the Java client\'s defaults since Kafka 3.0 (give --acks and --idempotence as your producers use them)' });

  const id = `acks=${acks} RF${rf} minISR${minIsr} flush=${formatFlushPolicy(t.flush)} unclean=${t.uncleanLeaderElection ? 'on' : 'off'}`;
  return { id, guarantee, findings };
}
