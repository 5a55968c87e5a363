// Real Apache Kafka (Maven Central jars, a KRaft JVM on loopback): start to ready within 30 s,
// produce through the kafka driver with the ack ledger, SIGKILL the broker, restart it on the
// same data dir, and run the full after-fault checker through the driver.
import { mkdtempSync, rmSync } from 'node:fs';
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
import { KAFKA_JVM_MARKER } from './kafka-node.ts';
import { kafkaLogRecovery, startKafkaCluster } from './kafka-target.ts';
import { requireKafka } from './kafka-requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-target-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: kafka', () => {
  it('starts one broker within 30 s, takes acks=1 load through the kafka driver, survives SIGKILL + restart with nothing acknowledged lost', async (ctx) => {
    const install = await requireKafka(ctx);
    const topic = 'ci-kill';
    const settings = resolveSettings({ flush: 'never', acks: 1 }, 1);
    const t0 = Date.now();
    const cluster = await startKafkaCluster(install, {
      cluster: { brokers: 1, topic, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
      settings,
      workDir: work,
    });
    const readyMs = Date.now() - t0;
    try {
      console.log(`Apache Kafka ${install.version} (java ${install.javaVersion}): storage format ${cluster.formatMs} ms, JVM start to topic ready ${cluster.readyMs} ms (${readyMs} ms in all)`);
      // Start to ready: from launching the broker JVM to the topic having a leader.
      expect(cluster.readyMs).toBeLessThan(30_000);
      const client = kafkaDriver().connect(cluster, { dataOnHost: true });
      const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 7000, partitions: [0] });
      const stop = new AbortController();
      const load = client.produce({
        topic,
        leaders: new Map([[0, 0]]),
        acks: 1,
        timeoutMs: 10_000,
        connections: 2,
        pipelining: 2,
        rate: null,
        warmupSec: 0,
        durationSec: 20,
        ledger,
        factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: 8 }),
        producer: { retries: 0, 'delivery.timeout.ms': 5000 },
        signal: stop.signal,
      });
      // Kill under load once a few thousand records are acknowledged.
      const until = Date.now() + 20_000;
      while (ledger.counts().ackedRecords < 2000 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      const pid = cluster.brokers[0]!.pid!;
      const cut = await cluster.processKill([0]);
      stop.abort();
      const result = await load;
      expect(findProcessesMatching(`${KAFKA_JVM_MARKER}${work}`)).not.toContain(pid);
      expect(result.measuredRequests).toBeGreaterThan(0);
      expect(result.latencyUs.totalCount).toBe(result.measuredRequests);

      const recovery = await recoverAfterFault(cluster, client, [0], { topic, partitions: [0], replicationFactor: 1, timeoutMs: 60_000 });
      expect(recovery.recoveries[0]!.partitions[0]!.cleanShutdown).toBe(false);
      expect(recovery.caughtUp).toBe(true);
      const check = await checkAfterFault({ source: client, topic, ledger, cutMs: cut.atMs });
      expect(check.report.acked).toBeGreaterThanOrEqual(2000);
      // The page cache survives a process kill: every acknowledged record is served, once, where it was acknowledged.
      expect(check.report.ackedLost).toBe(0);
      expect(check.report.inconsistentOffsets).toBe(0);
      expect(check.report.offsetChanged).toBe(0);
      expect(check.report.duplicates).toBe(0);
      expect(check.report.corrupt).toBe(0);
      expect(check.replicasDisagree).toBe(0);
      const figures = await client.brokerMetrics();
      expect(figures.down).toEqual([]);
      expect(figures.brokers[0]!.partitions[0]!.hw).toBeGreaterThanOrEqual(check.report.acked);
    } finally {
      await cluster.stop();
    }
    expect(findProcessesMatching(`${KAFKA_JVM_MARKER}${work}`)).toEqual([]);
  }, 180_000);
});

describe("a Kafka node's log recovery after a restart", () => {
  it('keeps the node\'s one log-loading time apart from its partitions, and leaves out what was not measured, never 0', () => {
    const before = new Map([
      [0, 4096],
      [1, 2048],
      [2, 1024],
    ]);
    // Partition 1 lost a torn tail; partition 2's log files were gone after the start (not a truncation that was measured).
    const after = new Map([
      [0, 4096],
      [1, 1500],
    ]);
    const r = kafkaLogRecovery('t', before, after, false, { ms: 3100 });
    expect(r.logLoadMs).toBe(3100);
    expect(r.partitions).toEqual([
      { topic: 't', partition: 0, cleanShutdown: false, bytesTruncated: 0 },
      { topic: 't', partition: 1, cleanShutdown: false, bytesTruncated: 548 },
      { topic: 't', partition: 2, cleanShutdown: false },
    ]);
    // No partition carries a time of its own: Kafka gives one for the node.
    expect(r.partitions.some((p) => 'durationMs' in p)).toBe(false);
    // No "Loaded N logs" line in the node's log: no log-loading time (not the restart's).
    expect(kafkaLogRecovery('t', before, after, true, null)).not.toHaveProperty('logLoadMs');
  });
});
