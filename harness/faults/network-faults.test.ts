// Fault kinds partition and slow-link under load, end to end through the CLI: each broker its own
// host (a partition implies cluster.network: namespaces). On durolab's broker and on Apache
// Kafka the leader is cut from its follower on the replication link for 4 s and healed: the
// schedule's times, the ISR shrinking to the leader in trial.isr (replica.lag.time.max.ms 2 s)
// while acks=all goes on with the leader alone (ackedWhileIsrShrunk), nothing lost, nothing of
// the lab left on the host (namespaces, veths, bridge, nft tables of the run's pid). Then on
// durolab a slow link: the leader's link capped at 1 Mbit/s for 3 s throttles the producers.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';
import { requireKafka } from '../targets/kafka/kafka-requirements.ts';
import { findProcessesMatching } from '../vm/process-registry.ts';
import { ownedBy, requireLabNetwork } from '../net/net-test-helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-netfault-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function bench(name: string, yaml: string, timeout: number): Promise<{ run: RunResult; out: string }> {
  const file = path.join(work, `${name}.yaml`);
  writeFileSync(file, yaml);
  const results = path.join(work, 'results');
  const child = execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report'], { reject: false, timeout });
  const r = await child;
  const out = r.stdout + r.stderr;
  expect(r.exitCode, out).toBe(0);
  // Nothing of the run is left: no broker or JVM, no namespace, veth, bridge or nft table of its pid.
  expect(findProcessesMatching(work)).toEqual([]);
  expect(ownedBy(child.pid!)).toEqual([]);
  return { run: JSON.parse(readFileSync(path.join(results, name, 'latest', 'run.json'), 'utf8')) as RunResult, out };
}

