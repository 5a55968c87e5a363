// The file faults through the scenario runner on real brokers and real files. On a single-replica
// topic with a flush per batch (page-cache loss ruled out), bits flipped in the newest segment of
// the only broker, after acknowledged batches were flushed, are never "nothing": each of durolab's
// broker, Apache Kafka and NATS JetStream reports the records as corrupt or lost. On durolab's
// broker with 3 replicas, a lost write under the running broker (phase running) and a truncation
// to zero after a clean stop each fire on the victims, are recorded, and the cluster is checked
// after the restart (file-edits.test.ts reads every kind's recorded bytes back from the file).
// And `scenario check` refuses a set a system lacks, a vm or external target, stop with phase running.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScenario } from '../../scenario/validate.ts';
import { requireKafka } from '../../targets/kafka/kafka-requirements.ts';
import { runScenarioHere } from '../../runner/run-scenario-test-helpers.ts';
import type { CellResult } from '../../results/types.ts';
import { hostDiskPrerequisiteProblem } from '../../disk/host-disk.ts';
import { missingRequirement, requireNats } from '../../../test/requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-file-faults-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const scenarioText = (fault: string, extra = '') => `question: Does a bad block in a flushed, acknowledged batch on the only replica go unnoticed?
cluster: { brokers: 1, topic: rot, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { io: buffered, sync: fsync, acks: all, flush: per-batch }
matrix:
  target: [durolab, kafka, nats]
  driver: [kafka, nats]
  exclude:
    - { target: durolab, driver: nats }
    - { target: kafka, driver: nats }
    - { target: nats, driver: kafka }
${extra}workload:
  recordBytes: 1KiB
  recordsPerBatch: 16
  connections: 2
  pipelining: 1
  warmup: 0s
  duration: 4s
  repetitions: 1
  extraTrials: 0
faults:
  - ${fault}
`;

function trialOf(c: CellResult) {
  const t = c.trials?.[0];
  if (!t) throw new Error(`cell ${c.id} has no trial: ${c.status} ${c.note ?? JSON.stringify(c).slice(0, 600)}`);
  return { t, f: t.fault!, ff: t.fault!.fileFault! };
}

describe('file faults on real brokers', () => {
  it('a bit flip in the newest segment of a single replica, flushed per batch: corrupt or lost on all three systems, never nothing', async (ctx) => {
    await requireKafka(ctx);
    await requireNats(ctx);
    const scenario = compileScenario(scenarioText('{ kind: corrupt-file, target: 0, when: { at: 2.5s }, files: newest-segment, chunks: 4, chunkBytes: 64 }'), 'flip.yaml', { defaultName: 'flip' });
    const { run, out } = await runScenarioHere(scenario, path.join(work, 'flip'));
    expect(run.cells.map((c) => c.status), out).toEqual(['ok', 'ok', 'ok']);
    for (const c of run.cells) {
      const { t, ff } = trialOf(c);
      console.log(`${c.params.target}: acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}, corrupt ${t.ledger.corrupt}, suspect ${t.suspect ?? false} ${t.note ?? ''}; changes ${JSON.stringify(ff.changes.map((x) => [x.file, x.offset, x.length]))}`);
      expect(ff).toMatchObject({ files: 'newest-segment', phase: 'stopped', stop: 'kill', unchanged: [] });
      expect(ff.changes).toHaveLength(4);
      expect(new Set(ff.changes.map((x) => x.file)).size).toBe(1);
      expect(t.ledger.acked).toBeGreaterThan(0);
      // Never nothing: the flipped records are served corrupt, or lost.
      expect(t.ledger.corrupt + t.ledger.ackedLost, `${c.params.target}: ${t.note}\n${out}`).toBeGreaterThan(0);
    }
    expect(out).toMatch(/corrupt-file changed broker \d+: \S+ @[\d,]+ \+64 \(bit-flip\)/);
  }, 300_000);
});

describe('file faults on three replicas', () => {
  const text = (fault: string) => `question: q?
