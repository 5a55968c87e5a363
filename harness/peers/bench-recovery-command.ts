// `durolab bench-recovery`: how long a broker takes to serve again after an unclean stop, against
// the size of its log and its segment count, for durolab's broker (target process) and Apache
// Kafka (target kafka), side by side in one run. Per system and log size: one broker on a plain
// directory of this machine, filled through the kafka driver (acks=1, no flush: what a crash
// leaves to recover), SIGKILLed, restarted on the same data dir. Printed per row: the segments
// on disk, the restart (process exec to serving) and the broker's own log-recovery figure
// (durolab: its RecoveryReport; Kafka: LogManager's "Loaded N logs in T ms", which rescans the
// segments after its recovery point), and Kafka / durolab per size. `--cold` drops the page
// cache between the kill and the restart (root; the host's whole cache), so recovery reads the
// log from the disk. The systems, their targets, drivers and settings come from the target
// registry (harness/targets/side-bench.ts); the ratio is each system against the lab's own.
import { execa } from 'execa';
import { statfsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseByteSize, parseCommandFlags, str } from '../../engine/common/flags.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { preloadTopic } from '../workload/preload.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { countLogFiles } from '../targets/log-files.ts';
import { loadDriver } from '../drivers/registry.ts';
import { benchSettings, benchSystemNames, parseBenchSystems, type BenchSystem } from '../targets/side-bench.ts';
import { labSystem } from '../targets/run-targets.ts';
import { summarizeRecovery } from '../faults/recover.ts';
const TOPIC = 'recovery';

const HELP = `usage: durolab bench-recovery [options]

Fills one broker's partition to each log size through a Kafka client (acks=1, no flush), SIGKILLs
it, restarts it on the same data dir and times how long it takes to serve again, for durolab's
broker and Apache Kafka in one run. Prints per row the segments, the fill rate, the restart
(exec to serving), the broker's own log-recovery figure, and Kafka / durolab per size.

  --systems LIST        some of ${benchSystemNames('recovery')} (default all)
  --sizes LIST          log sizes (default 1GiB,4GiB); each must fit twice in the free space
  --segment-bytes SIZE  segment.bytes of both brokers (default 1GiB, Kafka's default; smaller
                        sizes give more segments for the same log)
  --cold                drop the page cache (sync; echo 3 > /proc/sys/vm/drop_caches) between the
                        kill and the restart: the host's whole cache, as root only
  --dir DIR             where the data dirs go (default: the temp dir); its free space is checked
`;

interface Row {
  system: string;
  sizeBytes: number;
  /** Segment files by the system's own names (its target's logFiles); null where it declares none. */
  segments: number | null;
  fillMBps: number;
  restartMs: number;
  /** The broker's own log-recovery figures (harness/faults/recover.ts summarizeRecovery); null where it gave none (NATS), never 0. */
  recoveryMs: number | null;
  truncatedBytes: number | null;
}

async function dropCaches(): Promise<void> {
  await execa('sync');
  await fs.writeFile('/proc/sys/vm/drop_caches', '3\n');
}

