// What bench-broker reads from the leader around each measured run: it waits until the
// previous run's backlog is replicated (so one run's followers catching up is not billed to
// the next), and snapshots the leader's event-loop delay, segment rolls and flush times so a
// tail stall can be matched to its cause. Also: where in a run the slowest requests finished.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventLoopDelaySummary } from './event-loop-delay.ts';
import { requestJson } from './http-client.ts';

interface LeaderPartitionView {
  topic: string;
  partition: number;
  role: string;
  hw: number;
  leo: number;
  purgatorySize: number;
  rolls: number;
  rollTimeUs: { max: number };
  flushes: number;
  flushTimeUs: { max: number };
  followers: Array<{ id: number; leo: number; inIsr: boolean }>;
}

interface MetricsView {
  eventLoopDelay: EventLoopDelaySummary;
  partitions: LeaderPartitionView[];
}

export interface LeaderSnapshot {
  eventLoopDelay: EventLoopDelaySummary;
  leo: number;
  hw: number;
  rolls: number;
  /** The longest a roll held the leader's event loop so far (sealing and creating, no sync), µs. */
  rollMaxUs: number;
  flushes: number;
  followerLeos: number[];
}

async function partitionOf(url: string, topic: string, partition: number, resetEventLoop: boolean): Promise<{ m: MetricsView; p: LeaderPartitionView }> {
  const m = await requestJson<MetricsView>(`${url}/v1/metrics${resetEventLoop ? '?resetEventLoop=1' : ''}`, { timeoutMs: 10_000 });
  const p = m.partitions.find((x) => x.topic === topic && x.partition === partition);
  if (!p) throw new Error(`bench-broker: ${url}/v1/metrics has no partition ${topic}-${partition}`);
  return { m, p };
}

/** The leader's figures now; `resetEventLoop` starts a new event-loop delay window. */
export async function leaderSnapshot(url: string, topic: string, partition: number, resetEventLoop = false): Promise<LeaderSnapshot> {
  const { m, p } = await partitionOf(url, topic, partition, resetEventLoop);
  return { eventLoopDelay: m.eventLoopDelay, leo: p.leo, hw: p.hw, rolls: p.rolls, rollMaxUs: p.rollTimeUs.max, flushes: p.flushes, followerLeos: p.followers.map((f) => f.leo) };
}

/**
 * Waits until the leader's HW and every follower's LEO equal the leader's LEO and nothing is
 * parked in the purgatory: the state a run should start from. Returns the milliseconds it took.
 */
export async function waitReplicated(url: string, topic: string, partition: number, timeoutMs = 120_000): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const { p } = await partitionOf(url, topic, partition, false);
    if (p.hw === p.leo && p.purgatorySize === 0 && p.followers.every((f) => f.leo === p.leo)) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) {
      throw new Error(`bench-broker: ${topic}-${partition} on ${url} not replicated after ${timeoutMs} ms (LEO ${p.leo}, HW ${p.hw}, follower LEOs ${p.followers.map((f) => f.leo).join(', ')})`);
    }
    await sleep(50);
  }
}

/** Completion time (ms since the run started) and latency (µs) of each answer of one run. */
export class ResponseTimeline {
  private t = new Float64Array(1 << 16);
  private lat = new Float64Array(1 << 16);
  private n = 0;

  add(atMs: number, latencyUs: number): void {
    if (this.n === this.t.length) {
      const t = new Float64Array(this.n * 2);
      t.set(this.t);
      this.t = t;
      const l = new Float64Array(this.n * 2);
      l.set(this.lat);
      this.lat = l;
    }
    this.t[this.n] = atMs;
    this.lat[this.n] = latencyUs;
    this.n++;
  }

  /**
   * The answers slower than `thresholdUs`: how many, when the first and last of them finished
   * (ms into the run) and the slowest. One stall shows as many slow answers within a short span.
   */
  slow(thresholdUs: number): { count: number; firstAtMs: number; lastAtMs: number; worstUs: number; worstAtMs: number } {
    let count = 0;
    let first = -1;
    let last = -1;
    let worst = 0;
    let worstAt = -1;
    for (let i = 0; i < this.n; i++) {
      const l = this.lat[i];
      if (l <= thresholdUs) continue;
      count++;
      const at = this.t[i];
      if (first < 0) first = at;
      last = at;
      if (l > worst) {
        worst = l;
        worstAt = at;
      }
    }
    const r = (x: number): number => Math.round(x);
    return { count, firstAtMs: r(first), lastAtMs: r(last), worstUs: r(worst), worstAtMs: r(worstAt) };
  }
}
