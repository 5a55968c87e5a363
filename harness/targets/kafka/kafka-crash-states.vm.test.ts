// Crash states of real Apache Kafka, checked by Kafka's own recovery: one Kafka node on the host
// route's fault disk with its write log recorded, the kafka driver's load with the ack ledger, a
// power cut, then 50 crash states built from the write log, each loaded by UnifiedLog.create in
// the recovery-check JVM (harness/targets/kafka/recovery-check), and 3 of them booted: a Kafka
// node starts on the state's image and a consumer reads the partition back. The two answers
// must agree on every booted state. With flush.messages=1 on an honest disk no state may lose an
// acknowledged record. Nothing (JVM, daemon, loop device, mount) may be left afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaDriver } from '../../drivers/kafka/driver.ts';
import { resolveSettings } from '../../model/settings.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { hostDiskPrerequisiteProblem } from '../../disk/host-disk.ts';
import { expectHostDisksGone } from '../../disk/host-disk-test-helpers.ts';
import { runCrashStatesTrial } from '../../runner/crash-states/trial.ts';
import { DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import { missingRequirement } from '../../../test/requirements.ts';
import { KAFKA_JVM_MARKER } from './kafka-node.ts';
import { kafkaTarget } from './kafka-target.ts';
import { requireKafka } from './kafka-requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-states-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("target: kafka crash states checked by Kafka's recovery", () => {
  it('50 states of a flush.messages=1 trial: none loses an acknowledged record, 3 booted nodes agree with the offline answer', async (ctx) => {
    await requireKafka(ctx);
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const lines: string[] = [];
    const target = kafkaTarget({ faultDisk: true, vm: { diskMiB: 256, disk: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache', onCut: 'drop-unflushed' } }, log: (l) => lines.push(l) });
    const t = await runCrashStatesTrial({
      target,
      driver: kafkaDriver(),
      workDir: path.join(work, 'trial'),
      cluster: { brokers: 1, topic: 'states', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
      settings: resolveSettings({ flush: 'per-batch', sync: 'fsync', acks: 1 }, 1),
      workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, pipelining: 1, producer: { retries: 0 } },
      cutAfterMs: 3000,
      states: 50,
      policy: 'drop-unflushed',
      seed: 5,
      boot: 3,
      log: (l) => lines.push(l),
    });
    const r = t.result;
    console.log(
      `Kafka crash states: ${r.states} states, acknowledged at the cut ${t.ackedAtCut}, lost min/median/max ${r.lostMin}/${r.lostMedian}/${r.lostMax}; ` +
        `${t.breakdown.statesPerMin} states/min (materialise ${t.breakdown.materialiseMs} ms, journal ${t.breakdown.journalMs}, extract ${t.breakdown.extractMs}, ` +
        `Kafka recovery ${t.breakdown.recoverMs}, check ${t.breakdown.checkMs}); booted ${r.verification?.agreed}/${r.verification?.booted} agree; steps ${JSON.stringify(t.steps)}`,
    );
    expect(t.checkedBy).toMatch(/Apache Kafka 4\.\d+\.\d+'s own log recovery/);
    expect(t.ackedAtCut).toBeGreaterThan(100);
    expect(r.states).toBeGreaterThanOrEqual(50);
    expect(r.lostMax).toBe(0);
    expect(r.corruptStates).toBe(0);
    // The states differ: early ones serve less than the end point (the checker read real batches).
    const served = r.perState.map((s) => s.served);
    expect(Math.max(...served)).toBeGreaterThan(0);
    expect(new Set(served).size).toBeGreaterThan(3);
    expect(r.perState.find((s) => s.kind === 'end')!.served).toBeGreaterThanOrEqual(t.ackedAtCut);
    // Kafka's recovery reports truncated bytes, not batches: the batch count is absent (not measured), never 0.
    expect(r.perState.filter((s) => s.noDataDir === false && s.recoveryBatchesTruncated !== undefined)).toEqual([]);
    expect(r.perState.some((s) => s.recoveryBytesTruncated !== undefined)).toBe(true);
    expect(r.verification).toEqual({ booted: 3, agreed: 3 });
    expect(t.disagreements).toEqual([]);
    expect(t.booted.every((b) => b.booted!.served === b.served)).toBe(true);
    // Nothing left: no Kafka JVM of the trial or its booted states, no daemon, no mount.
    expect(findProcessesMatching(`${KAFKA_JVM_MARKER}${work}`)).toEqual([]);
    // The trial's disk and each booted state's: their run dirs are named in the log.
    expectHostDisksGone(lines.join('\n'), 4);
  }, 600_000);
});
