// The full checker against a real 3-broker cluster (child processes, real HTTP, real files):
// a clean run checks clean; a follower whose stored bytes were changed below the HW (with a
// valid CRC, so recovery keeps them) is caught by the log hashes; an HW a produce answer
// reported that the leader no longer has is caught too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32c } from '../../engine/records/crc.ts';
import { cellSettings, compileScenario } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { loadDriver } from '../drivers/registry.ts';
import type { ReplicaReadingClient as ClusterClient } from '../drivers/types.ts';
import { checkAfterFault } from './after-fault.ts';
import { waitForReplicasCaughtUp } from './replicas.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-after-fault-'));
const topic = 'checked';
let cluster: FaultableCluster;
let client: ClusterClient;
let ledger: AckLedger;

beforeAll(async () => {
  const scenario = compileScenario(
    `question: q
cluster: { brokers: 3, topic: ${topic}, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { acks: all, flush: never }
workload: { recordBytes: 256, recordsPerBatch: 8, connections: 4, warmup: 0s, duration: 1s }
`,
    'inline.yaml',
    { defaultName: 'inline' },
  );
  cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]), workDir: work })) as FaultableCluster;
  client = (await loadDriver('http')).connect(cluster, { dataOnHost: true });
  const leaders = await cluster.leaders(topic);
  ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 7000, partitions: [0] });
  await client.produce({
    leaders: new Map([[0, leaders.get(0)!.id]]),
    topic,
    acks: 'all',
    timeoutMs: 10_000,
    connections: 4,
    pipelining: 1,
    rate: null,
    warmupSec: 0,
    durationSec: 1,
    ledger,
    factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: 8 }),
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('checkAfterFault', () => {
  it('finds a clean cluster clean: nothing lost, replicas agree, HW where the answers said', async () => {
    expect(ledger.counts().ackedRecords).toBeGreaterThan(100);
    expect((await waitForReplicasCaughtUp(client, topic, [0], 10_000)).caughtUp).toBe(true);
    const c = await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() });
    expect(c.report.ackedLost).toBe(0);
    expect(c.report.corrupt).toBe(0);
    expect(c.replicasDisagree).toBe(0);
    // The http driver's produce answers carry the HW: measured, 0.
    expect(c.hwNotMeasured).toBeNull();
    expect(c.hwWentBack).toBe(0);
    expect(c.hwBefore).toBeGreaterThan(0);
    expect(c.hwAfter).toBeGreaterThanOrEqual(c.hwBefore!);
    expect(Object.keys(c.partitions[0].hashes)).toHaveLength(3);
    expect(c.partitions[0].upTo).toBe(c.hwAfter);
    expect(c.timeline.bins.reduce((a, b) => a + b.acked, 0)).toBe(c.report.acked);
  }, 30_000);

  it('counts an HW that went back behind what a produce answer reported', async () => {
    const inflated = new AckLedger({ recordsPerBatch: 8, producerIdBase: 7000, partitions: [0] });
    for (const b of ledger.batches(0)) {
      const seq = inflated.send(0, b.sentMs);
      if (b.status === 'acked') inflated.ack(0, seq, b.baseOffset, b.ackMs);
    }
    const settledHw = (await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() })).hwAfter;
    inflated.noteHw(0, settledHw + 40);
    const c = await checkAfterFault({ source: client, topic, ledger: inflated, cutMs: Date.now() });
    expect(c.hwWentBack).toBe(40);
    expect(c.report.ackedLost).toBe(0);
  }, 30_000);

  it('catches a follower whose bytes below the HW differ from the leader', async () => {
    const leader = cluster.leaderId(topic, 0)!;
    const follower = cluster.brokers.find((b) => b.id !== leader)!;
    await cluster.processKill([follower.id]);
    const dir = path.join(follower.dataDir, `${topic}-0`);
    const segment = path.join(dir, readdirSync(dir).find((f) => f.endsWith('.log'))!);
    const buf = readFileSync(segment);
    // One padding byte of the first record's value, then the batch CRC (over attributes..end) made valid again.
    const at = buf.indexOf('qrstuvwxyz');
    expect(at).toBeGreaterThan(61);
    buf[at] = 'Q'.charCodeAt(0);
    const batchLength = buf.readInt32BE(8);
    buf.writeUInt32BE(crc32c(buf.subarray(21, 12 + batchLength)), 17);
    writeFileSync(segment, buf);
    const [recovery] = await cluster.restart([follower.id]);
    expect(recovery.partitions[0]).toMatchObject({ topic, partition: 0, cleanShutdown: false });
    expect((await waitForReplicasCaughtUp(client, topic, [0], 15_000)).caughtUp).toBe(true);
    const c = await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() });
    expect(c.replicasDisagree).toBe(1);
    expect(c.partitions[0].agree).toBe(false);
    expect(c.partitions[0].hashes[follower.id]).not.toBe(c.partitions[0].hashes[leader]);
    // The consumer reads the leader, which was not touched.
    expect(c.report.ackedLost).toBe(0);
  }, 40_000);
});
