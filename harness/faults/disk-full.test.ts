// Fault kind disk-full. On a real host fault disk (NBD -> FUSE -> loop -> ext4, 64 MiB): the
// filler takes every writable byte, by fallocate and by zeros alone, so a broker-like write and
// fdatasync in the data dir fails with ENOSPC, and its removal gives the space back. Through the
// scenario runner on durolab's broker and on Apache Kafka: the leader's disk fills under a load,
// its log names ENOSPC after the fill began, the trial is not suspect for it (the scenario asks
// for it), the filler is gone after the heal, the broker restarted and the check found nothing
// corrupt. And `scenario check`'s refusals, naming entry and field.
import { closeSync, existsSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { DEFAULT_DISK_SPEC } from '../model/disk-spec.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { HostFaultDisks, fileSystemSpace } from '../targets/host-fault-disks.ts';
import { compileScenario } from '../scenario/validate.ts';
import { accountingLines } from '../report/accounting-summary.ts';
import { requireKafkaAndFaultDisk, runScenarioHere } from '../runner/run-scenario-test-helpers.ts';
import { FILLER_NAME, fillFileSystem, removeFiller } from './disk-full.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-disk-full-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A 4 KiB write and fdatasync of a new file in `dir`, as a broker's append and flush: null when it succeeded, else the errno. */
function appendAndFlush(dir: string): string | null {
  const file = path.join(dir, `probe-${Date.now()}`);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, Buffer.alloc(4096, 7));
    fdatasyncSync(fd);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  } finally {
    closeSync(fd);
    unlinkSync(file);
  }
}

/** What ext4 keeps for its metadata on a disk of this size, which statfs counts free though no write takes it: 2 % of it, at most 16 MiB. */
const ext4Reserve = (diskBytes: number) => Math.min(Math.ceil(diskBytes * 0.02), 16 * 2 ** 20);

/** A fresh 64 MiB fault disk filled by `method`, a broker-like write refused, the filler removed, the write taken again. */
async function fillAndFree(method: 'fallocate' | 'zeros', ctx: TestContext): Promise<void> {
  const zerosOnly = method === 'zeros';
  const why = hostDiskPrerequisiteProblem();
  if (why) missingRequirement(ctx, why);
  const disks = await HostFaultDisks.create([1], path.join(work, method), { spec: DEFAULT_DISK_SPEC, sizeMiB: 64, mountOptions: '' }, 1, () => undefined, 'durolab broker');
  try {
    const root = disks.rootOf(1);
    const data = disks.dataDirOf(1);
    mkdirSync(data, { recursive: true });
    expect(appendAndFlush(data)).toBeNull();
    const free = fileSystemSpace(root).freeBytes;
    const d = await fillFileSystem(root, { zerosOnly });
    expect(d).toMatchObject({ filler: path.join(root, FILLER_NAME), method, freeBeforeBytes: free });
    expect(path.dirname(d.filler)).not.toBe(data);
    // Everything but what ext4 keeps for its own metadata went to the filler.
    const reserve = ext4Reserve(64 * 2 ** 20);
    expect(d.freeAfterBytes).toBeLessThanOrEqual(reserve + 64 * 1024);
    expect(d.fillerBytes).toBeGreaterThan(free - reserve - 256 * 1024);
    expect(appendAndFlush(data)).toBe('ENOSPC');
    const healed = await removeFiller(d);
    expect(healed.fillerGone).toBe(true);
    expect(existsSync(d.filler)).toBe(false);
    expect(healed.freeBytes).toBeGreaterThan(free - 256 * 1024);
    expect(appendAndFlush(data)).toBeNull();
    // Idempotent: a second heal finds nothing to remove.
    expect((await removeFiller(d)).fillerGone).toBe(true);
  } finally {
    await disks.close(false);
  }
}

describe('fault disk-full: the filler', () => {
  it('by fallocate takes every writable byte of a 64 MiB fault disk (ENOSPC in the data dir), its removal gives them back', (ctx) => fillAndFree('fallocate', ctx), 90_000);
  it('by zeros alone does the same (the fallback where fallocate is refused)', (ctx) => fillAndFree('zeros', ctx), 90_000);
});

// One broker per target keeps the cells short (Kafka's single node is its own controller and
// comes back alone); a rate-limited load (~1.6 MB/s) that runs on 3.5 s past the heal. Kafka's
// halted node leaves sends queued for a leader that comes back only after the load: a 4 s
// delivery.timeout.ms ends them (CLIENT_TIMEOUT) instead of the default 120 s.
const SCENARIO = `question: When a broker's disk fills under load, what does it refuse and does it lose or corrupt anything?
cluster:
  brokers: 1
  topic: disk-full
  partitions: 1
  replicationFactor: 1
  minInsyncReplicas: 1
settings:
  io: buffered
  sync: fsync
  acks: 1
  flush: never
matrix:
  target: [durolab, kafka]
workload:
  driver: kafka
  recordBytes: 1KiB
  recordsPerBatch: 16
  connections: 2
  pipelining: 1
  rate: 100
  warmup: 0s
  duration: 7s
  repetitions: 1
  extraTrials: 0
  producer:
    retries: 0
    delivery.timeout.ms: 4000
faults:
  - kind: disk-full
    target: leader
    when: { at: 1.5s }
    duration: 2s
expectations:
  - corrupt == 0 in every trial
  - lostBeyondPrediction == 0 in every trial
`;

