// What bench-broker reads from the leader around each measured run: it waits until the
// previous run's backlog is replicated (so one run's followers catching up is not billed to
// the next), and snapshots the leader's event-loop delay, segment rolls and flush times so a
// tail stall can be matched to its cause. Also: where in a run the slowest requests finished.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
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

/** The page cache's dirty and under-writeback KiB now (/proc/vmstat nr_dirty + nr_writeback, 4 KiB pages); null where there is no /proc/vmstat. */
export function dirtyKiB(): number | null {
  let text: string;
  try {
    text = readFileSync('/proc/vmstat', 'utf8');
  } catch {
    return null;
  }
  const pages = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return (pages('nr_dirty') + pages('nr_writeback')) * 4;
}

/**
 * Writes back the dirty pages of the filesystem holding `dir` (`sync -f`, syncfs(2)) and returns
 * the milliseconds it took. Without it, earlier runs' data (GBs at these rates) crosses the
 * kernel's background threshold (vm.dirty_background_ratio) and its writeback competes with
 * later runs for the cores: the rows would then measure their order in the run.
 */
export async function writeBack(dir: string): Promise<number> {
  const t0 = Date.now();
  const r = await execa('sync', ['-f', dir], { reject: false, timeout: 120_000 });
  if (r.exitCode !== 0) throw new Error(`bench-broker: sync -f ${dir} exited with ${r.exitCode ?? r.signal}: ${String(r.stderr || r.shortMessage).trim()}`);
  return Date.now() - t0;
}

/**
 * Writes back and drops from the page cache every file of a finished run's partition
 * directories (GNU dd's idiom: `dd of=F oflag=nocache conv=notrunc,fdatasync count=0`, i.e.
 * fdatasync then posix_fadvise DONTNEED; nothing is written to the file). No run reads them
 * again, and the next run's writes then reuse those pages. It matters on a VM whose freed memory
 * goes back to its host (virtio-balloon free page reporting, as on this lab's machine): a page
 * the guest has not used lately costs ~15-25 µs to fault in there (a 1 GiB write: 0.2 s on
 * recycled pages, 1-3.4 s on fresh ones), so a broker whose page cache only grows paid that for every page it wrote from its ~2nd GB on
 * (CPU per request 67 -> 160 µs) while the null server writes nothing. Missing directories (a
 * broker without that replica) are skipped. Returns the milliseconds it took.
 */
export async function dropFromPageCache(dirs: string[]): Promise<number> {
  const t0 = Date.now();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      const r = await execa('dd', [`of=${file}`, 'oflag=nocache', 'conv=notrunc,fdatasync', 'count=0', 'status=none'], { reject: false, timeout: 120_000 });
      // A file the broker removed meanwhile (a deleted segment) has nothing left to drop.
      if (r.exitCode !== 0 && existsSync(file)) throw new Error(`bench-broker: dropping ${file} from the page cache: dd exited with ${r.exitCode ?? r.signal}: ${String(r.stderr || r.shortMessage).trim()}`);
    }
  }
  return Date.now() - t0;
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
