// workload.consumers end to end through the CLI on durolab's broker and on Apache Kafka: a
// tailing group, a group that starts late from the log start and a group of two members through
// the group coordinator (@platformatic/kafka's Consumer) read what a fixed-rate producer writes; every acknowledged record is consumed, the poll checks stay 0, fetch and end-to-end
// latencies are recorded. And what scenario check refuses about consumers.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';
import { requireKafka } from '../targets/kafka/kafka-requirements.ts';
import { compileScenario } from '../scenario/index.ts';
import { renderRunReport } from '../report/run-page.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-consumers-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('workload.consumers', () => {
  it('are refused without the kafka driver, with a fetch.max.bytes of 0 or above the broker limit, or starting after the load', () => {
    const compile = (target: string, consumers: string, driver = 'kafka') =>
      compileScenario(`question: q\ntarget: ${target}\nworkload: { driver: ${driver}, duration: 5s, consumers: [${consumers}] }\n`, 'c.yaml', { defaultName: 'c' });
    expect(() => compile('process', '{ start: tail }', 'http')).toThrow(/workload\.consumers: expected workload\.driver: kafka with consumers/);
    expect(() => compile('process', '{ start: tail, fetch.max.bytes: 0 }')).toThrow(/fetch\.max\.bytes: expected bytes per fetch: an integer from 1 to/);
    expect(() => compile('kafka', '{ start: tail, fetch.max.bytes: 60000000 }')).toThrow(/fetch\.max\.bytes: expected at most 57671680 bytes \(the most a target: kafka broker answers in one fetch\)/);
    expect(() => compile('process', '{ start: tail, fetch.max.bytes: 60000000 }')).toThrow(/expected at most 52428800 bytes \(the most a target: process broker answers/);
    expect(() => compile('process', '{ start: tail, startAt: 9s }')).toThrow(/startAt: expected a time within the load \(warm-up \+ duration = 6 s\)/);
    expect(() => compile('process', '{ start: lag }')).toThrow(/start: expected tail \(the log end\) \| earliest \(the log start\) \| lag:N/);
    expect(() => compile('process', '{ name: a, start: tail }, { name: a, start: earliest }')).toThrow(/name: expected a name no other consumer group has/);
    expect(compile('process', '{ start: lag:500 }').workload.consumers).toEqual([{ name: 'consumers-1', start: { from: 'lag', records: 500 }, 'fetch.max.bytes': 52_428_800, 'fetch.min.bytes': 1, 'fetch.max.wait.ms': 500, startAt: 0, membership: 'assigned', count: 1 }]);
    // A group through the coordinator starts where auto.offset.reset says; count is its members'.
    expect(() => compile('process', '{ start: lag:500, membership: group }')).toThrow(/start: expected tail or earliest with membership: group/);
    expect(() => compile('process', '{ start: tail, count: 3 }')).toThrow(/count: expected no count with membership: assigned/);
    expect(() => compile('process', '{ start: tail, membership: group, count: 0 }')).toThrow(/count: expected members of the group \(membership: group\): an integer from 1 to 64/);
    expect(() => compile('process', '{ start: tail, membership: coordinator }')).toThrow(/membership: expected assigned \(one consumer per partition, no coordinator\) \| group/);
    expect(compile('kafka', '{ start: earliest, membership: group, count: 2 }').workload.consumers[0]).toMatchObject({ membership: 'group', count: 2 });
  });

  it('on durolab and on Kafka: a tailing and a late group consume every acknowledged record, the poll checks clean', async (ctx) => {
    await requireKafka(ctx);
    const file = path.join(work, 'consume.yaml');
    writeFileSync(
      file,
      `question: Do the consumers read everything acknowledged?
cluster: { brokers: 1, topic: cons, partitions: 2, replicationFactor: 1 }
settings: { io: buffered, flush: never, acks: 1 }
matrix: { target: [durolab, kafka] }
workload:
  driver: kafka
  recordBytes: 512
  recordsPerBatch: 8
  connections: 2
  rate: 200
  warmup: 0s
  duration: 6s
  consumers:
    - { name: tailing, start: tail, fetch.max.wait.ms: 100 }
    - { name: late, start: earliest, startAt: 3s, fetch.max.bytes: 65536 }
    - { name: members, membership: group, count: 2, start: earliest, startAt: 1s }
expectations:
  - consumerChecks.skipped == 0
  - consumerChecks.nonMonotonic == 0
  - consumerChecks.corrupt == 0
`,
    );
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report'], { reject: false, timeout: 150_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/consumers \(medians over repetitions/);
    const run = JSON.parse(readFileSync(path.join(results, 'consume', 'latest', 'run.json'), 'utf8')) as RunResult;
    const html = renderRunReport(run);
    expect(html).toContain('<section id="consumers"><h2>Consumers</h2>');
    expect(html).toMatch(/<td>late<\/td><td>earliest at 3 s<\/td>/);
    for (const cell of run.cells) {
      const [tailing, late, members] = cell.consumers![0]!.groups;
      const acked = cell.ledger.acked;
      expect(acked).toBeGreaterThan(3000);
      // The late group reads from the log start: all of it, up to the end of the load.
      expect(late!.records).toBeGreaterThanOrEqual(acked - 2 * 8 * 4);
      expect(late!.lag.max).toBeGreaterThan(0);
      // The tailing group started at the log end with the load: nearly all (what arrived in its last long poll may be missing).
      expect(tailing!.records).toBeGreaterThanOrEqual(acked * 0.9);
      // Two members of one group through the coordinator (FindCoordinator, JoinGroup, SyncGroup,
      // heartbeats, OffsetCommit): both joined and were given partitions, between them both of
      // them, and together they read the whole log, each record at least once. The last
      // assignment each saw is not asserted as one partition each: on a loaded machine a member
      // that missed its heartbeats leaves and rejoins, and the other's last join may be the
      // generation in which it held both (a CI run saw [0, 1] and [0, 1]).
      expect(members!.membership).toBe('group');
      expect(members!.joins).toBeGreaterThanOrEqual(2);
      for (const m of members!.members!) expect(m.partitions.length).toBeGreaterThanOrEqual(1);
      expect([...new Set(members!.members!.flatMap((m) => m.partitions))].sort()).toEqual([0, 1]);
      expect(members!.records - (members!.redelivered ?? 0)).toBeGreaterThanOrEqual(acked - 2 * 8 * 4);
      for (const g of [tailing!, late!, members!]) {
        expect(g.errors).toEqual([]);
        expect(g.fetchLatencyUs.count).toBeGreaterThan(10);
        expect(g.endToEndUs.count).toBeGreaterThan(1000);
      }
      expect(cell.consumerChecks).toMatchObject({ nonMonotonic: 0, skipped: 0, corrupt: 0 });
      console.log(`${cell.id}: acked ${acked}; tailing ${tailing!.records} at ${Math.round(tailing!.recordsPerSec)}/s e2e p50 ${tailing!.endToEndUs.p50} µs p99 ${tailing!.endToEndUs.p99} µs; late ${late!.records}, lag max ${late!.lag.max}`);
    }
  }, 160_000);
});
