// A log written before the measured load (the `preload` setting, and bench-recovery's fill): as
// fast as the brokers take it, acks=1, batches of 8 x 64 KiB records (512 KiB, under both
// brokers' 1 MiB message limit), over every partition, until the acknowledged bytes reach the
// size. Its batches carry producer ids of their own and are kept out of the workload's ack
// ledger: consumers read them (a consumer starting at the log start has that much to catch up
// with), recovery scans them, the checkers judge only the load's records.
// The fill ends written back: the filesystems under the given data dirs are synced (syncfs(2)
// through `sync -f`), as the old part of a real log was long since written back by the kernel;
// the brokers' own flush state (Kafka's recovery point, durolab's flushed offset) is untouched,
// so what their recovery rescans is still theirs to decide. Without it a power cut soon after
// the fill would drop most of the log with the page cache, and recovery would scan a small one.
import { statfsSync } from 'node:fs';
import { execa } from 'execa';
import { formatSize } from '../../engine/units.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { AckLedger } from '../history/ledger.ts';

export const PRELOAD_RECORD_BYTES = 64 * 1024;
export const PRELOAD_RECORDS_PER_BATCH = 8;
/** Producer ids of preload batches: far from the workload ledger's (Date.now() % 1e6 * 1000 + partition). */
const PRELOAD_PRODUCER_ID_BASE = 4_000_000_000_000;

export interface PreloadResult {
  bytes: number;
  records: number;
  seconds: number;
  mbPerSec: number;
  /** The sync of the data dirs' filesystems after the fill (0 without writeBack). */
  writeBackSeconds: number;
}

export async function preloadTopic(
  client: ClusterClient,
  o: {
    topic: string;
    leaders: ReadonlyMap<number, number>;
    bytes: number;
    signal?: AbortSignal;
    connections?: number;
    /** The free-space check: a directory on the disk the log goes to (a broker's data dir). */
    space?: { dir: string; replicationFactor: number };
    /** Data dirs on this host whose filesystems are synced after the fill (above). */
    writeBack?: readonly string[];
  },
): Promise<PreloadResult> {
  if (o.space) {
    // A disk that fills mid-preload measures nothing: twice the replicated log must be free.
    const st = statfsSync(o.space.dir);
    const free = st.bavail * st.bsize;
    const need = 2 * o.bytes * o.space.replicationFactor;
    if (need > free) throw new Error(`preload ${formatSize(o.bytes)} x RF ${o.space.replicationFactor} needs ${gib(need)} free under ${o.space.dir}, which has ${gib(free)}: preload less`);
  }
  const ledger = new AckLedger({ recordsPerBatch: PRELOAD_RECORDS_PER_BATCH, producerIdBase: PRELOAD_PRODUCER_ID_BASE, partitions: [...o.leaders.keys()] });
  const full = new AbortController();
  const t0 = Date.now();
  const watch = setInterval(() => {
    if (ledger.counts().ackedRecords * PRELOAD_RECORD_BYTES >= o.bytes) full.abort();
  }, 50);
  try {
    await client.produce({
      topic: o.topic,
      leaders: o.leaders,
      acks: 1,
      timeoutMs: 30_000,
      connections: o.connections ?? 4,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 3600,
      ledger,
      factory: new BatchFactory({ recordBytes: PRELOAD_RECORD_BYTES, recordsPerBatch: PRELOAD_RECORDS_PER_BATCH }),
      signal: o.signal ? AbortSignal.any([o.signal, full.signal]) : full.signal,
    });
  } finally {
    clearInterval(watch);
  }
  const records = ledger.counts().ackedRecords;
  const bytes = records * PRELOAD_RECORD_BYTES;
  if (bytes < o.bytes && !o.signal?.aborted) throw new Error(`preload: the fill stopped at ${bytes} of ${o.bytes} acknowledged bytes (the brokers stopped taking it)`);
  const seconds = (Date.now() - t0) / 1000;
  const w0 = Date.now();
  for (const dir of new Set(o.writeBack ?? [])) {
    if (o.signal?.aborted) break;
    const synced = await execa('sync', ['-f', dir], { reject: false, ...(o.signal ? { cancelSignal: o.signal } : {}) });
    if (synced.exitCode !== 0 && !o.signal?.aborted) throw new Error(`preload: sync -f ${dir} failed (exit ${synced.exitCode}): ${synced.stderr.trim()}`);
  }
  return { bytes, records, seconds, mbPerSec: seconds > 0 ? bytes / 1e6 / seconds : 0, writeBackSeconds: (Date.now() - w0) / 1000 };
}

const gib = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`;