async function measure(s: BenchSystem, sizeBytes: number, segmentBytes: number, cold: boolean, workDir: string, log: (l: string) => void): Promise<Row> {
  const system = s.system;
  const target = await s.bench.load({ log });
  const settings = benchSettings(s, { flush: 'never', acks: '1', 'segment.bytes': segmentBytes, 'message.max.bytes': 1024 * 1024 });
  const driver = await loadDriver(s.bench.driver);
  const cluster = (await target.start({ cluster: { brokers: 1, topic: TOPIC, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }, settings, workDir, seed: 1 })) as FaultableCluster;
  try {
    const client = driver.connect(cluster, { dataOnHost: target.capabilities.dataOnHost });
    const leaders = new Map([...(await cluster.leaders(TOPIC))].map(([p, b]) => [p, b.id]));
    let fill;
    try {
      fill = await preloadTopic(client, { topic: TOPIC, leaders, bytes: sizeBytes });
    } catch (err) {
      throw new Error(`${system}: ${(err as Error).message} (broker log: ${cluster.brokers[0]!.logPath})`);
    }
    const fillMBps = fill.mbPerSec;
    const brokerId = cluster.brokers[0]!.id;
    // One topic of one partition on a fresh broker: every segment file under its data dir is that partition's.
    const names = target.capabilities.logFiles;
    const segments = names ? countLogFiles([cluster.brokers[0]!.dataDir], names).segments : null;
    await cluster.processKill([brokerId]);
    if (cold) await dropCaches();
    const [rec] = await cluster.restart([brokerId]);
    await cluster.waitForLeaders(TOPIC, 120_000);
    const summary = summarizeRecovery(rec!);
    const row: Row = {
      system,
      sizeBytes,
      segments,
      fillMBps,
      restartMs: rec!.restartMs,
      recoveryMs: summary.durationMs === undefined ? null : Math.round(summary.durationMs),
      truncatedBytes: summary.bytesTruncated ?? null,
    };
    log(`${system} ${fmtSize(sizeBytes)}: ${segments ?? 'uncounted'} segment(s) filled at ${fillMBps.toFixed(0)} MB/s; restart ${row.restartMs} ms, log recovery ${row.recoveryMs === null ? 'not reported' : `${row.recoveryMs} ms`}${cold ? ' (cold cache)' : ''}`);
    return row;
  } finally {
    await cluster.stop();
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function fmtSize(b: number): string {
  return b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(b % 2 ** 30 ? 1 : 0)} GiB` : `${Math.round(b / 2 ** 20)} MiB`;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags(
    'bench-recovery',
    argv,
    { systems: { type: 'string' }, sizes: { type: 'string' }, 'segment-bytes': { type: 'string' }, cold: { type: 'boolean', default: false }, dir: { type: 'string' } },
    HELP,
  );
  if (!parsed) return 0;
  const v = parsed.values;
  const systems = parseBenchSystems('recovery', str(v.systems));
  const sizes = (str(v.sizes) ?? '1GiB,4GiB').split(',').map((x) => parseByteSize('--sizes', x.trim(), 64 * 2 ** 20));
  // Kafka 4 refuses segment.bytes below 1 MiB.
  const segmentBytes = v['segment-bytes'] === undefined ? 2 ** 30 : parseByteSize('--segment-bytes', String(v['segment-bytes']), 2 ** 20, 2 ** 31 - 1);
  const cold = v.cold === true;
  if (cold && process.getuid?.() !== 0) throw new Error('--cold drops the host page cache (/proc/sys/vm/drop_caches): run as root, or leave --cold out');
  const root = str(v.dir) ?? os.tmpdir();
  // A full disk mid-fill would measure nothing: each size must fit twice (the log and what the file system needs around it).
  const st = statfsSync(root);
  const free = st.bavail * st.bsize;
  const biggest = Math.max(...sizes);
  if (biggest * 2 > free) throw new Error(`--sizes: ${fmtSize(biggest)} needs ${fmtSize(biggest * 2)} free under ${root}, which has ${fmtSize(free)} (pick smaller sizes or --dir elsewhere)`);
  const log = (l: string) => console.error(`[bench-recovery] ${l}`);
  const workRoot = await fs.mkdtemp(path.join(root, 'durolab-bench-recovery-'));
  const rows: Row[] = [];
  try {
    for (const size of sizes) for (const s of systems) rows.push(await measure(s, size, segmentBytes, cold, path.join(workRoot, `${s.system}-${size}`), log));
  } finally {
    await fs.rm(workRoot, { recursive: true, force: true });
  }
  const lab = labSystem();
  const body = rows.map((r) => {
    const d = rows.find((x) => x.system === lab && x.sizeBytes === r.sizeBytes);
    const recoveryRatio = r.recoveryMs !== null && d?.recoveryMs ? `${(r.recoveryMs / d.recoveryMs).toFixed(1)}x` : '-';
    const ratio = r.system !== lab && d ? `${(r.restartMs / d.restartMs).toFixed(2)}x / ${recoveryRatio}` : '';
    const orDash = (v: number | null) => (v === null ? '-' : String(v));
    return [r.system, fmtSize(r.sizeBytes), r.segments === null ? '-' : String(r.segments), r.fillMBps.toFixed(0), (r.restartMs / 1000).toFixed(2), orDash(r.recoveryMs), orDash(r.truncatedBytes), ratio];
  });
  console.log(
    `unclean stop = SIGKILL after a fill with no flush (acks=1), ${cold ? 'page cache dropped before the restart (cold)' : 'page cache kept (warm: a process crash, not a power cut)'}; segment.bytes ${fmtSize(segmentBytes)}; ` +
      "fdatasync on this machine's virtual disk costs ~80-250 µs, far less than real media",
  );
  console.log(renderTable(['system', 'log', 'segments', 'fill MB/s', 'restart s', 'log recovery ms', 'truncated B', `system/${lab} restart / recovery`], body, (i) => i >= 2 && i <= 6));
  return 0;
}