describe('fault disk-full under load', () => {
  it("on durolab and on Kafka: the leader's log names ENOSPC after the fill, the trial is not suspect for it, the filler is gone, the broker restarted, nothing corrupt", async (ctx) => {
    await requireKafkaAndFaultDisk(ctx);
    const scenario = compileScenario(SCENARIO, 'disk-full-test.yaml', { defaultName: 'disk-full-test' });
    const { run, out } = await runScenarioHere(scenario, path.join(work, 'results'));
    const accounting = accountingLines(run).join('\n');
    expect(run.cells.map((c) => [c.params.target, c.status])).toEqual([
      ['durolab', 'ok'],
      ['kafka', 'ok'],
    ]);
    for (const c of run.cells) {
      const t = c.trials![0]!;
      const f = t.fault!;
      const broker = c.params.target === 'kafka' ? 0 : 1;
      console.log(`${c.id}: acked ${t.ledger.acked}, errors ${JSON.stringify(t.errors)}, after the fault ${JSON.stringify(t.errorsAfterFault)}, lost ${t.ledger.ackedLost}, failures ${JSON.stringify(f.storageFailures?.map((x) => [x.errno, x.file]))}, recovery ${JSON.stringify(f.recoverySteps)}`);
      expect(f).toMatchObject({ kind: 'disk-full', targets: [broker] });
      // The fill took the disk, and the heal gave it back (the filler removed, its space free again).
      const d = f.filledDisks![broker]!;
      expect(d.method).toBe('fallocate');
      expect(d.freeAfterBytes, out).toBeLessThanOrEqual(ext4Reserve(2048 * 2 ** 20) + 1024 * 1024);
      expect(d.healed, out).toMatchObject({ fillerGone: true });
      expect(d.healed!.freeBytes).toBeGreaterThan(d.fillerBytes);
      expect(d.healed!.atMs - d.atMs).toBeGreaterThanOrEqual(1990);
      // The broker's own log named ENOSPC, after the fill began and before the heal.
      const enospc = f.storageFailures?.find((x) => x.brokerId === broker && x.errno === 'ENOSPC');
      expect(enospc, out).toBeDefined();
      expect(enospc!.atMs!).toBeGreaterThanOrEqual(d.atMs - 1);
      expect(enospc!.atMs!).toBeLessThanOrEqual(d.healed!.atMs);
      // Produces were refused after the fault started (KAFKA_STORAGE_ERROR, or no answer from a halted broker).
      const refused = Object.values(t.errorsAfterFault ?? {}).reduce((a, n) => a + n, 0);
      expect(refused, out).toBeGreaterThan(0);
      expect(accounting).toContain(`target=${c.params.target}: KAFKA_STORAGE_ERROR `);
      expect(accounting).toContain(`broker ${broker}'s log dir is offline after ENOSPC on `);
      // Asked for: not suspect for the full disk (nor for anything else).
      expect(t.suspect, `${t.note}\n${out}`).toBeUndefined();
      // Restarted after the heal, recovered, checked.
      expect(f.recovery.map((r) => r.broker)).toEqual([broker]);
      expect(f.recovery[0]!.cleanShutdown).toBe(false);
      expect(t.ledger.acked).toBeGreaterThan(0);
      expect(f.ackedBeforeCut).toBeGreaterThan(0);
      expect(t.ledger.corrupt).toBe(0);
      expect(t.ledger.lostBeyondPrediction).toBe(0);
    }
    expect(out).toMatch(/schedule: disk-full of broker 1 \d+\.\d\d-\d+\.\d\d s/);
    expect(out).toMatch(/broker 0's disk filled: [\d.]+ MiB filler \(fallocate\) in [\d.]+ s, [\d.]+ MiB left free of [\d.]+ MiB; healed: [\d.]+ MiB free/);
    expect(out).not.toMatch(/FULL DISK/);
  }, 180_000);
});

describe('fault disk-full: scenario check', () => {
  const scenario = (over: { target?: string; fault?: string; extra?: string }) => `question: q?
${over.target ? `target: ${over.target}\n` : ''}${over.extra ?? ''}cluster: { brokers: 3, replicationFactor: 3, minInsyncReplicas: 2 }
workload: { duration: 6s, warmup: 0s }
faults:
  - ${over.fault ?? '{ kind: disk-full, target: leader, when: { at: 2s }, duration: 2s }'}
`;
  const compile = (text: string) => compileScenario(text, 'df.yaml', { defaultName: 'df' });

  it('takes a disk-full on the process and kafka targets, on the host fault disk', () => {
    for (const target of ['process', 'kafka']) expect(compile(scenario({ target })).faults[0]).toMatchObject({ kind: 'disk-full', duration: 2 });
  });

  it('refuses it on vm (and says why), on external, without a duration, and healing after the load', () => {
    expect(() => compile(scenario({ target: 'vm' }))).toThrow(
      /df\.yaml:\d+:\d+ faults\[0\]\.kind: expected .* on target: vm \(disk-full needs target: process \| kafka \| nats; target vm: its brokers' disks are ext4 inside QEMU guests.*\), found 'disk-full'/,
    );
    expect(() => compile(scenario({ target: 'external', extra: 'external: { bootstrap: ["127.0.0.1:9092"], kill: ["true"], restart: ["true"] }\n' }))).toThrow(
      /faults\[0\]\.kind: expected .* on target: external \(disk-full needs target: process \| kafka \| nats\), found 'disk-full'/,
    );
    expect(() => compile(scenario({ fault: '{ kind: disk-full, target: leader, when: { at: 2s } }' }))).toThrow(
      /faults\[0\]\.duration: expected duration: S with a disk-full fault \(how long it lasts before its heal\), found none/,
    );
    expect(() => compile(scenario({ fault: '{ kind: disk-full, target: leader, when: { at: 2s }, duration: 5s }' }))).toThrow(
      /faults\[0\]\.duration: expected a disk-full that heals within the load \(warm-up \+ duration = 6 s; starting at 2 s, at most 4 s\), found 5 s/,
    );
  });
});
