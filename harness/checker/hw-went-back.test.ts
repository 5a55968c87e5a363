// hwWentBack through the kafka driver, against durolab's own broker processes (process target,
// Kafka listener; no Apache Kafka needed): each partition's HW is read just before the fault
// (ListOffsets LATEST through the driver, recordHwBeforeFault) and compared with what the
// recovered leader serves. A broker killed and restarted with the tail of one partition's
// segment gone (a cut that lost what the page cache held) serves a lower HW, and the figure is
// exactly that difference; a reading that failed or did not answer in time leaves the figure
// not measured (null, the trial's ledger without hwWentBack), and an expectation on it NOT
// EVALUATED, never a silent 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cellSettings, compileScenario, evaluateExpectations } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { loadDriver } from '../drivers/registry.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { checkAfterFault, recordHwBeforeFault } from './after-fault.ts';
import { ledgerSummaryOf } from '../runner/fault-trial.ts';
import { skippedCell } from '../runner/cell-result.ts';
import type { CellResult } from '../results/types.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-hw-went-back-'));
const topic = 'hw';
const PER = 8;
const scenarioText = `question: q
target: process
cluster: { brokers: 1, topic: ${topic}, partitions: 2, replicationFactor: 1 }
settings: { acks: 1, flush: never }
workload: { driver: kafka, recordBytes: 256, recordsPerBatch: ${PER}, connections: 2, warmup: 0s, duration: 1s }
faults:
  - kind: process-kill
    target: all
    when: { at: 500ms }
expectations:
  - hwWentBack == 0 in every trial
`;
const scenario = compileScenario(scenarioText, 'inline.yaml', { defaultName: 'inline' });
let cluster: FaultableCluster;
let client: ClusterClient;
let silent: net.Server | null = null;

function newLedger(producerIdBase: number): AckLedger {
  return new AckLedger({ recordsPerBatch: PER, producerIdBase, partitions: [0, 1] });
}

async function produce(ledger: AckLedger): Promise<void> {
  const leaders = await cluster.leaders(topic);
  await client.produce({
    leaders: new Map([...leaders].map(([p, b]) => [p, b.id])),
    topic,
    acks: 1,
    timeoutMs: 10_000,
    connections: 2,
    pipelining: 2,
    rate: null,
    warmupSec: 0,
    durationSec: 1,
    ledger,
    factory: new BatchFactory({ recordBytes: 256, recordsPerBatch: PER }),
    producer: { library: 'platformatic' },
  });
}

/** Cuts partition 0's newest segment back to the first batch at or above `offset`: the log loses its tail. */
function cutTail(dataDir: string, offset: number): number {
  const dir = path.join(dataDir, `${topic}-0`);
  const segment = path.join(dir, readdirSync(dir).filter((f) => f.endsWith('.log')).sort().at(-1)!);
  const buf = readFileSync(segment);
  for (let pos = 0; pos + 12 <= buf.length; pos += 12 + buf.readInt32BE(pos + 8)) {
    const base = Number(buf.readBigInt64BE(pos));
    if (base >= offset) {
      truncateSync(segment, pos);
      return base;
    }
  }
  throw new Error(`${segment}: no batch at or above offset ${offset}`);
}

beforeAll(async () => {
  cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]!), workDir: work })) as FaultableCluster;
  client = (await loadDriver('kafka')).connect(cluster, { dataOnHost: true });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  silent?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('hwWentBack on the kafka driver', () => {
  it('reads each HW before the fault and measures exactly how far it went back', async () => {
    const ledger = newLedger(7100);
    await produce(ledger);
    expect(ledger.counts().ackedRecords).toBeGreaterThan(100);
    // The kafka driver's answers carry no HW: before the reading, nothing is known.
    expect(ledger.hwUnknownWhy(0)).toContain('no produce answer or reading');
    await recordHwBeforeFault(client, topic, ledger);
    const before = [0, 1].map((p) => ledger.maxHw(p));
    const served = await Promise.all([0, 1].map((p) => client.consume({ topic, partition: p })));
    expect(before).toEqual(served.map((s) => s.highWatermark));
    expect(before[0]).toBeGreaterThan(2 * PER);

    const broker = cluster.brokers[0]!;
    await cluster.processKill([broker.id]);
    const cutAt = cutTail(broker.dataDir, Math.floor(before[0]! / 2));
    await cluster.restart([broker.id]);
    await cluster.waitForLeaders(topic, 15_000);

    const c = await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() });
    expect(c.hwNotMeasured).toBeNull();
    expect(c.partitions.map((p) => p.servedHw)).toEqual([cutAt, before[1]]);
    expect(c.hwWentBack).toBe(before[0]! - cutAt);
    expect(c.hwBefore).toBe(before[0]! + before[1]!);
    expect(c.hwAfter).toBe(cutAt + before[1]!);
    // The records of the cut tail were acknowledged: lost, and the trial's ledger carries the figure.
    expect(c.report.ackedLost).toBe(before[0]! - cutAt);
    expect(ledgerSummaryOf(c)).toMatchObject({ hwWentBack: before[0]! - cutAt });
    expect(ledgerSummaryOf(c).hwNotMeasured).toBeUndefined();
  }, 60_000);

  it('leaves it not measured when the reading fails or does not answer in time, and the expectation NOT EVALUATED', async () => {
    // A Kafka address that accepts connections and never answers.
    silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const mute = (await loadDriver('kafka')).connect(
      { brokers: cluster.brokers.map((b) => ({ ...b, kafka: `127.0.0.1:${port}` })), leaderId: (t, p) => cluster.leaderId(t, p) },
      { dataOnHost: true },
    );
    const ledger = newLedger(7200);
    await produce(ledger);
    const t0 = Date.now();
    await recordHwBeforeFault(mute, topic, ledger, 400);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(ledger.hwUnknownWhy(0)).toMatch(/could not be read before the fault: Metadata: .*no Metadata answer within/);

    const c = await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() });
    expect(c.hwWentBack).toBeNull();
    expect(c.hwBefore).toBeNull();
    expect(c.hwNotMeasured).toMatch(/^hw-0: its high watermark could not be read before the fault: .* \(and 1 more partitions\)$/);
    expect(c.report).toMatchObject({ ackedLost: 0 });
    const summary = ledgerSummaryOf(c);
    expect(summary.acked).toBeGreaterThan(100);
    expect(summary.hwWentBack).toBeUndefined();
    expect(summary.hwNotMeasured).toBe(1);

    const cell: CellResult = {
      ...skippedCell('base', {}, 'ok', ''),
      ledger: summary,
      trials: [{ index: 0, ledger: summary, fault: { kind: 'process-kill', targets: [0], atMs: 1000, ackedBeforeCut: 10, recovery: [], hwNotMeasuredWhy: c.hwNotMeasured! } }],
    };
    const [r] = evaluateExpectations(scenario, [cell]);
    expect(r).toMatchObject({ state: 'not-evaluated', passed: false });
    expect(r!.reason).toContain('base trial 1: HW going back not measured (hw-0: its high watermark could not be read before the fault');
    // A cell-level expectation on the sum is not judged either.
    const cellLevel = compileScenario(scenarioText.replace('hwWentBack == 0 in every trial', 'hwWentBack == 0'), 'inline.yaml', { defaultName: 'inline' });
    expect(evaluateExpectations(cellLevel, [cell])[0]).toMatchObject({ state: 'not-evaluated', reason: 'base: HW going back not measured in 1 trial(s)' });
  }, 60_000);
});
