// What the brokers did during a cell: flushes and flush time from the client driver's broker
// metrics, segment and index files counted on disk where the data dirs are on this host (the
// segment-roll incident is about files, not counters), else the brokers' own segment counts
// (a VM's data dir is inside its guest), and the device's flush count beside the brokers'.
import { setTimeout as delay } from 'node:timers/promises';
import type { BrokerSummary } from '../results/types.ts';
import type { BrokerMetrics, ClusterClient, PartitionFigures } from '../drivers/types.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { TargetCapabilities } from '../targets/registry.ts';
import { countLogFiles, type LogFileNames } from '../targets/log-files.ts';

/**
 * The cell's broker figures from what the brokers report and, where the data dirs are on this
 * host, from their files (`logFiles`: the system's names). A figure no broker reports and no
 * file gives is absent, never 0. `notAnswered`: brokers that gave no figures, named in the
 * summary since its sums are then of the others only.
 */
export function summarizeBrokers(all: BrokerMetrics[], dataDirs: string[], logFiles?: LogFileNames, notAnswered: readonly number[] = []): BrokerSummary {
  let flushes: number | undefined;
  let rolls: number | undefined;
  // Undefined until some broker reports a leader replica: no answer is not 0 bytes.
  let leaderBytes: number | undefined;
  let busiest: PartitionFigures | null = null;
  let reportedSegments: number | undefined;
  for (const { partitions } of all) {
    for (const p of partitions) {
      if (p.flushes !== undefined) flushes = (flushes ?? 0) + p.flushes;
      if (p.rolls !== undefined) rolls = (rolls ?? 0) + p.rolls;
      if (p.segments !== undefined) reportedSegments = (reportedSegments ?? 0) + p.segments;
      if (p.role === 'leader') leaderBytes = (leaderBytes ?? 0) + p.bytes;
      if (p.flushTimeUs && (!busiest || (p.flushes ?? 0) > (busiest.flushes ?? 0))) busiest = p;
    }
  }
  const files = logFiles && dataDirs.length ? countLogFiles(dataDirs, logFiles) : null;
  const segments = files ? { segments: files.segments, ...(logFiles!.index ? { indexFiles: files.indexFiles } : {}), segmentsFrom: 'host-files' as const } : reportedSegments !== undefined ? { segments: reportedSegments, segmentsFrom: 'broker' as const } : {};
  // The leaders' own count, else the .log files counted on this host, else the leaders' 0; absent when neither was read.
  const bytes = leaderBytes || (files ? files.logBytes : leaderBytes);
  return {
    ...(flushes !== undefined ? { flushes } : {}),
    ...(busiest?.flushTimeUs ? { flushTimeUs: { ...busiest.flushTimeUs } } : {}),
    ...segments,
    ...(bytes !== undefined ? { bytes } : {}),
    ...(rolls !== undefined ? { rolls } : {}),
    ...(notAnswered.length ? { notAnswered: [...notAnswered].sort((a, b) => a - b) } : {}),
  };
}

/** Broker figures through the client driver; segment files are counted where the data dirs are on this host. */
export async function brokerFigures(client: ClusterClient, cluster: RunningCluster, caps: TargetCapabilities, log: (line: string) => void): Promise<BrokerSummary> {
  const { brokers, down } = await client.brokerMetrics();
  for (const d of down) log(`broker ${d.brokerId}: no figures (${d.reason})`);
  return summarizeBrokers(brokers, caps.dataOnHost ? cluster.brokers.map((b) => b.dataDir) : [], caps.logFiles, down.map((d) => d.brokerId));
}

/** One read of the broker figures: when it was asked for and when the answer came. */
export interface FiguresReading {
  figures: BrokerSummary;
  startedMs: number;
  answeredMs: number;
  /** What the read logged (brokers without figures), said once when this reading is used. */
  notes: string[];
}

/** How long the fault waits for a fresh read at its moment before it takes the watch's latest, in ms. */
export const FRESH_FIGURES_WITHIN_MS = 2000;

