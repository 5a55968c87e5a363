// The workload's consumer groups (workload.consumers) while the producers write: a group tails
// every partition through the driver, one fetch loop per assigned partition (ClusterClient.tail)
// or `count` members of a consumer group that the group coordinator assigns the partitions to
// (ClusterClient.groupMember). Per group: records and bytes
// consumed, fetch latency and end-to-end latency (the ledger's send time to the fetch answer, one
// host clock) as µs HdrHistograms, lag (high watermark minus position) per second, and Jepsen's
// poll checks on what was consumed: offsets that go back (non-monotonic), acknowledged offsets
// skipped over, records consumed that were never acknowledged by the end of the load.
import { newLatencyHistogram, summarizeLatency } from '../../engine/common/latency.ts';
import type { CatchUp, ConsumerGroupResult } from '../results/consumer-groups.ts';
import type { ClusterClient, TailFetch } from '../drivers/types.ts';
import { ackedOffsetOf, type AckLedger } from '../history/ledger.ts';
import { startText, type ConsumerSpec } from '../model/consumer-spec.ts';


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
        // A Fetch asked before the member's current assignment belongs to its previous generation:
        // its answer may arrive after the rebalance, from an offset before the new generation's own
        // position. Its records count (as consumed, redelivered if so); its order is not the new generation's.
        let assignedAtMs = -Infinity;
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
              const askedAtMs = f.atMs - f.latencyUs / 1000;
              if (state) this.onFetch(g, state, f, askedAtMs < assignedAtMs ? new Map<number, number>() : positions);
            },
            onAssignment: (partitions) => {
              positions.clear();
              assignedAtMs = Date.now();
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
