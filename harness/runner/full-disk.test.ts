// A full disk is a finding: a 64 MiB fault disk (the host route) filled for real under a
// closed-loop acks=1 load, on durolab's broker and on Apache Kafka, through the scenario runner;
// each trial must be suspect with the disk's size, the bytes written and the cause, and the
// terminal's accounting line must name the cause of the KAFKA_STORAGE_ERROR answers. Beside it,
// the readings of each system's log lines and the findings from a cut's figures.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaStorageFailureLines } from '../targets/kafka/kafka-log-lines.ts';
import { compileScenario } from '../scenario/validate.ts';
import { accountingLines } from '../report/accounting-summary.ts';
import { requireKafkaAndFaultDisk, runScenarioHere } from './run-scenario-test-helpers.ts';
import { clockTime } from '../results/storage-failure-text.ts';
import { fullDiskFindings } from './full-disk.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-full-disk-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// 64 MiB (54.7 MiB of ext4), 40 MiB of it preloaded before the load (outside the ledger), so the
// load fills the rest however slowly a busy machine runs it (~13 MB/s alone through the
// write-logging NBD chain; 1.5 MB/s would do): full well before the cut at 10 s. Three crash
// states keep the check short; none booted.
const SCENARIO = `question: Does a broker whose fault disk fills under load mark its trial suspect, naming the cause?
vm:
  diskMiB: 2048
  disk:
    model: volatile-cache
    onCut: drop-unflushed
cluster:
  brokers: 1
  topic: full-disk
  partitions: 1
  replicationFactor: 1
  minInsyncReplicas: 1
settings:
  io: buffered
  sync: fsync
  acks: 1
  flush: never
  preload: 40MiB
matrix:
  target: [durolab, kafka]
workload:
  driver: kafka
  recordBytes: 1KiB
  recordsPerBatch: 16
  connections: 4
  pipelining: 1
  rate: closed
  warmup: 0s
  duration: 12s
  repetitions: 1
  producer:
    retries: 0
faults:
  - kind: crash-states
    target: all
    when: { at: 10s }
    states: 3
    onCut: drop-unflushed
    seed: 1
    boot: 0
expectations:
  - corrupt == 0 in every trial
`;

