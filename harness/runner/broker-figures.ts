// What the brokers did during a cell: flushes and flush time from the client driver's broker
// metrics, segment and index files counted on disk where the data dirs are on this host (the
// segment-roll incident is about files, not counters), else the brokers' own segment counts
// (a VM's data dir is inside its guest), and the device's flush count beside the brokers'.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { BrokerSummary } from '../results/types.ts';
import type { BrokerMetrics, ClusterClient, PartitionFigures } from '../drivers/types.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { TargetCapabilities } from '../targets/registry.ts';

export function summarizeBrokers(all: BrokerMetrics[], dataDirs: string[]): BrokerSummary {
  let flushes = 0;
  let bytes = 0;
  let rolls = 0;
  let busiest: PartitionFigures | null = null;
  let reportedSegments = 0;
  let segmentsReported = false;
  for (const { partitions } of all) {
    for (const p of partitions) {
      flushes += p.flushes;
      rolls += p.rolls;
      if (p.segments !== undefined) {
        reportedSegments += p.segments;
        segmentsReported = true;
      }
      if (p.role === 'leader') bytes += p.bytes;
      if (!busiest || p.flushes > busiest.flushes) busiest = p;
    }
  }
  const files = countLogFiles(dataDirs);
  const fromBroker = dataDirs.length === 0 && segmentsReported;
  return {
    flushes,
    flushTimeUs: {
      p50: busiest?.flushTimeUs.p50 ?? 0,
      p99: busiest?.flushTimeUs.p99 ?? 0,
      p999: busiest?.flushTimeUs.p999 ?? 0,
      max: busiest?.flushTimeUs.max ?? 0,
    },
    segments: fromBroker ? reportedSegments : files.segments,
    ...(fromBroker ? {} : { indexFiles: files.indexFiles }),
    bytes: bytes || files.logBytes,
    rolls,
    ...(dataDirs.length ? { segmentsFrom: 'host-files' as const } : fromBroker ? { segmentsFrom: 'broker' as const } : {}),
  };
}

export function countLogFiles(dataDirs: string[]): { segments: number; indexFiles: number; logBytes: number } {
  let segments = 0;
  let indexFiles = 0;
  let logBytes = 0;
  const walk = (dir: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(dir, name);
      if (/^\d{20}\.log$/.test(name)) {
        segments++;
        logBytes += statSync(full).size;
      } else if (/^\d{20}\.(index|timeindex)$/.test(name)) {
        indexFiles++;
      } else if (depth < 2) {
        try {
          if (statSync(full).isDirectory()) walk(full, depth + 1);
        } catch {
          // vanished while walking
        }
      }
    }
  };
  for (const d of dataDirs) walk(d, 0);
  return { segments, indexFiles, logBytes };
}

/** Broker figures through the client driver; segment files are counted where the data dirs are on this host. */
export async function brokerFigures(client: ClusterClient, cluster: RunningCluster, caps: TargetCapabilities, log: (line: string) => void): Promise<BrokerSummary> {
  const { brokers, down } = await client.brokerMetrics();
  for (const d of down) log(`broker ${d.brokerId}: no figures (${d.reason})`);
  return summarizeBrokers(brokers, caps.dataOnHost ? cluster.brokers.map((b) => b.dataDir) : []);
}

/** One read of the broker figures: when it was asked for and when the answer came. */
export interface FiguresReading {
  figures: BrokerSummary;
  startedMs: number;
  answeredMs: number;
  /** What the read logged (brokers without figures), said once when this reading is used. */
  notes: string[];
}

/** How the fault takes broker figures (the target's `figuresAtFault` capability), and how long it may wait, in ms. */
export interface FaultFiguresWait {
  /** fresh: a read at the moment, waited for up to freshWithinMs, else the latest read of the load; latest: the latest read of the load at once. */
  mode: 'fresh' | 'latest';
  freshWithinMs: number;
  /** With no read answered yet, how long to wait for the first. */
  waitMs: number;
}

