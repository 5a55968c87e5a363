// A consumer group's figures as run.json keeps them (harness/workload/consumers.ts measures
// them), and the medians the terminal and the report read off them.
import type { LatencySummary } from '../../engine/common/latency.ts';
import { median } from '../../engine/common/stats.ts';

export interface ConsumerGroupResult {
  name: string;
  start: string;
  /** assigned (one consumer per partition) or group (members through the coordinator); absent in older run.json files: assigned. */
  membership?: 'assigned' | 'group';
  /** membership group: each member's partitions at its last join, and the joins of all members (a rebalance makes every member join again). */
  members?: Array<{ partitions: number[] }>;
  joins?: number;
  /** membership group: records served more than once (a partition's new owner after a rebalance starts at the last committed offset). */
  redelivered?: number;
  partitions: number[];
  startAtSec: number;
  /** Seconds from the group's start to the end of the load. */
  activeSec: number;
  records: number;
  bytes: number;
  recordsPerSec: number;
  mbPerSec: number;
  fetches: number;
  fetchLatencyUs: LatencySummary;
  /** Send (the ledger's clock) to consumed, per record; only the workload's own records count. */
  endToEndUs: LatencySummary;
  /** Records behind the high watermark, summed over the group's partitions: the most when a fetch was asked, and what was left at the end. */
  lag: { max: number; end: number };
  /** Per second since the load started: records consumed, lag at the end of the second. */
  perSecond: Array<{ t: number; records: number; lag: number }>;
  checks: {
    /** A fetch that served an offset below one already consumed. */
    nonMonotonic: number;
    /** Acknowledged records whose offsets a consumer passed without being served them. */
    skipped: number;
    /** Records consumed whose batch was never acknowledged by the end of the load. */
    neverAcked: number;
    corrupt: number;
  };
  /** OFFSET_OUT_OF_RANGE answers, each followed by a reset to the log start (auto.offset.reset=earliest). */
  offsetResets: number;
  /**
   * 1 - bytes the device read while the group read / bytes the group was served (clamped to 0..1;
   * the device's reads are everyone's); first repetition only, null without read probes.
   */
  cacheHitRatio?: number | null;
  /** A group that starts after the measured seconds began: the producers' p99 before it and while it read (first repetition). */
  producerP99Us?: { before: number; during: number } | null;
  /**
   * A group that starts behind (start earliest or lag:): from its start until every partition's
   * lag first reached 0, how fast it caught up and the CPU the brokers spent meanwhile (host
   * processes only; null elsewhere). null: not caught up when the load ended.
   */
  catchUp?: CatchUp | null;
  /** A consumer that stopped on an error, with it. */
  errors: string[];
}

/** How a group got its partitions, for tables: '' with assigned partitions, ', group of N' through the coordinator. */
export function membershipText(g: ConsumerGroupResult, detail = false): string {
  if (g.membership !== 'group') return '';
  const members = g.members ?? [];
  const head = `, group of ${members.length}`;
  if (!detail) return head;
  return `${head} (partitions ${members.map((m) => (m.partitions.length ? m.partitions.join(',') : '-')).join(' | ')}; ${g.joins ?? 0} joins; ${g.redelivered ?? 0} redelivered)`;
}

/** Medians over repetitions of a group's catch-up (those in which it caught up): MB/s and broker CPU ms per GB. */
export function catchUpMedians(groups: readonly ConsumerGroupResult[]): { mbPerSec: number | null; brokerCpuMsPerGB: number | null } {
  const caught = groups.map((g) => g.catchUp).filter((x): x is CatchUp => !!x);
  return {
    mbPerSec: median(caught.map((x) => x.mbPerSec)),
    brokerCpuMsPerGB: median(caught.map((x) => x.brokerCpuMsPerGB).filter((x): x is number => x !== null)),
  };
}

/**
 * Medians over repetitions of a group's latency and lag figures, each over the repetitions that
 * measured it: a latency over those with at least one sample, the lag over those with a fetch
 * answered. null where none did (a group that never fetched), shown as '-', never as 0.
 */
export function measuredMedians(groups: readonly ConsumerGroupResult[]): { fetchP99Us: number | null; e2eP50Us: number | null; e2eP99Us: number | null; lagMax: number | null; lagEnd: number | null } {
  const fetched = groups.filter((g) => g.fetchLatencyUs.count > 0);
  const e2e = groups.filter((g) => g.endToEndUs.count > 0);
  const answered = groups.filter((g) => g.fetches > 0);
  return {
    fetchP99Us: median(fetched.map((g) => g.fetchLatencyUs.p99)),
    e2eP50Us: median(e2e.map((g) => g.endToEndUs.p50)),
    e2eP99Us: median(e2e.map((g) => g.endToEndUs.p99)),
    lagMax: median(answered.map((g) => g.lag.max)),
    lagEnd: median(answered.map((g) => g.lag.end)),
  };
}

/** A group's rates were measured: it got a fetch answered while it ran (`fetches: 0` never fetched: its 0s are no measurement). */
export function ratesMeasured(g: ConsumerGroupResult): boolean {
  return g.fetches > 0 && g.activeSec > 0;
}

/** Medians over repetitions of a group's records/s and MB/s, over those that fetched; null where none did, shown as '-', never as 0. */
export function measuredRates(groups: readonly ConsumerGroupResult[]): { recordsPerSec: number | null; mbPerSec: number | null } {
  const fetched = groups.filter(ratesMeasured);
  return { recordsPerSec: median(fetched.map((g) => g.recordsPerSec)), mbPerSec: median(fetched.map((g) => g.mbPerSec)) };
}

export interface CatchUp {
  sec: number;
  bytes: number;
  mbPerSec: number;
  brokerCpuMs: number | null;
  /** brokerCpuMs per 10^9 bytes served. */
  brokerCpuMsPerGB: number | null;
  /**
   * CPU of the harness process (the consumers' client, the producers and the probes) over the
   * catch-up, in % of one core: near 100 % the client, not the broker, bounds the MB/s.
   */
  clientCpuPct: number;
}