describe('network fault kinds', () => {
  it('partition on durolab and on Kafka: the leader cut from its follower on the replication link, the ISR shrinks to it, healed, nothing lost or left', async (ctx) => {
    requireLabNetwork(ctx);
    await requireKafka(ctx);
    const { run, out } = await bench(
      'partition',
      `question: Does the ISR shrink to a leader cut from its follower, and does the cut heal?
cluster: { brokers: 2, topic: np, partitions: 1, replicationFactor: 2, minInsyncReplicas: 1 }
settings: { io: buffered, flush: never, acks: all, replica.lag.time.max.ms: 2s }
matrix: { target: [durolab, kafka] }
workload: { driver: kafka, recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 9s, repetitions: 1, extraTrials: 0, producer: { retries: 0 } }
faults:
  - { kind: partition, target: leader, from: followers, links: replication, when: { at: 1s }, duration: 4.5s }
expectations:
  - ackedLost == 0 in every trial
`,
      240_000,
    );
    expect(run.cells.map((c) => c.id)).toEqual(['target=durolab', 'target=kafka']);
    for (const cell of run.cells) {
      const t = cell.trials![0]!;
      const [e] = t.schedule!;
      console.log(`${cell.id}: partition ${e!.startMs}-${e!.healMs} ms of broker ${e!.targets}; isr ${JSON.stringify(t.isr)}; acked ${t.ledger.acked}, while shrunk ${t.ledger.ackedWhileIsrShrunk}, HW still up to ${t.hwLongestStillMs} ms, lost ${t.ledger.ackedLost}; ISR size by second ${cell.timeseries.map((p) => p.isrSize ?? '-').join(',')}`);
      expect(t.schedule).toHaveLength(1);
      expect(e).toMatchObject({ entry: 0, kind: 'partition', when: 'at 1 s', durationMs: 4500 });
      expect(e!.startMs!).toBeGreaterThanOrEqual(990);
      expect(e!.startMs!).toBeLessThan(4000);
      expect(e!.healMs! - e!.startMs!).toBeGreaterThanOrEqual(4490);
      expect(e!.healMs! - e!.startMs!).toBeLessThan(5500);
      const leader = e!.targets![0]!;
      expect(e!.detail).toMatch(new RegExp(`^broker ${leader} cut from broker \\d on the replication link\\(s\\)$`));
      expect(t.fault).toMatchObject({ kind: 'partition', targets: [leader], atMs: e!.startMs });
      expect(t.fault!.recovery).toEqual([]);
      // The ISR: both replicas before the cut, the leader alone during it (sampled every ~250 ms).
      const isr = t.isr!;
      expect(isr[0]!.isr).toHaveLength(2);
      const shrunk = isr.find((c) => c.isr !== null && c.isr.length === 1);
      expect(shrunk, `${cell.id}: the ISR shrank during the cut`).toBeDefined();
      expect(shrunk!.isr).toEqual([leader]);
      expect(shrunk!.leader).toBe(leader);
      expect(shrunk!.atMs).toBeGreaterThan(e!.startMs!);
      expect(shrunk!.atMs).toBeLessThan(e!.healMs! + 250);
      // acks=all went on with the leader alone: counted, and drawn as an ISR size of 1 beside p99.
      expect(t.ledger.ackedWhileIsrShrunk!).toBeGreaterThan(0);
      expect(cell.timeseries.some((p) => p.isrSize === 1)).toBe(true);
      // The HW, sampled with the ISR: it advanced before the cut, stood still while acks=all waited for the cut follower (up to the shrink), and advanced again.
      const hw = t.hw!.filter((c) => c.partition === 0 && c.hw !== null);
      expect(hw.length).toBeGreaterThan(4);
      expect(hw.some((c) => c.atMs < e!.startMs! && c.hw! > 0)).toBe(true);
      expect(hw.some((c) => c.atMs > shrunk!.atMs && c.hw! > hw.filter((x) => x.atMs <= e!.startMs!).at(-1)!.hw!)).toBe(true);
      expect(t.hwLongestStillMs!).toBeGreaterThanOrEqual(1000);
      expect(t.hwLongestStillMs!).toBeLessThan(e!.healMs! - e!.startMs! + 1000);
      expect(cell.timeseries.some((p) => (p.hwAdvancedPerSec ?? 0) > 0)).toBe(true);
      expect(t.ledger).toMatchObject({ ackedLost: 0, corrupt: 0 });
      expect(t.suspect).toBeUndefined();
    }
    expect(out).toMatch(/schedule: partition of broker (\d) \(broker \1 cut from broker \d on the replication link\(s\)\) \d\.\d\d-\d\.\d\d s/);
  }, 260_000);

  it('slow-link on durolab: the leader capped at 1 Mbit/s throttles the producers while it lasts, then they recover', async (ctx) => {
    requireLabNetwork(ctx);
    const { run } = await bench(
      'slow',
      `question: Does a 1 Mbit/s link on the leader throttle its producers?
target: process
cluster: { brokers: 2, topic: ns, partitions: 1, replicationFactor: 2, minInsyncReplicas: 1 }
settings: { io: buffered, flush: never, acks: 1 }
workload: { driver: kafka, recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 8s, repetitions: 1, extraTrials: 0, producer: { retries: 0 } }
faults:
  - { kind: slow-link, target: leader, rate: 1mbit, when: { at: 2s }, duration: 3s }
`,
      90_000,
    );
    const cell = run.cells[0]!;
    const t = cell.trials![0]!;
    const [e] = t.schedule!;
    expect(e).toMatchObject({ kind: 'slow-link', durationMs: 3000, detail: '1 Mbit/s' });
    const during = cell.timeseries.filter((p) => p.t * 1000 >= e!.startMs! + 300 && (p.t + 1) * 1000 <= e!.healMs!);
    const before = cell.timeseries.filter((p) => (p.t + 1) * 1000 <= e!.startMs!);
    const after = cell.timeseries.filter((p) => p.t * 1000 >= e!.healMs! + 500);
    console.log(`slow-link ${e!.startMs}-${e!.healMs} ms of broker ${e!.targets}: records/s by second ${cell.timeseries.map((p) => Math.round(p.recordsPerSec)).join(',')}`);
    expect(during.length).toBeGreaterThanOrEqual(1);
    expect(before.length).toBeGreaterThanOrEqual(1);
    const mean = (xs: typeof during) => xs.reduce((a, p) => a + p.recordsPerSec, 0) / xs.length;
    // 1 Mbit/s carries at most ~244 records of 512 bytes a second, each way; loopback-speed runs carry thousands.
    // The depth of the cap, its slowest second: one CI run measured 192, 192 and then 1,752 records/s in the
    // last whole second before the heal (on a busy machine), so the mean over the seconds is not the figure held.
    const slowest = Math.min(...during.map((p) => p.recordsPerSec));
    expect(slowest).toBeLessThan(400);
    expect(mean(before)).toBeGreaterThan(4 * slowest);
    expect(mean(after)).toBeGreaterThan(2 * slowest);
    expect(t.ledger).toMatchObject({ ackedLost: 0, corrupt: 0 });
  }, 100_000);
});
