// What the brokers did during a cell: flushes and flush time from the client driver's broker
// metrics, segment and index files counted on disk where the data dirs are on this host (the
// segment-roll incident is about files, not counters), else the brokers' own segment counts
// (a VM's data dir is inside its guest), and the device's flush count beside the brokers'.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
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

/** p, or an error naming `what` when it takes longer than ms. */
export async function withinMs<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
