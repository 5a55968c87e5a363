// The workload's consumer groups (workload.consumers) while the producers write: a group tails
// every partition through the driver, one fetch loop per assigned partition (ClusterClient.tail)
// or `count` members of a consumer group that the group coordinator assigns the partitions to
// (ClusterClient.groupMember). Per group: records and bytes
// consumed, fetch latency and end-to-end latency (the ledger's send time to the fetch answer, one
// host clock) as µs HdrHistograms, lag (high watermark minus position) per second, and Jepsen's
// poll checks on what was consumed: offsets that go back (non-monotonic), acknowledged offsets
// skipped over, records consumed that were never acknowledged by the end of the load.
import { newLatencyHistogram, summarizeLatency, type LatencySummary } from '../../engine/common/latency.ts';
import { median } from '../../engine/common/stats.ts';
import type { ClusterClient, TailFetch } from '../drivers/types.ts';
import { ackedOffsetOf, type AckLedger } from './ledger.ts';
import { startText, type ConsumerSpec } from './consumer-spec.ts';

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

interface PartitionState {
  partition: number;
  /** Next offset expected (-1: none consumed yet). */
  next: number;
  /** High watermark minus the next offset after the last answer, and minus the position that answer was asked from. */
  lag: number;
  lagAsked: number;
  answered: boolean;
}

interface Group {
  spec: ConsumerSpec;
  startMs: number | null;
  parts: PartitionState[];
  fetchUs: ReturnType<typeof newLatencyHistogram>;
  e2eUs: ReturnType<typeof newLatencyHistogram>;
  result: ConsumerGroupResult;
  consumed: Array<{ partition: number; sequence: number; records: number }>;
  served: Array<{ partition: number; from: number; to: number }>;
  /** Brokers' CPU ms at the group's start; the catch-up, once reached (its CPU read pending). */
  cpuAtStart: number | null;
  clientCpuAtStart: NodeJS.CpuUsage | null;
  catchUp: Promise<CatchUp> | null;
}

export class ConsumerGroups {
  private readonly runs: Array<Promise<void>> = [];
  private readonly stop = new AbortController();
  private readonly groups: Group[] = [];
  /** Set once the load's clock started (before any group starts). */
  private loadStartMs = 0;

  constructor(
    private readonly client: ClusterClient,
    specs: ConsumerSpec[],
    private readonly o: {
      topic: string;
      partitions: number[];
      ledger: AckLedger;
      /**
       * When the load's clock started (the driver's onLoadStart: after its connections opened, so
       * `startAt` and the per-second lag share the probes' and the load's time axis).
       */
      loadStarted: Promise<number>;
      signal: AbortSignal;
      beforeGroupStart?: (name: string) => Promise<void>;
      /** The brokers' CPU ms so far (host processes), null where it cannot be read. */
      brokerCpuMs?: () => Promise<number | null>;
    },
  ) {
    if (specs.length > 0 && !client.tail) throw new Error(`workload.consumers: the ${client.driver} driver has no consumer (use workload.driver: kafka)`);
    if (specs.some((x) => x.membership === 'group') && !client.groupMember) throw new Error(`workload.consumers: the ${client.driver} driver has no group member (membership: group; use workload.driver: kafka)`);
    for (const spec of specs) {
      const parts = o.partitions.map((p) => ({ partition: p, next: -1, lag: 0, lagAsked: 0, answered: false }));
      this.groups.push({
        spec,
        startMs: null,
        cpuAtStart: null,
        clientCpuAtStart: null,
        catchUp: null,
        parts,
        fetchUs: newLatencyHistogram(),
        e2eUs: newLatencyHistogram(),
        consumed: [],
        served: [],
        result: {
          name: spec.name,
          start: startText(spec.start),
          membership: spec.membership,
          ...(spec.membership === 'group' ? { members: Array.from({ length: spec.count }, () => ({ partitions: [] })), joins: 0 } : {}),
          partitions: o.partitions,
          startAtSec: spec.startAt,
          activeSec: 0,
          records: 0,
          bytes: 0,
          recordsPerSec: 0,
          mbPerSec: 0,
          fetches: 0,
          fetchLatencyUs: summarizeLatency(newLatencyHistogram()),
          endToEndUs: summarizeLatency(newLatencyHistogram()),
          lag: { max: 0, end: 0 },
          perSecond: [],
          checks: { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 },
          offsetResets: 0,
          errors: [],
        },
      });
    }
    const abort = () => this.stop.abort();
    o.signal.addEventListener('abort', abort, { once: true });
    for (const g of this.groups) this.runs.push(this.runGroup(g));
  }