export interface WatchPace {
  minPauseMs: number;
  factor: number;
}

/** The watch during the load: a read every 1 s or more, asking at most a fifth of the time. */
export const WATCH_PACE: WatchPace = { minPauseMs: 1000, factor: 4 };

/**
 * Broker figures for a fault trial. A restarted broker's counters start at 0, so figures read
 * before the fault are the trial's only ones. Before the load, one read warms the broker's
 * figures path up (the broker compiles its latency summaries itself once it serves:
 * warmLatencySummaries): in a TCG guest a cold first read during the load held the broker's
 * event loop 2.0 s and stalled the load before the cut; warm reads take 0.13-0.4 s there,
 * milliseconds on the host. On targets that allow it (the
 * `watchFigures` capability) the watch reads during the load (WATCH_PACE), a fallback for a late
 * read at the moment. At the fault's moment a fresh read is sent and the fault waits for it up
 * to FRESH_FIGURES_WITHIN_MS: its figures hold everything up to the moment.
 */
export class BrokerFiguresWatch {
  private latest: FiguresReading | null = null;
  private lastError: string | null = null;
  private readonly stopper = new AbortController();
  private waiters: Array<() => void> = [];

  constructor(private readonly read: (log: (line: string) => void) => Promise<BrokerSummary>) {}

  /** One read; `keep` takes its figures and `settled` runs before anyone waiting for an answer is woken. */
  private async readOnce(keep: (reading: FiguresReading) => void, settled?: () => void): Promise<void> {
    const startedMs = Date.now();
    const notes: string[] = [];
    try {
      const figures = await this.read((line) => notes.push(line));
      keep({ figures, startedMs, answeredMs: Date.now(), notes });
    } catch (err) {
      this.lastError = (err as Error).message;
    } finally {
      settled?.();
      for (const w of this.waiters.splice(0)) w();
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

  /** Before the load: one read, waited for up to ms; its figures precede the load and are not kept. How long it took, or why it failed. */
  async warmUp(ms: number): Promise<{ tookMs: number } | { missing: string }> {
    const startMs = Date.now();
    let done = false;
    let ok = false;
    void this.readOnce(
      () => (ok = true),
      () => (done = true),
    );
    while (!done && Date.now() - startMs < ms) await this.nextAnswer(ms - (Date.now() - startMs));
    return ok ? { tookMs: Date.now() - startMs } : { missing: done ? (this.lastError ?? 'failed') : `no answer within ${ms} ms` };
  }

  /** During the load: one read at a time, a pause after each as long as pace says (at least minPauseMs, at least factor x the read's time). */
  start(pace: WatchPace = WATCH_PACE): void {
    void (async () => {
      while (!this.stopper.signal.aborted) {
        const startedMs = Date.now();
        await this.readOnce((r) => (this.latest = r));
        await delay(Math.max(pace.minPauseMs, pace.factor * (Date.now() - startedMs)), undefined, { signal: this.stopper.signal }).catch(() => undefined);
      }
    })();
  }

  /**
   * At the fault's moment: stops the watch and sends a fresh read; its figures when it answers
   * within freshWithinMs, else the watch's latest; the reason when there is neither.
   */
  async atFault(freshWithinMs: number = FRESH_FIGURES_WITHIN_MS): Promise<FiguresReading | { missing: string }> {
    const startMs = Date.now();
    this.stopper.abort();
    let fresh: FiguresReading | null = null;
    let freshDone = false;
    void this.readOnce(
      (r) => (fresh = r),
      () => (freshDone = true),
    );
    while (!fresh && !freshDone && Date.now() - startMs < freshWithinMs) await this.nextAnswer(freshWithinMs - (Date.now() - startMs));
    return fresh ?? this.latest ?? { missing: freshDone ? (this.lastError ?? 'the read failed') : `no answer within ${freshWithinMs} ms` };
  }

  stop(): void {
    this.stopper.abort();
  }
}
