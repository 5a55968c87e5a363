import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../scenario/loader.ts';
import { canRaiseHardLimit, ensureOpenFiles, openFilesLimit, DUROLAB_BROKER_PARTITION_COST, partitionRefusal } from './partition-limits.ts';
import { KAFKA_PARTITION_COST } from './kafka/kafka-kind.ts';

const LIMITS = (soft: string, hard: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                ${hard}                files\n`;

describe('partitions a machine can hold', () => {
  it('reads the soft and hard open-files limits, unlimited included', () => {
    expect(openFilesLimit('soft', LIMITS('1024', '4096'))).toBe(1024);
    expect(openFilesLimit('hard', LIMITS('1024', 'unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(openFilesLimit('soft', 'nothing here')).toBeNull();
    // This process's own limit, as its brokers will inherit it.
    expect(openFilesLimit('soft')).toBeGreaterThan(0);
  });

  it('refuses what needs more descriptors than this process can raise its limit to, with the figures, per broker, RF and io', () => {
    const c = { brokers: 3, partitions: 10_000, replicationFactor: 3 };
    const noCap = 'CapEff:\t000001fffeffffff\n';
    const cap = 'CapEff:\t000001ffffffffff\n';
    expect(canRaiseHardLimit(noCap)).toBe(false);
    expect(canRaiseHardLimit(cap)).toBe(true);
    // durolab, io=direct: 10,000 replicas per broker x 2 + 64 = 20,064 > 20,000 (Node keeps the soft limit).
    expect(partitionRefusal(DUROLAB_BROKER_PARTITION_COST, { ...c, unbufferedIo: true }, LIMITS('20000', '20000'), noCap)).toBe(
      '10000 partitions x RF 3 over 3 broker(s) = 10000 replicas per broker need ~20064 open files (2 per replica + 64), and this process can raise its limit (20000) only to 20000 (the hard limit: raising it needs CAP_SYS_RESOURCE, which this process lacks): raise it or use fewer partitions',
    );
    // Buffered: one descriptor per replica fits.
    expect(partitionRefusal(DUROLAB_BROKER_PARTITION_COST, c, LIMITS('20000', '20000'), noCap)).toBeNull();
    // Above the soft limit but within the hard one: the runner raises it (ensureOpenFiles).
    expect(partitionRefusal(DUROLAB_BROKER_PARTITION_COST, c, LIMITS('4096', '65536'), noCap)).toBeNull();
    // Above the hard limit: only with CAP_SYS_RESOURCE (up to fs.nr_open).
    expect(partitionRefusal(DUROLAB_BROKER_PARTITION_COST, c, LIMITS('4096', '4096'), noCap)).toContain('need ~10064 open files (1 per replica + 64)');
    expect(partitionRefusal(DUROLAB_BROKER_PARTITION_COST, c, LIMITS('4096', '4096'), cap)).toBeNull();
    // Kafka's JVM raises its soft limit to the hard one: a soft 1024 does not bind it.
    expect(partitionRefusal(KAFKA_PARTITION_COST, c, LIMITS('1024', '20000'), noCap)).toBeNull();
    expect(partitionRefusal(KAFKA_PARTITION_COST, c, LIMITS('1024', '4096'), noCap)).toContain('need ~10256 open files (1 per replica + 256), and this process can raise its limit (4096) only to 4096');
  });

  it('at scenario check: refused beyond what the limit can be raised to; otherwise the runner raises this process\'s limit', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-partitions-'));
    try {
      const soft = openFilesLimit('soft')!;
      const hard = openFilesLimit('hard')!;
      const ceiling = canRaiseHardLimit() ? Math.max(hard, Number(readFileSync('/proc/sys/fs/nr_open', 'utf8'))) : hard;
      // io=direct: 2 descriptors per partition on durolab's broker.
      const partitions = 10_000;
      const needed = 64 + partitions * 2;
      const file = path.join(dir, 'many.yaml');
      writeFileSync(
        file,
        `question: q\ntarget: process\ncluster: { brokers: 1, topic: t, partitions: ${partitions}, replicationFactor: 1, minInsyncReplicas: 1 }\nsettings: { io: direct }\nworkload: { recordBytes: 1KiB, recordsPerBatch: 1, connections: 1, pipelining: 1, rate: closed, warmup: 0s, duration: 1s, repetitions: 1 }\n`,
      );
      if (needed > ceiling) {
        expect(() => loadScenario(file)).toThrow(new RegExp(`cluster\\.partitions: expected a partition count target: process can run on this machine \\(${partitions} partitions x RF 1 over 1 broker\\(s\\) = ${partitions} replicas per broker need ~${needed} open files`));
        return;
      }
      expect(loadScenario(file).cluster.partitions).toBe(partitions);
      const did = await ensureOpenFiles({ brokers: 1, partitions, replicationFactor: 1, unbufferedIo: true }, [DUROLAB_BROKER_PARTITION_COST, KAFKA_PARTITION_COST]);
      if (needed > soft) expect(did).toMatch(new RegExp(`open files limit raised from ${soft} to ${needed}`));
      expect(openFilesLimit('soft')).toBeGreaterThanOrEqual(needed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