  private async runGroup(g: Group): Promise<void> {
    const loadStartMs = await this.o.loadStarted;
    this.loadStartMs = loadStartMs;
    const wait = g.spec.startAt * 1000 - (Date.now() - loadStartMs);
    if (wait > 0) await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, wait);
      this.stop.signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
    if (this.stop.signal.aborted) return;
    if (this.o.beforeGroupStart) {
      try {
        await this.o.beforeGroupStart(g.spec.name);
      } catch (err) {
        g.result.errors.push(`before the group started: ${(err as Error).message}`);
        return;
      }
    }
    if (g.spec.start.from !== 'latest') g.cpuAtStart = (await this.o.brokerCpuMs?.()) ?? null;
    g.clientCpuAtStart = process.cpuUsage();
    g.startMs = Date.now();
    if (g.spec.membership === 'group') return this.runMembers(g);
    // One consumer (a fetch loop) per partition.
    await Promise.all(
      g.parts.map((state) =>
        this.client
          .tail!({
            topic: this.o.topic,
            partition: state.partition,
            start: g.spec.start,
            fetch: { maxBytes: g.spec['fetch.max.bytes'], minBytes: g.spec['fetch.min.bytes'], maxWaitMs: g.spec['fetch.max.wait.ms'] },
            signal: this.stop.signal,
            onFetch: (f) => this.onFetch(g, state, f),
            onOffsetReset: () => g.result.offsetResets++,
          })
          .catch((err: Error) => {
            if (!this.stop.signal.aborted) g.result.errors.push(`${this.o.topic}-${state.partition}: ${err.message}`);
          }),
      ),
    );
  }

  /** membership group: `count` members of one new consumer group; the coordinator assigns them the partitions. */
  private async runMembers(g: Group): Promise<void> {
    const groupId = `durolab-${g.spec.name}-${this.loadStartMs}`;
    const byPartition = new Map(g.parts.map((p) => [p.partition, p]));
    const r = g.result;
    await Promise.all(
      Array.from({ length: g.spec.count }, (_, m) => {
        // Poll order is a member's own within one generation of the group: at a rebalance every
        // member starts its partitions again from the group's committed offsets (at-least-once:
        // what was consumed after the last commit is redelivered, counted, not an anomaly).
        const positions = new Map<number, number>();
        return this.client
          .groupMember!({
            topic: this.o.topic,
            groupId,
            memberName: `${groupId}-${m + 1}`,
            start: g.spec.start.from === 'earliest' ? 'earliest' : 'latest',
            fetch: { maxBytes: g.spec['fetch.max.bytes'], minBytes: g.spec['fetch.min.bytes'], maxWaitMs: g.spec['fetch.max.wait.ms'] },
            signal: this.stop.signal,
            onFetch: (partition, f) => {
              const state = byPartition.get(partition);
              if (state) this.onFetch(g, state, f, positions);
            },
            onAssignment: (partitions) => {
              positions.clear();
              r.members![m] = { partitions: [...partitions].sort((a, b) => a - b) };
              r.joins!++;
            },
          })
          .catch((err: Error) => {
            if (!this.stop.signal.aborted) r.errors.push(`member ${m + 1} of group ${groupId}: ${err.message}`);
          });
      }),
    );
  }

  /** `positions`: a group member's own next offset per partition (membership group); else the partition's consumer's. */
  private onFetch(g: Group, state: PartitionState, f: TailFetch, positions?: Map<number, number>): void {
    const r = g.result;
    let next = positions ? (positions.get(state.partition) ?? -1) : state.next;
    r.fetches++;
    g.fetchUs.recordValue(Math.max(1, f.latencyUs));
    r.checks.corrupt += f.corrupt;
    let records = 0;
    const pid = this.o.ledger.producerIdOf(state.partition);
    for (const b of f.batches) {
      const from = Math.max(b.baseOffset, f.position);
      if (next >= 0 && from < next) r.checks.nonMonotonic++;
      const n = b.lastOffset - from + 1;
      records += n;
      if (n > 0) g.served.push({ partition: state.partition, from, to: b.lastOffset });
      if (b.producerId === pid) {
        const seq = b.baseSequence + (from - b.baseOffset);
        g.consumed.push({ partition: state.partition, sequence: seq, records: n });
        const sent = this.o.ledger.sentOf(state.partition, seq);
        if (sent) g.e2eUs.recordValueWithCount(Math.max(1, Math.round((f.atMs - sent.sentMs) * 1000)), n);
      }
      next = b.lastOffset + 1;
    }
    positions?.set(state.partition, next);
    if (next >= 0) state.next = next;
    r.records += records;
    r.bytes += f.bytes;
    // The lag when the fetch was asked (how far behind the group was), and what is left after it.
    state.lagAsked = Math.max(0, f.highWatermark - f.position);
    state.lag = Math.max(0, f.highWatermark - (state.next >= 0 ? state.next : f.position));
    state.answered = true;
    const lag = g.parts.reduce((a, p) => a + p.lag, 0);
    if (lag === 0 && g.catchUp === null && g.spec.start.from !== 'latest' && g.startMs !== null && g.parts.every((p) => p.answered)) g.catchUp = this.caughtUp(g, f.atMs);
    r.lag.max = Math.max(r.lag.max, g.parts.reduce((a, p) => a + p.lagAsked, 0));
    const t = Math.floor((f.atMs - this.loadStartMs) / 1000);
    let sec = r.perSecond[r.perSecond.length - 1];
    if (!sec || sec.t !== t) r.perSecond.push((sec = { t, records: 0, lag }));
    sec.records += records;
    sec.lag = lag;
  }

  private async caughtUp(g: Group, atMs: number): Promise<CatchUp> {
    const sec = Math.max(0.001, (atMs - g.startMs!) / 1000);
    const bytes = g.result.bytes;
    const client = process.cpuUsage(g.clientCpuAtStart ?? undefined);
    const clientCpuPct = ((client.user + client.system) / 1000 / (sec * 1000)) * 100;
    const now = g.cpuAtStart === null ? null : ((await this.o.brokerCpuMs?.()) ?? null);
    const cpu = now === null || g.cpuAtStart === null ? null : now - g.cpuAtStart;
    return { sec, bytes, mbPerSec: bytes / 1e6 / sec, brokerCpuMs: cpu, brokerCpuMsPerGB: cpu === null || bytes === 0 ? null : cpu / (bytes / 1e9), clientCpuPct };
  }

  /** Stops every consumer and returns each group's figures, with the poll checks against the ledger. */
  async finish(): Promise<ConsumerGroupResult[]> {
    const endMs = Date.now();
    this.stop.abort();
    await Promise.all(this.runs);
    const catchUps = await Promise.all(this.groups.map((g) => g.catchUp));
    return this.groups.map((g, i) => {
      const r = g.result;
      if (g.spec.start.from !== 'latest') r.catchUp = catchUps[i];
      r.activeSec = g.startMs === null ? 0 : (endMs - g.startMs) / 1000;
      r.recordsPerSec = r.activeSec > 0 ? r.records / r.activeSec : 0;
      r.mbPerSec = r.activeSec > 0 ? r.bytes / r.activeSec / 1e6 : 0;
      r.fetchLatencyUs = summarizeLatency(g.fetchUs);
      r.endToEndUs = summarizeLatency(g.e2eUs);
      r.lag.end = g.parts.reduce((a, p) => a + p.lag, 0);
      r.checks.neverAcked = g.consumed.filter((c) => !this.o.ledger.sentOf(c.partition, c.sequence)?.acked).reduce((a, c) => a + c.records, 0);
      r.checks.skipped = skippedAcked(g.served, this.o.ledger);
      if (g.spec.membership === 'group') r.redelivered = servedAgain(g.served);
      return r;
    });
  }
}

