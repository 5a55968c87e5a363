import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../scenario/loader.ts';
import { openFilesLimit, PARTITION_COSTS, partitionRefusal } from './partition-limits.ts';

const LIMITS = (soft: string, hard: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                ${hard}                files\n`;

describe('partitions a machine can hold', () => {
  it('reads the soft and hard open-files limits, unlimited included', () => {
    expect(openFilesLimit('soft', LIMITS('1024', '4096'))).toBe(1024);
    expect(openFilesLimit('hard', LIMITS('1024', 'unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(openFilesLimit('soft', 'nothing here')).toBeNull();
    // This process's own limit, as its brokers will inherit it.
    expect(openFilesLimit('soft')).toBeGreaterThan(0);
  });

  it('refuses what needs more descriptors than the limit, with the figures, per broker and RF', () => {
    const c = { brokers: 3, partitions: 10_000, replicationFactor: 3 };
    // durolab: 10,000 replicas per broker x 4 + 64 = 40,064 > 20,000 (Node keeps the soft limit).
    expect(partitionRefusal(PARTITION_COSTS.process, c, LIMITS('20000', '20000'))).toBe(
      '10000 partitions x RF 3 over 3 broker(s) = 10000 replicas per broker need ~40064 open files (4 per replica + 64), and the soft limit here is 20000 (ulimit -n): raise it or use fewer partitions',
    );
    expect(partitionRefusal(PARTITION_COSTS.process, { ...c, partitions: 1000 }, LIMITS('20000', '20000'))).toBeNull();
    // Kafka's JVM raises its soft limit to the hard one: a soft 1024 does not bind it.
    expect(partitionRefusal(PARTITION_COSTS.kafka, c, LIMITS('1024', '20000'))).toBeNull();
    expect(partitionRefusal(PARTITION_COSTS.kafka, c, LIMITS('1024', '4096'))).toContain('need ~10256 open files (1 per replica + 256), and the hard limit here is 4096 (ulimit -n -H)');
  });

  it('is refused at scenario check, naming cluster.partitions', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-partitions-'));
    try {
      const limit = openFilesLimit('soft')!;
      const partitions = Math.ceil(limit / 4) + 100;
      const file = path.join(dir, 'many.yaml');
      writeFileSync(
        file,
        `question: q\ntarget: process\ncluster: { brokers: 1, topic: t, partitions: ${partitions}, replicationFactor: 1, minInsyncReplicas: 1 }\nworkload: { recordBytes: 1KiB, recordsPerBatch: 1, connections: 1, pipelining: 1, rate: closed, warmup: 0s, duration: 1s, repetitions: 1 }\n`,
      );
      expect(() => loadScenario(file)).toThrow(new RegExp(`cluster\\.partitions: expected a partition count target: process can run on this machine \\(${partitions} partitions x RF 1 over 1 broker\\(s\\)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
