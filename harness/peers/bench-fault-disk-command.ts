// `durolab bench-fault-disk`: what the host route's fault disk costs a broker, measured against a
// plain directory in the same run. For each system (Apache Kafka, durolab's broker as a process)
// and flush policy, the same Kafka-client load runs on the broker with its data dir in a plain
// directory (the machine's own filesystem) and on the fault disk (the NBD server -> qsd FUSE
// export -> loop -> ext4 chain; model file, write-through, and volatile-cache with its write
// log), repeated with the storages' order rotated so none always runs on a warmer machine. It
// prints medians of records/s and p99 and the ratio fault disk / plain directory per row. The
// systems, their targets, drivers and settings come from the target registry
// (harness/targets/side-bench.ts).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { intFlag, parseChoice, parseCommandFlags, str } from '../../engine/common/flags.ts';
import { median } from '../../engine/common/stats.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { loadDriver } from '../drivers/registry.ts';
import { benchSettings, benchSystemNames, parseBenchSystems, type BenchSystem } from '../targets/side-bench.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { DEFAULT_DISK_SPEC, type DiskSpec } from '../model/disk-spec.ts';
const FLUSHES = ['never', 'per-batch'] as const;
const STORAGES = ['plain', 'file', 'volatile-cache'] as const;
type Storage = (typeof STORAGES)[number];

const HELP = `usage: durolab bench-fault-disk [options]

The same client load (1 KiB records, 16 per batch, 4 connections, closed loop, one broker,
RF 1, acks=1) on a broker whose data dir is a plain directory of this machine, and on the host
route's fault disk (NBD server -> qemu-storage-daemon FUSE export -> loop device -> ext4):
model file (write-through) and volatile-cache (with its write log). Prints the medians of
records/s and p99 and the ratio fault disk / plain directory, per system and flush policy.

  --systems LIST    some of ${benchSystemNames('fault-disk')} (default all)
  --flush LIST      never, per-batch (default never,per-batch)
  --repeat N        repetitions, the storages' order rotated each time (default 3)
  --duration SEC    load per measurement, after a 1 s warm-up (default 5)
`;

interface Sample {
  recordsPerSec: number;
  p99Us: number;
}

async function measure(s: BenchSystem, storage: Storage, flush: string, sec: number, workDir: string, log: (l: string) => void): Promise<Sample> {
  const spec: DiskSpec = { ...DEFAULT_DISK_SPEC, model: storage === 'volatile-cache' ? 'volatile-cache' : 'file' };
  const target = await s.bench.load({ log, ...(storage === 'plain' ? {} : { disk: { diskMiB: 2048, spec } }) });
  const settings = benchSettings(s, { flush, acks: '1' });
  const driver = await loadDriver(s.bench.driver);
  const cluster = await target.start({ cluster: { brokers: 1, topic: 'cost', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }, settings, workDir, seed: 1 });
  try {
    const client = driver.connect(cluster, { dataOnHost: target.capabilities.dataOnHost });
    const leaders = new Map([...(await cluster.leaders('cost'))].map(([p, b]) => [p, b.id]));
    const r = await client.produce({
      topic: 'cost',
      leaders,
      acks: 1,
      timeoutMs: 30_000,
      connections: 4,
      pipelining: 1,
      rate: null,
      warmupSec: 1,
      durationSec: sec,
      ledger: new AckLedger({ recordsPerBatch: 16, producerIdBase: 5000, partitions: [0] }),
      factory: new BatchFactory({ recordBytes: 1024, recordsPerBatch: 16 }),
    });
    return { recordsPerSec: r.measuredSec > 0 ? r.measuredRecords / r.measuredSec : 0, p99Us: r.latencyUs.getValueAtPercentile(99) };
  } finally {
    await cluster.stop();
  }
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('bench-fault-disk', argv, { systems: { type: 'string' }, flush: { type: 'string' }, repeat: { type: 'string' }, duration: { type: 'string' } }, HELP);
  if (!parsed) return 0;
  const v = parsed.values;
  const systems = parseBenchSystems('fault-disk', str(v.systems));
  const flushes = (str(v.flush) ?? FLUSHES.join(',')).split(',').map((x) => parseChoice('--flush', x.trim(), FLUSHES));
  const repeat = intFlag('--repeat', str(v.repeat), 3, 1, 50);
  const sec = intFlag('--duration', str(v.duration), 5, 1, 600);
  const log = (l: string) => console.error(`[bench-fault-disk] ${l}`);
  const workRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-bench-fault-disk-'));
  const rows: string[][] = [];
  try {
    for (const s of systems) {
      const system = s.system;
      for (const flush of flushes) {
        const samples = new Map<Storage, Sample[]>(STORAGES.map((s) => [s, []]));
        for (let rep = 0; rep < repeat; rep++) {
          const order = STORAGES.map((_, i) => STORAGES[(i + rep) % STORAGES.length]!);
          for (const storage of order) {
            const sample = await measure(s, storage, flush, sec, path.join(workRoot, `${system}-${flush}-${storage}-${rep}`), log);
            samples.get(storage)!.push(sample);
            console.error(`[bench-fault-disk] ${system} flush=${flush} ${storage} rep ${rep + 1}: ${Math.round(sample.recordsPerSec).toLocaleString('en-US')} records/s, p99 ${sample.p99Us} µs`);
          }
        }
        const med = (st: Storage, k: keyof Sample) => median(samples.get(st)!.map((x) => x[k])) ?? 0;
        const base = med('plain', 'recordsPerSec');
        for (const st of STORAGES) {
          rows.push([
            system,
            flush,
            st === 'plain' ? 'plain directory' : `fault disk (${st})`,
            Math.round(med(st, 'recordsPerSec')).toLocaleString('en-US'),
            String(Math.round(med(st, 'p99Us'))),
            st === 'plain' ? '1.00x' : base > 0 ? `${(med(st, 'recordsPerSec') / base).toFixed(2)}x` : '-',
          ]);
        }
      }
    }
  } finally {
    await fs.rm(workRoot, { recursive: true, force: true });
  }
  console.log(`medians over ${repeat} repetition(s), ${sec} s each after a 1 s warm-up; fdatasync on this machine's virtual disk costs ~80-250 µs, far less than real media`);
  console.log(renderTable(['system', 'flush', 'storage', 'records/s', 'p99 µs', 'records/s vs plain'], rows));
  return 0;
}