/**
 * Acknowledged records a consumer passed over: on each partition, every acknowledged offset
 * between the lowest and the highest offset it was served that it was not served. (By offset,
 * not by sequence: batches of several producer connections land in the log out of send order.)
 */
function skippedAcked(consumed: Array<{ partition: number; from: number; to: number }>, ledger: AckLedger): number {
  let skipped = 0;
  for (const p of ledger.partitions()) {
    const runs = consumed.filter((c) => c.partition === p);
    if (runs.length === 0) continue;
    const seen = new Set<number>();
    for (const c of runs) for (let o = c.from; o <= c.to; o++) seen.add(o);
    const lo = Math.min(...runs.map((c) => c.from));
    const hi = Math.max(...runs.map((c) => c.to));
    for (const b of ledger.batches(p)) {
      if (b.status !== 'acked') continue;
      for (let i = 0; i < b.records; i++) {
        // A record acknowledged without an offset (or not acknowledged) has no offset to have been skipped at.
        const o = ackedOffsetOf(b, i);
        if (o !== null && o >= lo && o <= hi && !seen.has(o)) skipped++;
      }
    }
  }
  return skipped;
}

/** Records served more than once over the group (by offset, per partition). */
function servedAgain(served: Array<{ partition: number; from: number; to: number }>): number {
  let again = 0;
  const byPartition = new Map<number, Array<{ from: number; to: number }>>();
  for (const c of served) (byPartition.get(c.partition) ?? byPartition.set(c.partition, []).get(c.partition)!).push(c);
  for (const runs of byPartition.values()) {
    runs.sort((a, b) => a.from - b.from);
    let reach = -1;
    for (const c of runs) {
      if (c.from <= reach) again += Math.min(c.to, reach) - c.from + 1;
      reach = Math.max(reach, c.to);
    }
  }
  return again;
}