export interface WatchPace {
  minPauseMs: number;
  factor: number;
}

/** latest: its reads are the figures (every 0.25 s or more, asking at most half the time); fresh: a fallback (every 1 s or more, at most a fifth of the time). */
export const WATCH_PACE: Record<FaultFiguresWait['mode'], WatchPace> = { latest: { minPauseMs: 250, factor: 1 }, fresh: { minPauseMs: 1000, factor: 4 } };

/**
 * Broker figures for a fault trial. A restarted broker's counters start at 0, so figures read
 * before the fault are the trial's only ones. The watch reads them during the load, one read at
 * a time with a pause after each (WATCH_PACE). At the fault's moment, on a target whose brokers answer quickly a fresh read is
 * sent and the fault waits for it (its figures hold everything up to the moment); on one whose
 * brokers answer slowly (a TCG guest under load answers only as fast as its produce p99, 0.45-1.2
 * s idle, past 2 s on a loaded host) the latest read is taken at once, since waiting would move
 * the cut away from its moment and leave a quiet stretch before it that marks the trial suspect.
 */
export class BrokerFiguresWatch {
  private latest: FiguresReading | null = null;
  private lastError: string | null = null;
  private readonly stopper = new AbortController();
  private waiters: Array<() => void> = [];
  /** Reads sent and not yet answered. */
  private pending = 0;

  /**
   * pace: the pause after a read, as (at least minPauseMs, at least factor x the read's time):
   * WATCH_PACE[mode] in a trial; the fresh mode's watch is only a fallback and reads rarely.
   */
  constructor(
    private readonly read: (log: (line: string) => void) => Promise<BrokerSummary>,
    private readonly pace: WatchPace = WATCH_PACE.latest,
  ) {
    void this.loop();
  }

  /** One read; `keep` takes its figures and `settled` runs before anyone waiting for an answer is woken. */
  private async readOnce(keep: (reading: FiguresReading) => void, settled?: () => void): Promise<void> {
    const startedMs = Date.now();
    const notes: string[] = [];
    this.pending++;
    try {
      const figures = await this.read((line) => notes.push(line));
      keep({ figures, startedMs, answeredMs: Date.now(), notes });
    } catch (err) {
      this.lastError = (err as Error).message;
    } finally {
      this.pending--;
      settled?.();
      for (const w of this.waiters.splice(0)) w();
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopper.signal.aborted) {
      const startedMs = Date.now();
      await this.readOnce((r) => (this.latest = r));
      await delay(Math.max(this.pace.minPauseMs, this.pace.factor * (Date.now() - startedMs)), undefined, { signal: this.stopper.signal }).catch(() => undefined);
    }
  }

  /** Resolves at the next answer (or failure) of any read, or after ms. */
  private nextAnswer(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * At the fault's moment: stops the watch; in mode latest the latest read at once, in mode fresh
   * a fresh read when it answers within freshWithinMs, else the latest; with no read answered
   * yet, the first to answer within waitMs; the reason when none does.
   */
  async atFault(wait: FaultFiguresWait): Promise<FiguresReading | { missing: string }> {
    const startMs = Date.now();
    const left = (ms: number) => ms - (Date.now() - startMs);
    this.stopper.abort();
    if (wait.mode === 'latest' && this.latest) return this.latest;
    let fresh: FiguresReading | null = null;
    let freshDone = false;
    void this.readOnce(
      (r) => (fresh = r),
      () => (freshDone = true),
    );
    while (wait.mode === 'fresh' && !fresh && !freshDone && left(wait.freshWithinMs) > 0) await this.nextAnswer(left(wait.freshWithinMs));
    while (!fresh && !this.latest && this.pending > 0 && left(wait.waitMs) > 0) await this.nextAnswer(left(wait.waitMs));
    return fresh ?? this.latest ?? { missing: this.lastError ?? `no answer within ${wait.waitMs} ms` };
  }

  stop(): void {
    this.stopper.abort();
  }
}
