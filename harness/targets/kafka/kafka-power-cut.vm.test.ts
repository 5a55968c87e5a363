// Real Apache Kafka on the lab's fault disk (the host route: NBD server -> qemu-storage-daemon
// FUSE export -> loop -> ext4), a real power cut under load through the kafka driver, the
// restart on the same disk (journal replay, Kafka's log recovery) and the full after-fault
// checker. Kafka with flush.messages=1 on a disk with a volatile cache must keep every
// acknowledged record; with no flush the cut must take what only the page cache held. Nothing
// (JVM, daemon, loop device, mount) may be left afterwards. In the sequential (vm) run: three
// JVMs and their disk servers need the cores.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaDriver } from '../../drivers/kafka/driver.ts';
import { checkAfterFault } from '../../checker/after-fault.ts';
import { recoverAfterFault } from '../../faults/recover.ts';
import { resolveSettings } from '../../model/settings.ts';
import { AckLedger } from '../../history/ledger.ts';
import { BatchFactory } from '../../history/batch-factory.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import { hostDiskPrerequisiteProblem, QSD_MARKER } from '../../disk/host-disk.ts';
import { missingRequirement } from '../../../test/requirements.ts';
import { KAFKA_JVM_MARKER } from './kafka-node.ts';
import { startKafkaCluster } from './kafka-target.ts';
import { requireKafka } from './kafka-requirements.ts';
import type { HostDiskAtCut } from '../host-fault-disks.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-cut-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function cutTrial(flush: 'never' | 'per-batch', dir: string, requirements: Parameters<typeof requireKafka>[0]) {
  const install = await requireKafka(requirements);
  const why = hostDiskPrerequisiteProblem();
  if (why) missingRequirement(requirements, why);
  const topic = `cut-${flush}`;
  const settings = resolveSettings({ flush, acks: 1 }, 1);
  const cluster = await startKafkaCluster(install, {
    cluster: { brokers: 1, topic, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
    settings,
    workDir: dir,
    seed: 11,
    faultDisk: { spec: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache' }, sizeMiB: 512, mountOptions: '' },
  });
  try {
    const client = kafkaDriver().connect(cluster, { dataOnHost: true });
    const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 9000, partitions: [0] });
    const stop = new AbortController();
    const load = client.produce({
      topic,
      leaders: new Map([[0, 0]]),
      acks: 1,
      timeoutMs: 10_000,
      connections: 2,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 30,
      ledger,
      factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: 8 }),
      producer: { retries: 0, 'delivery.timeout.ms': 5000 },
      signal: stop.signal,
    });
    const until = Date.now() + 30_000;
    while (ledger.counts().ackedRecords < 800 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const cut = await cluster.powerCut([0]);
    stop.abort();
    await load;
    const atCut = (cut.diskAtCut as Record<number, HostDiskAtCut>)[0]!;
    expect(atCut.route).toBe('host');
    const recovery = await recoverAfterFault(cluster, client, [0], { topic, partitions: [0], replicationFactor: 1, timeoutMs: 60_000 });
    expect(recovery.recoveries[0]!.partitions[0]!.cleanShutdown).toBe(false);
    // Back stage by stage: restarted (disk mounted, JVM serving), led, caught up, the ISR whole.
    expect(recovery.steps.restartMs).toBeGreaterThan(0);
    expect(recovery.steps.isrMs).not.toBeNull();
    expect(recovery.recoveries[0]!.boot?.setupMs).toBeGreaterThan(0);
    const check = await checkAfterFault({ source: client, topic, ledger, cutMs: cut.atMs });
    console.log(
      `Kafka ${install.version} on the host fault disk, flush ${flush}: acked ${check.report.acked}, lost ${check.report.ackedLost}; ` +
        `disk at cut: ${atCut.cut.unflushedWrites} unflushed writes, ${atCut.counters.flushes} flushes so far; restart ${recovery.recoveries[0]!.restartMs} ms`,
    );
    return { check, atCut, log: readFileSync(cluster.brokers[0]!.logPath, 'utf8'), mountPoint: path.dirname(cluster.brokers[0]!.dataDir) };
  } finally {
    await cluster.stop();
  }
}

describe('target: kafka on the host fault disk', () => {
  it('flush.messages=1: a power cut loses no acknowledged record, and Kafka recovers the unflushed tail itself', async (ctx) => {
    const dir = path.join(work, 'per-batch');
    const { check, log, mountPoint } = await cutTrial('per-batch', dir, ctx);
    expect(check.report.acked).toBeGreaterThanOrEqual(800);
    expect(check.report.ackedLost).toBe(0);
    expect(check.report.inconsistentOffsets).toBe(0);
    expect(check.report.corrupt).toBe(0);
    // The restart found no clean-shutdown marker and ran log recovery.
    expect(log).toMatch(/unflushed|Recovering|recover/i);
    expect(findProcessesMatching(`${KAFKA_JVM_MARKER}${dir}`)).toEqual([]);
    expect(findProcessesMatching(QSD_MARKER, path.dirname(mountPoint))).toEqual([]);
  }, 240_000);

  it('no flush: the cut takes what only the page cache held (acknowledged records are lost)', async (ctx) => {
    const dir = path.join(work, 'never');
    const { check, atCut, mountPoint } = await cutTrial('never', dir, ctx);
    expect(check.report.acked).toBeGreaterThanOrEqual(800);
    // acks=1 with no flush acknowledges from the page cache; seconds after the start nothing was written back.
    expect(check.report.ackedLost).toBeGreaterThan(0);
    expect(atCut.cut.policy).toBe('drop-unflushed');
    expect(findProcessesMatching(`${KAFKA_JVM_MARKER}${dir}`)).toEqual([]);
    // The disk's mount, its loop device's FUSE file and its daemon are gone with the cluster.
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
    expect(mountPoint).toMatch(/durolab-hd-[^/]+\/mnt$/);
    expect(mounts).not.toContain(path.dirname(mountPoint));
    expect(findProcessesMatching(QSD_MARKER, path.dirname(mountPoint))).toEqual([]);
  }, 240_000);
});
