// A follower's replication loop for one partition (Kafka's ReplicaFetcherThread, one per
// partition here): truncate by leader epoch when told to (KIP-101/279), then long-poll the
// leader from our log end offset and append what it sends. One fetcher serves one
// (leader, leader epoch); the broker replaces it when the assignment changes.
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Partition, BrokerError } from '../replication/index.ts';
import { errorFromAnswer, request } from './http-client.ts';

export interface FetcherOptions {
  partition: Partition;
  brokerId: number;
  leaderId: number;
  leaderUrl: string;
  leaderEpoch: number;
  agent: http.Agent;
  maxWaitMs: number;
  maxBytes: number;
  backoffMs: number;
  log: (msg: string) => void;
}

export interface FetcherStats {
  topic: string;
  partition: number;
  leaderId: number;
  leaderUrl: string;
  leaderEpoch: number;
  fetches: number;
  emptyFetches: number;
  bytes: number;
  records: number;
  truncations: number;
  bytesTruncated: number;
  errors: number;
  lastError: string | null;
}

const MAX_BACKOFF_MS = 2000;
const METADATA_ERRORS = new Set(['FENCED_LEADER_EPOCH', 'NOT_LEADER_OR_FOLLOWER', 'UNKNOWN_TOPIC_OR_PARTITION']);

export class FollowerFetcher {
  readonly leaderId: number;
  readonly leaderUrl: string;
  readonly leaderEpoch: number;
  private stopped = false;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();
  private lastLogMs = 0;
  private readonly s: FetcherStats;

  constructor(private readonly o: FetcherOptions) {
    this.leaderId = o.leaderId;
    this.leaderUrl = o.leaderUrl;
    this.leaderEpoch = o.leaderEpoch;
    this.s = {
      topic: o.partition.topic,
      partition: o.partition.partition,
      leaderId: o.leaderId,
      leaderUrl: o.leaderUrl,
      leaderEpoch: o.leaderEpoch,
      fetches: 0,
      emptyFetches: 0,
      bytes: 0,
      records: 0,
      truncations: 0,
      bytesTruncated: 0,
      errors: 0,
      lastError: null,
    };
  }

  get stats(): FetcherStats {
    return { ...this.s };
  }

  start(): void {
    this.done = this.run();
  }

  /** Aborts the in-flight long poll; resolves when the loop has exited (nothing appended after). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.done;
  }

  /** Still the assignment this fetcher was started for. */
  private current(): boolean {
    const p = this.o.partition;
    return !this.stopped && p.role === 'follower' && p.leaderId === this.leaderId && p.leaderEpoch === this.leaderEpoch;
  }

  private async run(): Promise<void> {
    let backoff = this.o.backoffMs;
    while (this.current()) {
      try {
        if (this.o.partition.needsTruncation) await this.truncate();
        else await this.fetchOnce();
        backoff = this.o.backoffMs;
      } catch (err) {
        if (this.stopped) return;
        this.s.errors++;
        this.s.lastError = err instanceof Error ? err.message : String(err);
        this.logRateLimited(`fetcher ${this.s.topic}-${this.s.partition} from broker ${this.leaderId} (epoch ${this.leaderEpoch}): ${this.s.lastError}`);
        // A leader that does not (yet) agree on the epoch is fixed by the next heartbeat on one
        // side or the other: retry soon. An unreachable leader backs off exponentially.
        const metadata = err instanceof BrokerError && METADATA_ERRORS.has(err.code);
        try {
          await sleep(metadata ? this.o.backoffMs : backoff, undefined, { signal: this.abort.signal });
        } catch {
          return; // stopped while backing off
        }
        if (!metadata) backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private partitionPath(): string {
    return `${this.leaderUrl}/v1/topics/${encodeURIComponent(this.s.topic)}/partitions/${this.s.partition}`;
  }

  private async truncate(): Promise<void> {
    const p = this.o.partition;
    const epoch = p.latestLogEpoch;
    const url = `${this.leaderUrl}/v1/replication/topics/${encodeURIComponent(this.s.topic)}/partitions/${this.s.partition}/epoch-end-offset?epoch=${epoch}`;
    const a = await request(url, { agent: this.o.agent, signal: this.abort.signal, timeoutMs: 10_000 });
    if (!this.current()) return;
    if (a.status !== 200) throw errorFromAnswer(url, a);
    const answer = JSON.parse(a.body.toString('utf8')) as { leaderEpoch: number; endOffset: number };
    const r = p.truncateByLeaderEpoch(answer);
    this.s.truncations++;
    this.s.bytesTruncated += r.bytesTruncated;
    if (r.bytesTruncated > 0) {
      this.o.log(
        `${this.s.topic}-${this.s.partition}: truncated to offset ${r.truncatedTo} (${r.bytesTruncated} bytes) after asking leader ${this.leaderId} for the end of epoch ${epoch}: ${JSON.stringify(answer)}`,
      );
    }
  }

  private async fetchOnce(): Promise<void> {
    const p = this.o.partition;
    const offset = p.logEndOffset;
    const url =
      `${this.partitionPath()}/records?replicaId=${this.o.brokerId}&leaderEpoch=${this.leaderEpoch}` +
      `&offset=${offset}&maxBytes=${this.o.maxBytes}&maxWaitMs=${this.o.maxWaitMs}`;
    const a = await request(url, { agent: this.o.agent, signal: this.abort.signal, timeoutMs: this.o.maxWaitMs + 10_000 });
    // The answer may be from before a role change or a truncation: appending it then would
    // put records from an old leader into the log.
    if (!this.current() || p.needsTruncation || p.logEndOffset !== offset) return;
    this.s.fetches++;
    if (a.status !== 200) {
      const err = errorFromAnswer(url, a);
      const leaderLeo = err.details.logEndOffset;
      if (err.code === 'OFFSET_OUT_OF_RANGE' && typeof leaderLeo === 'number' && leaderLeo < offset) {
        // Our log runs past the leader's end (which epoch truncation should have prevented, e.g.
        // after an unclean election): that tail was never committed, so cut it as Kafka does.
        const r = p.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: leaderLeo });
        this.s.truncations++;
        this.s.bytesTruncated += r.bytesTruncated;
        this.o.log(`${this.s.topic}-${this.s.partition}: fetch offset ${offset} is past leader ${this.leaderId}'s end ${leaderLeo}: truncated to ${r.truncatedTo}`);
        return;
      }
      throw err;
    }
    const hw = Number(a.headers['x-high-watermark']);
    if (!Number.isSafeInteger(hw)) throw new BrokerError('INVALID_REQUEST', `${url}: answer has no x-high-watermark header`);
    if (a.body.length === 0) this.s.emptyFetches++;
    const r = p.appendAsFollower(a.body, hw);
    this.s.bytes += a.body.length;
    this.s.records += r.records;
  }

  private logRateLimited(msg: string): void {
    const now = Date.now();
    if (now - this.lastLogMs < 5000) return;
    this.lastLogMs = now;
    this.o.log(msg);
  }
}