describe('a full fault disk', () => {
  it('marks the trial suspect with the disk size, the bytes written and the cause, on durolab and on Kafka', async (ctx) => {
    await requireKafkaAndFaultDisk(ctx);
    // scenario check refuses a disk this load fills (disk-volume-check.ts): compiled on 2 GiB, run on 64 MiB,
    // as a load faster than the estimate's bound would fill a disk the check let through.
    const scenario = compileScenario(SCENARIO, 'full-disk.yaml', { defaultName: 'full-disk' });
    scenario.vm!.diskMiB = 64;
    const { run, out } = await runScenarioHere(scenario, path.join(work, 'results'));
    const accounting = accountingLines(run);
    expect(run.cells.map((c) => c.params.target)).toEqual(['durolab', 'kafka']);
    for (const c of run.cells) {
      const t = c.trials![0]!;
      const broker = c.params.target === 'kafka' ? 0 : 1;
      // The produces the full disk refused, and the cause the broker's own log named.
      expect(c.errors.KAFKA_STORAGE_ERROR, out).toBeGreaterThan(0);
      expect(t.fault!.storageFailures![0]).toMatchObject({ brokerId: broker, errno: 'ENOSPC', atMs: expect.any(Number) });
      expect(t.suspect, out).toBe(true);
      expect(t.note).toMatch(
        new RegExp(`broker ${broker}'s disk filled \\(ENOSPC on \\S+ at \\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\): disk 64 MiB \\(filesystem [\\d.]+ MiB, [\\d.]+ % free at the cut\\), [\\d.]+ MiB written to it`),
      );
      const written = Number(/([\d.]+) MiB written/.exec(t.note!)![1]);
      expect(written).toBeGreaterThan(40);
      const count = c.errors.KAFKA_STORAGE_ERROR!.toLocaleString('en-US');
      expect(accounting.join('\n')).toContain(`target=${c.params.target}: KAFKA_STORAGE_ERROR ${count}: broker ${broker}'s log dir is offline after ENOSPC on `);
    }
    // The run's own log says it when the trial is cut.
    expect(out).toMatch(/FULL DISK: broker 1's disk filled/);
    expect(out).toMatch(/FULL DISK: broker 0's disk filled/);
  }, 300_000);
});

describe('storage failure lines', () => {
  it("Kafka's LogDirFailureChannel line with the IOException below it names ENOSPC, the dir and the time", () => {
    const log = [
      '[2026-12-05 20:00:20,100] INFO [LogDirFailureHandler]: Starting (kafka.server.ReplicaManager$LogDirFailureHandler)',
      '[2026-12-05 20:00:20,239] ERROR Error while appending records to full-disk-0 in dir /mnt/broker-data (org.apache.kafka.storage.internals.log.LogDirFailureChannel)',
      'java.io.IOException: No space left on device',
      '\tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method) ~[?:?]',
      '[2026-12-05 20:00:20,253] WARN [ReplicaManager broker=0] Stopping serving replicas in dir /mnt/broker-data with uuid Optional[0n8u] because the log directory has failed. (kafka.server.ReplicaManager)',
      '[2026-12-05 20:00:20,268] ERROR Shutdown broker because all log dirs in /mnt/broker-data have failed (org.apache.kafka.storage.internals.log.LogManager)',
      '[2026-12-05 20:00:21,000] ERROR Error while writing to checkpoint file /mnt/broker-data/recovery-point-offset-checkpoint (org.apache.kafka.storage.internals.log.LogDirFailureChannel)',
      'java.io.IOException: Input/output error',
    ].join('\n');
    const f = kafkaStorageFailureLines(log);
    expect(f.map((x) => [x.errno, x.file])).toEqual([
      ['ENOSPC', '/mnt/broker-data'],
      [null, '/mnt/broker-data'],
      [null, '/mnt/broker-data'],
      ['EIO', '/mnt/broker-data/recovery-point-offset-checkpoint'],
    ]);
    expect(clockTime(f[0]!.atMs!)).toBe('20:00:20.239');
  });

  it('a disk a fault filled on purpose (disk-full) is no finding; another broker\'s full disk still is; a fill its broker never met is', () => {
    const enospc = (brokerId: number) => ({ brokerId, errno: 'ENOSPC', file: `/d${brokerId}/t-0/00000000000000000000.log`, atMs: null, line: '' });
    const full = { diskMiB: 2048, fsBytes: 1900 * 1048576, freeBytes: 16 * 1048576 };
    const cut = { diskAtCut: { 1: { space: { ...full, freeBytes: 0 } } }, storageFailures: [enospc(1), enospc(2)] };
    expect(fullDiskFindings(cut, [1])).toEqual([expect.stringMatching(/^broker 2's disk filled \(ENOSPC on \/d2\/t-0\/00000000000000000000\.log\)/)]);
    expect(fullDiskFindings({ storageFailures: [enospc(2)] }, [1])).toEqual([
      "broker 1's disk was filled on purpose, but its log names no ENOSPC: the fault did not reach its writes (nothing it wrote needed a new block?)",
      expect.stringMatching(/^broker 2's disk filled/),
    ]);
    // Without the fault's word, the same figures are a finding for both.
    expect(fullDiskFindings(cut)).toHaveLength(2);
  });

  it('a disk under 1 % free at the cut is full without an ENOSPC line; 1 % or more and no ENOSPC is not', () => {
    const space = (freeBytes: number) => ({ diskMiB: 256, fsBytes: 240 * 1048576, freeBytes });
    const cut = (freeBytes: number) => ({ diskAtCut: { 1: { space: space(freeBytes), counters: { bytesWritten: 250 * 1048576 } } } });
    expect(fullDiskFindings(cut(1048576))).toEqual([
      "broker 1's disk filled: disk 256 MiB (filesystem 240.0 MiB, 0.4 % free at the cut), 250.0 MiB written to it; the trial measured a full disk, not the fault",
    ]);
    expect(fullDiskFindings(cut(3 * 1048576))).toEqual([]);
    // An EIO is a storage error but not a full disk.
    expect(fullDiskFindings({ ...cut(3 * 1048576), storageFailures: [{ brokerId: 1, errno: 'EIO', file: '/d', atMs: null, line: '' }] })).toEqual([]);
    // The VM route: the ENOSPC line alone, its figures said to be missing rather than 0.
    expect(fullDiskFindings({ storageFailures: [{ brokerId: 2, errno: 'ENOSPC', file: '/d/t-0/00000000000000000000.log', atMs: null, line: '' }] })).toEqual([
      "broker 2's disk filled (ENOSPC on /d/t-0/00000000000000000000.log): disk size not read at the cut, bytes written not counted on this route; the trial measured a full disk, not the fault",
    ]);
  });
});