cluster: { brokers: 3, topic: rot3, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { io: buffered, sync: fsync, acks: all, flush: per-batch }
workload: { recordBytes: 1KiB, recordsPerBatch: 16, connections: 2, pipelining: 1, warmup: 0s, duration: 5s, repetitions: 1, extraTrials: 0 }
faults:
  - ${fault}
`;

  it("on durolab's broker: a lost write under the running follower and a truncation to zero after a clean stop fire, are recorded, and are checked after the restart", async () => {
    const lost = compileScenario(text("{ kind: lost-write, target: one, when: { at: 1.5s }, duration: 2s, phase: running, chunkBytes: 65536 }"), 'lw.yaml', { defaultName: 'lw' });
    const a = await runScenarioHere(lost, path.join(work, 'lw'));
    const la = trialOf(a.run.cells[0]!);
    console.log(`lost-write: acked ${la.t.ledger.acked}, lost ${la.t.ledger.ackedLost}, corrupt ${la.t.ledger.corrupt}, replicas diverged ${la.t.ledger.replicasDiverged ?? "not measured"} from ${la.t.replicas?.firstDivergentOffset ?? "-"}; ${JSON.stringify(la.ff.changes)}`);
    expect(la.ff).toMatchObject({ files: 'newest-segment', phase: 'running', unchanged: [] });
    expect(la.ff.changes.length).toBeGreaterThan(0);
    expect(la.ff.changes.every((c) => c.how === 'lost-write' && c.oldSha256 !== c.newSha256)).toBe(true);
    expect(la.t.schedule![0]!.healMs! - la.t.schedule![0]!.startMs!).toBeGreaterThanOrEqual(1990);
    const cut = compileScenario(text('{ kind: truncate-file, target: leader, when: { at: 2s }, stop: clean, fraction: 1 }'), 'tr.yaml', { defaultName: 'tr' });
    const b = await runScenarioHere(cut, path.join(work, 'tr'));
    const tb = trialOf(b.run.cells[0]!);
    console.log(`truncate-file: acked ${tb.t.ledger.acked}, lost ${tb.t.ledger.ackedLost}, corrupt ${tb.t.ledger.corrupt}, diverged ${tb.t.ledger.replicasDisagree ?? 0}; ${JSON.stringify(tb.ff.changes)}`);
    expect(tb.ff).toMatchObject({ phase: 'stopped', stop: 'clean', unchanged: [] });
    expect(tb.ff.changes).toHaveLength(1);
    expect(tb.ff.changes[0]).toMatchObject({ how: 'truncate', offset: 0, sizeAfter: 0 });
    expect(tb.ff.changes[0]!.length).toBeGreaterThan(0);
    expect(b.out).toMatch(/truncate-file changed broker \d+: rot3-0\/\d{20}\.log @0 \+[\d,]+ \(truncate\)/);
  }, 180_000);
});

describe('fault read-error on the host fault disk', () => {
  it("on durolab's broker writing with O_DIRECT: a late consumer's reads of the failing blocks reach the NBD disk, fail there and are answered KAFKA_STORAGE_ERROR; healed, nothing acknowledged is lost", async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const scenario = compileScenario(
      `question: q?
cluster: { brokers: 1, topic: bad, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { io: direct, sync: fsync, acks: all, flush: per-batch }
vm: { diskMiB: 256 }
workload:
  driver: kafka
  recordBytes: 1KiB
  recordsPerBatch: 16
  connections: 2
  pipelining: 1
  rate: 300
  warmup: 0s
  duration: 6s
  repetitions: 1
  extraTrials: 0
  consumers:
    - { name: late, start: earliest, startAt: 2.5s }
faults:
  - { kind: read-error, target: 0, when: { at: 2s }, duration: 2.5s, files: newest-segment }
`,
      're.yaml',
      { defaultName: 're' },
    );
    const { run, out } = await runScenarioHere(scenario, path.join(work, 're'));
    const c = run.cells[0]!;
    const { t, ff } = trialOf(c);
    console.log(out.split('\n').filter((l) => /consumers late/.test(l)).join('\n'));
    console.log(`read-error: acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}; ranges ${ff.readErrors!.length}, hits ${JSON.stringify(ff.readHits)}; failures ${JSON.stringify(t.fault!.storageFailures?.map((x) => [x.errno, x.file]))}`);
    expect(ff.readErrors!.length).toBeGreaterThan(0);
    expect(ff.readErrors!.every((r) => r.mode === 'eio' && r.deviceTo > r.deviceFrom && r.file.endsWith('.log'))).toBe(true);
    expect(ff.unchanged).toEqual([]);
    // Reads reached the disk's failing blocks (each answered EIO by the NBD server).
    expect(ff.readHits!['1'] ?? 0, out).toBeGreaterThan(0);
    expect(t.ledger.acked).toBeGreaterThan(0);
    expect(t.ledger.ackedLost, out).toBe(0);
    // The broker answered the consumer's fetch of the bad blocks as Kafka does: KAFKA_STORAGE_ERROR (not an unknown error).
    expect(out).toMatch(/consumers late .*errors: bad-0: Fetch bad-0@\d+ on [\d.:]+: KAFKA_STORAGE_ERROR/);
    expect(out).toMatch(/read-error changed reads failing \(eio\) on broker 1: bad-0\/\d{20}\.log: \d+ range\(s\)/);
  }, 180_000);
});

describe('file faults: scenario check', () => {
  const compile = (target: string, fault: string, extra = '') =>
    compileScenario(`question: q?
target: ${target}
${extra}cluster: { brokers: 3, replicationFactor: 3, minInsyncReplicas: 2 }
workload: { duration: 6s, warmup: 0s }
faults:
  - ${fault}
`, 'ff.yaml', { defaultName: 'ff' });

  it('takes each kind on process, kafka and nats with its fields and defaults', () => {
    for (const target of ['process', 'kafka', 'nats']) {
      expect(compile(target, '{ kind: corrupt-file, target: one, when: { at: 2s } }').faults[0]).toMatchObject({ kind: 'corrupt-file', target: 'one' });
      expect(compile(target, '{ kind: truncate-file, target: [0, 1], when: { at: 2s }, files: older-segment, fraction: 1 }').faults[0]).toMatchObject({ target: { brokers: [0, 1] }, files: { set: 'older-segment' }, fraction: 1 });
      expect(compile(target, "{ kind: lost-write, target: minority, when: { at: 2s }, duration: 2s, files: 'a-0/*.log' }").faults[0]).toMatchObject({ files: { glob: 'a-0/*.log' } });
    }
  });

  it('refuses a set the system lacks, naming it and the sets offered; vm and external with the reason; stop with phase running; bytes and fraction together', () => {
    expect(() => compile('process', '{ kind: corrupt-file, target: 0, when: { at: 2s }, files: metadata }')).toThrow(
      /ff\.yaml:\d+:\d+ faults\[0\]\.files: expected process has no metadata file set \(durolab's controller runs in the harness: .*\); it offers newest-segment, older-segment, index, checkpoint or a glob, found metadata/,
    );
    expect(() => compile('process', '{ kind: corrupt-file, target: 0, when: { at: 2s }, files: /etc/passwd }')).toThrow(/faults\[0\]\.files: expected one of newest-segment \| older-segment/);
    expect(() => compile('vm', '{ kind: corrupt-file, target: 0, when: { at: 2s } }')).toThrow(/corrupt-file needs target: process \| kafka \| nats; target vm: its brokers' data dirs are ext4 inside QEMU guests/);
    expect(() => compile('external', '{ kind: truncate-file, target: 0, when: { at: 2s }, bytes: 10 }', 'external: { bootstrap: ["127.0.0.1:9092"], kill: ["true"], restart: ["true"] }\n')).toThrow(
      /faults\[0\]\.kind: expected .* on target: external \(truncate-file needs target: process \| kafka \| nats\)/,
    );
    expect(() => compile('kafka', '{ kind: corrupt-file, target: 0, when: { at: 2s }, phase: running, stop: clean }')).toThrow(/faults\[0\]\.stop: expected no stop: with phase: running/);
    expect(() => compile('kafka', '{ kind: truncate-file, target: 0, when: { at: 2s }, bytes: 10, fraction: 0.5 }')).toThrow(/faults\[0\]: expected exactly one of bytes: N \| fraction: F/);
    expect(() => compile('kafka', '{ kind: lost-write, target: 0, when: { at: 2s } }')).toThrow(/faults\[0\]\.duration: expected duration: S with a lost-write fault/);
    expect(() => compile('kafka', '{ kind: corrupt-file, target: [0, 5], when: { at: 2s } }')).toThrow(/faults\[0\]\.target: expected a broker id from 0 to 2 .*, found 5/);
  });
});
