import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError, cellSettings, listScenarios, loadScenario } from './index.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCENARIOS = path.join(REPO, 'scenarios');
const SHIPPED = [
  'peer-acks-all',
  'peer-power-cut-all',
  'peer-power-cut-leader',
  'peer-crash-states',
  'peer-lying-disk',
  'peer-fsync-eio',
  'peer-fsync-intervals',
  'peer3-power-cut-all',
  'nats-power-cut-all',
  'nats-power-cut-late',
  'planned-leader-move',
  'disk-full',
  'corrupt-minority',
  'cords-table',
  'nats-meta-emptied',
  'durability-frontier',
  'lagging-consumer',
  'zero-copy',
  'recovery-time',
  'recovery-time-power-cut',
  'partitions-scale',
  'producer-idempotence',
  'producer-inflight',
  'kafka-libraries',
  'namespace-cost',
  'slow-follower',
  'isr-shrink-power-cut',
  'zombie-leader',
  'partition-majority',
  'io-modes',
  'fsync-intervals',
  'acks-all',
  'segment-roll',
  'dirty-writeback',
  'power-cut-io-modes',
  'power-cut-acks',
  'power-cut-all',
  'power-cut-smoke',
  'power-cut-expiry',
  'process-kill',
  'disk-cache-io-modes',
  'lying-disk',
  'fsync-eio',
  'torn-writes',
  'nbd-disk-cost',
  'nbd-power-cut-smoke',
  'crash-states-io-modes',
];
/** The NBD disk's scenarios (harness/disk): VM target, a vm.disk block. */
const DISK_SCENARIOS = ['disk-cache-io-modes', 'lying-disk', 'fsync-eio', 'torn-writes', 'nbd-disk-cost', 'nbd-power-cut-smoke'];
const SMOKE = ['power-cut-smoke', 'nbd-power-cut-smoke'];
/** Network and process faults with a duration (issue 35): a load long enough for the fault, the ISR's reaction and the heal. */
const LASTING_FAULT_SCENARIOS = ['slow-follower', 'isr-shrink-power-cut', 'zombie-leader', 'partition-majority'];
/** A cut late in a longer load on purpose: nats-power-cut-all cuts 12-16 s in, after a 10 s sync_interval's first sync; nats-power-cut-late 40-44 s in, after the kernel's writeback. */
const LATE_CUT_SCENARIOS = ['nats-power-cut-all', 'nats-power-cut-late'];

const tmp = mkdtempSync(path.join(tmpdir(), 'durolab-scenario-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let counter = 0;
function writeScenario(text: string, name = `s${counter++}`): string {
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

function issuesOf(file: string, opts: { durationSec?: number; repeat?: number } = {}): ScenarioError['issues'] {
  try {
    loadScenario(file, opts);
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues;
    throw err;
  }
  throw new Error(`${file} loaded without errors`);
}

const VALID = `question: Does it work?
cluster:
  brokers: 3
  replicationFactor: 3
  minInsyncReplicas: 2
settings:
  io: buffered
matrix:
  flush: [never, per-batch]
  acks: [1, all]
workload:
  duration: 5s
`;

describe('shipped scenarios', () => {
  it.each(SHIPPED)('%s loads, has a question, a comment block and cells of 5-10 s', (name) => {
    const s = loadScenario(name, { scenariosDir: SCENARIOS });
    expect(s.name).toBe(name);
    expect(s.question.length).toBeGreaterThan(20);
    expect(s.matrix.length).toBeGreaterThan(0);
    // The CI smoke power cut is deliberately shorter than the 5-10 s cells of the rest.
    expect(s.workload.durationSec).toBeGreaterThanOrEqual(SMOKE.includes(name) ? 2 : 5);
    // A late cut needs its load to run that long (nats-power-cut-late: 44 s, past the kernel's 30 s writeback).
    expect(s.workload.durationSec).toBeLessThanOrEqual(LATE_CUT_SCENARIOS.includes(name) ? 45 : LASTING_FAULT_SCENARIOS.includes(name) ? 30 : 10);
    expect(s.expectations.length).toBeGreaterThan(0);
    const ids = s.matrix.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const cell of s.matrix) expect(() => cellSettings(s, cell)).not.toThrow();
  });

  it('every shipped file starts with a comment block saying what it answers', async () => {
    const { readFileSync } = await import('node:fs');
    for (const name of SHIPPED) {
      const text = readFileSync(path.join(SCENARIOS, `${name}.yaml`), 'utf8');
      const head = text.split('\n').filter((l) => l.startsWith('#'));
      expect(text.startsWith('#'), name).toBe(true);
      expect(head.join('\n'), name).toMatch(/Question:/);
      expect(head.join('\n'), name).toMatch(/How to read the result:/);
    }
  });

  it('process scenarios assert a clean ledger in every cell; power-cut scenarios use the vm target, peer power cuts both engines on the host fault disk', () => {
    for (const name of SHIPPED) {
      const s = loadScenario(name, { scenariosDir: SCENARIOS });
      if (name.startsWith('power-cut')) {
        expect(s.target).toBe('vm');
        // power-cut-expiry commits the journal every second so the dirty expiry alone separates its cells.
        if (name === 'power-cut-expiry') expect(s.vm).toEqual(expect.objectContaining({ accelerator: 'auto', mountOptions: 'commit=1' }));
        else if (name !== 'power-cut-smoke') expect(s.vm).toEqual(expect.objectContaining({ accelerator: 'auto', mountOptions: 'commit=5' }));
        expect(s.faults[0].kind).toBe('power-cut');
        expect(s.workload.repetitions).toBeGreaterThan(1);
      } else if (name === 'peer-acks-all') {
        // acks=1 may lose what only the killed leader had: only acks=all is held to no loss.
        expect(s.faults[0].kind).toBe('process-kill');
        expect(s.expectations.map((e) => e.expression)).toContain('ackedLost == 0 where acks == all in every trial');
      } else if (DISK_SCENARIOS.includes(name)) {
        expect(s.target).toBe('vm');
        expect(s.vm?.disk ?? s.matrix.some((c) => 'vm.disk.model' in c.params)).toBeTruthy();
        if (s.faults.length > 0) {
          expect(s.faults[0].kind).toBe('power-cut');
          expect(s.workload.repetitions).toBeGreaterThan(SMOKE.includes(name) ? 0 : 1);
        }
      } else if (name.startsWith('peer-') && s.faults[0]?.kind === 'power-cut') {
        // Both engines on the host route's fault disk, through the same Kafka client.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.workload.driver).toBe('kafka');
        expect(s.vm).toEqual(expect.objectContaining({ mountOptions: 'commit=5' }));
        expect(s.workload.repetitions).toBeGreaterThan(1);
        expect(s.expectations.map((e) => e.expression)).toContain('corrupt == 0 in every trial');
      } else if (name.startsWith('crash-states') || name === 'peer-crash-states') {
        // One recorded trial yields hundreds of crash states: repetitions are not needed for a distribution.
        if (name === 'peer-crash-states') {
          // Both engines on the host route's recorded fault disk, through the same Kafka client.
          expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
          expect(s.workload.driver).toBe('kafka');
        } else expect(s.target).toBe('vm');
        expect(s.faults[0]).toMatchObject({ kind: 'crash-states', onCut: 'drop-unflushed' });
        expect((s.faults[0] as unknown as { states: number }).states).toBeGreaterThanOrEqual(200);
      } else if (name === 'lagging-consumer') {
        // A tailing group and one that starts 7 s in from the log start, on both engines.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.workload.consumers.map((c) => [c.name, c.start, c.startAt])).toEqual([['tailing', { from: 'latest' }, 0], ['lagging', { from: 'earliest' }, 7]]);
        expect(s.expectations.map((e) => e.expression)).toEqual(expect.arrayContaining(['consumerChecks.skipped == 0', 'consumerChecks.nonMonotonic == 0']));
        expect(s.requiresRoot).toBe(true);
        expect([...new Set(s.matrix.map((c) => c.params['consumer.cache']))]).toEqual(['warm', 'cold']);
      } else if (name === 'durability-frontier') {
        // Every setting twice, without and under a rack cut, on both engines.
        expect([...new Set(s.matrix.map((c) => c.params.measure))].sort()).toEqual(['loss', 'throughput']);
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka', 'nats']);
        // Each system through its own driver; NATS at acks all with its sync_interval's values only.
        for (const c of s.matrix) expect(c.params.driver, c.id).toBe(c.params.target === 'nats' ? 'nats' : 'kafka');
        expect([...new Set(s.matrix.filter((c) => c.params.target === 'nats').map((c) => c.params.flush))]).toEqual(['never', 'ms:10000', 'per-batch']);
        // NATS at R1 and R3, the others at the cluster's RF 3.
        expect([...new Set(s.matrix.filter((c) => c.params.target === 'nats').map((c) => c.params['replication.factor']))].sort()).toEqual([1, 3]);
        expect([...new Set(s.matrix.filter((c) => c.params.target !== 'nats').map((c) => c.params['replication.factor']))]).toEqual([3]);
        expect(s.faults[0]).toMatchObject({ kind: 'power-cut', target: 'all' });
        expect(s.expectations.map((e) => e.expression)).toContain('lostBeyondPrediction == 0 where measure == loss in every trial');
      } else if (name === 'nats-power-cut-late') {
        // The cut after the kernel wrote the stream's config back: default vs 10 s, the stream at R1 and R3.
        expect(s.target).toBe('nats');
        expect(s.matrix.map((c) => [c.params.flush, c.params['replication.factor']])).toEqual([['never', 1], ['never', 3], ['ms:10000', 1], ['ms:10000', 3]]);
        expect(s.faults[0]).toMatchObject({ kind: 'power-cut', target: 'all', when: { between: [40, 44] } });
        expect(s.workload.repetitions).toBeGreaterThanOrEqual(5);
      } else if (name === 'nats-power-cut-all') {
        // Jepsen's table: 3 nodes, R3, sync_interval default / 10 s / always, the rack cut after the 10 s cell's first sync.
        expect(s.target).toBe('nats');
        expect(s.workload.driver).toBe('nats');
        expect(s.cluster).toMatchObject({ brokers: 3, replicationFactor: 3 });
        expect(s.matrix.map((c) => c.params.flush)).toEqual(['never', 'ms:10000', 'per-batch']);
        expect(s.faults[0]).toMatchObject({ kind: 'power-cut', target: 'all', when: { between: [12, 16] } });
        expect(s.workload.repetitions).toBeGreaterThanOrEqual(5);
        expect(s.expectations.map((e) => e.expression)).toEqual(expect.arrayContaining(['ackedLost == 0 where flush == per-batch in every trial', 'lostBeyondPrediction == 0 in every trial']));
      } else if (name === 'peer3-power-cut-all') {
        // Three systems, one load shape, each through its own driver (the Kafka-protocol ones through the same client).
        expect(s.matrix.map((c) => [c.params.target, c.params.driver, c.params.flush])).toEqual([
          ['durolab', 'kafka', 'never'], ['durolab', 'kafka', 'per-batch'], ['kafka', 'kafka', 'never'], ['kafka', 'kafka', 'per-batch'], ['nats', 'nats', 'never'], ['nats', 'nats', 'per-batch'],
        ]);
        expect(s.faults[0]).toMatchObject({ kind: 'power-cut', target: 'all' });
        expect(s.expectations.map((e) => e.expression)).toContain('ackedLost == 0 where flush == per-batch in every trial');
      } else if (name === 'recovery-time-power-cut') {
        // Both engines on the host route's fault disk, a cut of the broker: what acks=1 without a flush loses is predicted.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.faults[0]).toMatchObject({ kind: 'power-cut', target: 'all' });
        // The preload check wants twice the largest preload free on the disk.
        expect(s.vm?.diskMiB).toBeGreaterThan(2 * 4096);
        expect(s.expectations.map((e) => e.expression)).toEqual(expect.arrayContaining(['lostBeyondPrediction == 0 in every trial', 'corrupt == 0 in every trial']));
      } else if (name === 'planned-leader-move') {
        // A move on both engines; acks=all is held to no loss, acks=1 is what is measured.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.faults[0]).toMatchObject({ kind: 'move-leader', target: 'leader' });
        expect(s.expectations.map((e) => e.expression)).toContain('ackedLost == 0 where acks == all in every trial');
      } else if (name === 'disk-full') {
        // The leader's host fault disk filled on purpose on both engines, healed, restarted; the errors are the figures.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.faults[0]).toMatchObject({ kind: 'disk-full', target: 'leader', duration: 5 });
        expect(s.expectations.map((e) => e.expression)).toEqual(expect.arrayContaining(['lostBeyondPrediction == 0 in every trial', 'corrupt == 0 in every trial']));
      } else if (name === 'corrupt-minority' || name === 'cords-table') {
        // Bad blocks on the three systems, each through its own driver; a row per fault schedule (faultSets:).
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka', 'nats']);
        for (const c of s.matrix) expect(c.params.driver, c.id).toBe(c.params.target === 'nats' ? 'nats' : 'kafka');
        expect(s.matrix.every((c) => typeof c.params.faults === 'string' && s.faultSets[c.params.faults as string])).toBe(true);
        expect(s.expectations.map((e) => e.expression)).toContain('corrupt == 0 in every trial');
      } else if (name === 'nats-meta-emptied') {
        expect(s.target).toBe('nats');
        expect(s.faultSets['after-clean-stop']![0]).toMatchObject({ kind: 'truncate-file', target: 'all', files: { set: 'metadata' }, fraction: 1, stop: 'clean' });
        expect(s.faultSets['after-kill']![0]).toMatchObject({ kind: 'truncate-file', target: 'all', files: { set: 'metadata' }, fraction: 1, stop: 'kill' });
        expect(s.expectations.map((e) => e.expression)).toContain('ackedLost == 0 in every trial');
      } else if (LASTING_FAULT_SCENARIOS.includes(name)) {
        // Both engines through the same Kafka client; a partition runs them in namespaces; nothing may be corrupt.
        expect([...new Set(s.matrix.map((c) => c.params.target))].sort()).toEqual(['durolab', 'kafka']);
        expect(s.workload.driver).toBe('kafka');
        expect(s.faults.some((f) => f.kind === 'pause' || f.kind === 'partition')).toBe(true);
        if (s.faults.some((f) => f.kind === 'partition')) expect(s.cluster.network).toBe('namespaces');
        expect(s.expectations.map((e) => e.expression)).toContain('corrupt == 0 in every trial');
      } else if (s.faults.length > 0) {
        expect(s.target).toBe('process');
        expect(s.faults.every((f) => f.kind === 'process-kill')).toBe(true);
        expect(s.expectations.map((e) => e.expression)).toContain('ackedLost == 0 in every trial');
      } else {
        expect(s.target).toBe('process');
        const unconditional = s.expectations.filter((e) => e.left.where.length === 0).map((e) => e.expression);
        expect(unconditional).toEqual(expect.arrayContaining(['ackedLost == 0', 'duplicates == 0', 'outOfOrder == 0', 'corrupt == 0']));
      }
    }
  });

  it('io-modes is 6 cells x 5 s, buffered/direct/dsync with flush never, each through the http and the kafka driver', () => {
    const s = loadScenario('io-modes', { scenariosDir: SCENARIOS });
    expect(s.matrix.map((c) => c.id)).toEqual([
      'io=buffered,driver=http',
      'io=buffered,driver=kafka',
      'io=direct,driver=http',
      'io=direct,driver=kafka',
      'io=dsync,driver=http',
      'io=dsync,driver=kafka',
    ]);
    expect(s.workload).toMatchObject({ durationSec: 5, recordBytes: 1024, recordsPerBatch: 16, connections: 8, rate: null, driver: 'http' });
    expect(cellSettings(s, s.matrix[2])).toMatchObject({ io: 'direct', flush: { kind: 'never' } });
    expect(cellSettings(s, s.matrix[3]).values.driver).toBe('kafka');
  });

  it('producer-idempotence compares enable.idempotence under a leader kill and holds only the idempotent cell to no duplicates', () => {
    const s = loadScenario('producer-idempotence', { scenariosDir: SCENARIOS });
    expect(s.workload.driver).toBe('kafka');
    expect(s.matrix.map((c) => c.params)).toEqual([{ 'enable.idempotence': true }, { 'enable.idempotence': false }]);
    expect(s.faults[0]).toMatchObject({ kind: 'process-kill', target: 'leader' });
    expect(s.expectations.map((e) => e.expression)).toContain('duplicates == 0 where enable.idempotence == true in every trial');
    expect(s.expectations.some((e) => e.expression.startsWith('duplicates') && e.left.where.length === 0)).toBe(false);
  });

  it('producer-inflight compares max.in.flight 1 and 5 without idempotence and holds only 1 to no reordering', () => {
    const s = loadScenario('producer-inflight', { scenariosDir: SCENARIOS });
    expect(s.matrix.map((c) => c.params['max.in.flight'])).toEqual([1, 5]);
    expect(cellSettings(s, s.matrix[1]).values['enable.idempotence']).toBe(false);
    expect(s.expectations.map((e) => e.expression)).toContain('outOfOrder == 0 where max.in.flight == 1 in every trial');
  });

  it('dirty-writeback needs root and sets host sysctls per cell', () => {
    const s = loadScenario('dirty-writeback', { scenariosDir: SCENARIOS });
    expect(s.requiresRoot).toBe(true);
    const small = s.matrix.find((c) => c.params['vm.dirty_bytes'] !== undefined)!;
    expect(cellSettings(s, small).sysctls).toEqual({
      'vm.dirty_expire_centisecs': 3000,
      'vm.dirty_writeback_centisecs': 500,
      'vm.dirty_background_bytes': 8 * 1024 * 1024,
      'vm.dirty_bytes': 32 * 1024 * 1024,
    });
  });

  it('power-cut-io-modes has the seven write paths', () => {
    const s = loadScenario('power-cut-io-modes', { scenariosDir: SCENARIOS });
    expect(s.matrix.map((c) => c.id)).toEqual([
      'io=buffered,flush=never,vm.dirty_expire_centisecs=30s',
      'io=buffered,flush=never,vm.dirty_expire_centisecs=1h',
      'io=buffered,flush=messages:1000',
      'io=buffered,flush=per-batch',
      'io=dsync,flush=never',
      'io=direct,flush=never',
      'io=direct,flush=per-batch',
    ]);
    expect(cellSettings(s, s.matrix[1]).sysctls).toEqual({ 'vm.dirty_expire_centisecs': 360000 });
    expect(cellSettings(s, s.matrix[6])).toMatchObject({ io: 'direct', flush: { kind: 'per-batch' }, sync: 'fdatasync' });
    expect(s.faults).toEqual([{ kind: 'power-cut', target: 'all', when: { between: [2, 5] } }]);
  });

  it('listScenarios lists every file with its question', () => {
    const list = listScenarios(SCENARIOS);
    expect(list.map((s) => s.name).sort()).toEqual([...SHIPPED].sort());
    for (const s of list) expect(s.question).not.toBe('');
  });
});

describe('finding files', () => {
  it('an unknown name lists the available scenarios', () => {
    expect(() => loadScenario('acks-al', { scenariosDir: SCENARIOS })).toThrow(
      /unknown scenario 'acks-al' \(no .*acks-al\.yaml\); did you mean 'acks-all'\?; available: acks-all, cords-table, corrupt-minority, crash-states-io-modes, dirty-writeback,/,
    );
    expect(() => loadScenario('zzz', { scenariosDir: SCENARIOS })).toThrow(/unknown scenario 'zzz' \(no .*\); available: /);
  });

  it('a path is used as is; the name defaults to the file stem', () => {
    const file = writeScenario(VALID, 'my-test');
    const s = loadScenario(file);
    expect(s.name).toBe('my-test');
    expect(s.file).toBe(file);
    expect(() => loadScenario(path.join(tmp, 'missing.yaml'))).toThrow(/missing\.yaml does not exist/);
    // A directory given as the scenario: named, not EISDIR.
    expect(() => loadScenario(`${tmp}/`)).toThrow(`scenario file ${tmp}/ is a directory: expected a scenario name or a .yaml file`);
  });

  it('a name resolves in scenariosDir, .yml too', () => {
    const dir = path.join(tmp, 'dir');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'short.yml'), VALID);
    expect(loadScenario('short', { scenariosDir: dir }).name).toBe('short');
  });
});

describe('overrides', () => {
  it('DURATION and REPEAT replace the workload values', () => {
    const s = loadScenario(writeScenario(VALID), { durationSec: 2, repeat: 4 });
    expect(s.workload.durationSec).toBe(2);
    expect(s.workload.repetitions).toBe(4);
    const plain = loadScenario(writeScenario(VALID));
    expect(plain.workload).toMatchObject({ durationSec: 5, repetitions: 1, warmupSec: 1, extraTrials: 2 });
    expect(loadScenario(writeScenario(VALID.replace('workload:', 'workload:\n  extraTrials: 0'))).workload.extraTrials).toBe(0);
  });

  it('bad override values are refused', () => {
    const file = writeScenario(VALID);
    expect(() => loadScenario(file, { durationSec: 0 })).toThrow(/DURATION: expected a number of seconds > 0, found 0/);
    expect(() => loadScenario(file, { repeat: 1.5 })).toThrow(/REPEAT: expected an integer >= 1, found 1.5/);
  });

  it('a DURATION that ends the load before a fault is an error naming the override', () => {
    const text = `question: q
target: vm
workload: { warmup: 1s, duration: 10s }
faults:
  - kind: power-cut
    target: all
    when: { at: 8s }
`;
    const file = writeScenario(text);
    expect(loadScenario(file).faults[0].when).toEqual({ at: 8 });
    const issues = issuesOf(file, { durationSec: 3 });
    expect(issues).toEqual([
      expect.objectContaining({ line: 7, column: 17, path: 'faults[0].when.at', found: '8 s' }),
    ]);
    expect(issues[0].expected).toMatch(/warm-up \+ duration = 4 s, duration set by DURATION/);
  });
});

// Each malformed file yields exactly one issue at a known place.
const MALFORMED: Array<{ name: string; text: string; line: number; column: number; path: string; expected: RegExp; found: string }> = [
  {
    name: 'a measure: loss axis without a fault',
    text: `question: q\nmatrix:\n  measure: [throughput, loss]\n`,
    line: 3,
    column: 12,
    path: 'matrix.measure',
    expected: /^a faults: entry for the measure: loss cells to run under$/,
    found: 'no faults',
  },
  {
    name: 'a measure value that is not one',
    text: `question: q\nmatrix:\n  measure: [speed]\n`,
    line: 3,
    column: 13,
    path: 'matrix.measure[0]',
    expected: /^throughput \| loss/,
    found: "'speed'",
  },
  {
    name: 'bad type',
    text: `question: q\ncluster:\n  brokers: three\n`,
    line: 3,
    column: 12,
    path: 'cluster.brokers',
    expected: /^an integer from 1 to 9$/,
    found: "'three'",
  },
  {
    name: 'unknown key with a suggestion',
    text: `question: q\nsettings:\n  flsuh: never\n`,
    line: 3,
    column: 3,
    path: 'settings.flsuh',
    expected: /did you mean 'flush'\?/,
    found: "'flsuh'",
  },
  {
    name: 'unknown top-level key without a close match',
    text: `question: q\nbananas: 3\n`,
    line: 2,
    column: 1,
    path: 'bananas',
    expected: /^one of name, question, description, target, vm, external, cluster/,
    found: "'bananas'",
  },
  {
    name: 'bad flush string',
    text: `question: q\nmatrix:\n  flush: [never, per-batch, sometimes]\n`,
    line: 3,
    column: 29,
    path: 'matrix.flush[2]',
    expected: /^never\|per-batch\|messages:N\|ms:T$/,
    found: "'sometimes'",
  },
  {
    name: 'flush messages:0',
    text: `question: q\nsettings:\n  flush: messages:0\n`,
    line: 3,
    column: 10,
    path: 'settings.flush',
    expected: /messages:N/,
    found: "'messages:0'",
  },
  {
    name: 'bad size',
    text: `question: q\nsettings:\n  segment.bytes: 64 kilobytes\n`,
    line: 3,
    column: 18,
    path: 'settings.segment.bytes',
    expected: /^a size from 61 bytes to 2GiB-1/,
    found: "'64 kilobytes'",
  },
  {
    name: 'too many extra trials',
    text: `question: q\nworkload:\n  extraTrials: 21\n`,
    line: 3,
    column: 16,
    path: 'workload.extraTrials',
    expected: /^an integer from 0 to 20$/,
    found: '21',
  },
  {
    name: 'fractional byte size',
    text: `question: q\nworkload:\n  recordBytes: 1.3KiB\n`,
    line: 3,
    column: 16,
    path: 'workload.recordBytes',
    expected: /record size/,
    found: "'1.3KiB'",
  },
  {
    name: 'bad duration',
    text: `question: q\nsettings:\n  segment.ms: 7 days\n`,
    line: 3,
    column: 15,
    path: 'settings.segment.ms',
    expected: /^a duration >= 1ms/,
    found: "'7 days'",
  },
  {
    name: 'missing question',
    text: `# a comment first\ncluster:\n  brokers: 1\n`,
    line: 2,
    column: 1,
    path: 'question',
    expected: /question this scenario answers.*required/,
    found: 'nothing',
  },
  {
    name: 'empty matrix list',
    text: `question: q\nmatrix:\n  io: []\n`,
    line: 3,
    column: 7,
    path: 'matrix.io',
    expected: /^a non-empty list$/,
    found: 'an empty list',
  },
  {
    name: 'matrix value not a list',
    text: `question: q\nmatrix:\n  io: direct\n`,
    line: 3,
    column: 7,
    path: 'matrix.io',
    expected: /^a list$/,
    found: "'direct'",
  },
  {
    name: 'YAML syntax error',
    text: `question: q\nmatrix:\n  io: [buffered, direct\nworkload: {}\n`,
    line: 4,
    column: 1,
    path: 'yaml',
    expected: /^valid YAML \(Flow sequence/,
    found: "'workload: {}'",
  },
  {
    name: 'duplicate key',
    text: `question: q\nquestion: r\n`,
    line: 2,
    column: 1,
    path: 'yaml',
    expected: /Map keys must be unique/,
    found: "'question: r'",
  },
  {
    name: 'rf > brokers',
    text: `question: q\ncluster:\n  brokers: 2\n  replicationFactor: 3\n`,
    line: 4,
    column: 22,
    path: 'cluster.replicationFactor',
    expected: /^at most cluster.brokers \(2\)$/,
    found: '3',
  },
  {
    name: 'min ISR > RF',
    text: `question: q\ncluster:\n  brokers: 3\n  replicationFactor: 2\n  minInsyncReplicas: 3\n`,
    line: 5,
    column: 22,
    path: 'cluster.minInsyncReplicas',
    expected: /^at most the replication factor \(2\)$/,
    found: '3',
  },
  {
    name: 'min.insync.replicas in the matrix > RF',
    text: `question: q\ncluster: { brokers: 3 }\nmatrix:\n  min.insync.replicas: [1, 2, 4]\n`,
    line: 4,
    column: 31,
    path: 'matrix.min.insync.replicas[2]',
    expected: /at most the replication factor \(3\)/,
    found: '4',
  },
  {
    name: 'a client driver that is not in the driver registry',
    text: `question: q\nworkload: { driver: grpc }\n`,
    line: 2,
    column: 21,
    path: 'workload.driver',
    expected: /^http\|kafka\|nats$/,
    found: "'grpc'",
  },
  {
    name: 'a fault kind that is not in the fault registry',
    text: `question: q\nfaults:\n  - { kind: freeze, target: all, when: { at: 2 } }\n`,
    line: 3,
    column: 13,
    path: 'faults[0].kind',
    expected: /^power-cut\|process-kill\|crash-states\|move-leader\|pause\|partition\|slow-link\|disk-full\|corrupt-file\|truncate-file\|lost-write\|read-error$/,
    found: "'freeze'",
  },
  {
    name: 'crash states on a cluster the lab did not start',
    text: `question: q\ntarget: external\nexternal: { bootstrap: ["127.0.0.1:9092"], kill: ["true"], restart: ["true"] }\nfaults:\n  - kind: crash-states\n    target: 0\n    states: 10\n    when: { at: 2 }\n`,
    line: 5,
    column: 11,
    path: 'faults[0].kind',
    expected: /on target: external \(crash-states needs target: process \| vm \| kafka \| nats\)/,
    found: "'crash-states'",
  },
  {
    name: 'fault target beyond the brokers',
    text: `question: q\ntarget: vm\ncluster: { brokers: 3 }\nfaults:\n  - { kind: process-kill, target: 3, when: { afterAcked: 1000 } }\n`,
    line: 5,
    column: 35,
    path: 'faults[0].target',
    expected: /^a broker id from 0 to 2 \| leader \| followers \| one \| minority \| majority \| all$/,
    found: '3',
  },
  {
    name: 'fault with two whens',
    text: `question: q\ntarget: vm\nfaults:\n  - kind: power-cut\n    target: leader\n    when: { at: 2, afterAcked: 10 }\n`,
    line: 6,
    column: 11,
    path: 'faults[0].when',
    expected: /exactly one of at/,
    found: 'at and afterAcked',
  },
  {
    name: 'host sysctls without requiresRoot',
    text: `question: q\nmatrix:\n  vm.dirty_expire_centisecs: [100, 3000]\n`,
    line: 3,
    column: 3,
    path: 'matrix.vm.dirty_expire_centisecs',
    expected: /requiresRoot: true/,
    found: 'vm.dirty_expire_centisecs without requiresRoot',
  },
  {
    name: 'ratio and bytes in one place',
    text: `question: q\ntarget: vm\nsettings:\n  vm.dirty_ratio: 20\n  vm.dirty_bytes: 64MiB\n`,
    line: 5,
    column: 3,
    path: 'settings.vm.dirty_bytes',
    expected: /either vm.dirty_ratio or vm.dirty_bytes/,
    found: 'both',
  },
  {
    name: 'misspelt target (reported once, not through the vm block and the fault)',
    text: `question: q\ntarget: vmm\nvm: { memoryMiB: 512 }\nfaults:\n  - { kind: power-cut, target: all, when: { at: 2 } }\n`,
    line: 2,
    column: 9,
    path: 'target',
    expected: /^process\|vm\|kafka\|external\|nats$/,
    found: "'vmm'",
  },
  {
    name: 'a guest-only vm key on the process target (its fault disk takes disk, diskMiB, mountOptions)',
    text: `question: q\nvm: { diskMiB: 512, memoryMiB: 512 }\n`,
    line: 2,
    column: 21,
    path: 'vm.memoryMiB',
    expected: /^only disk, diskMiB, mountOptions in vm: on target: process \(its brokers run on this host, on the fault disk; memoryMiB is for QEMU guests, target: vm\)$/,
    found: "'memoryMiB'",
  },
  {
    name: 'bad vm accelerator',
    text: `question: q\ntarget: vm\nvm: { accelerator: hvf }\n`,
    line: 3,
    column: 20,
    path: 'vm.accelerator',
    expected: /^auto\|kvm\|tcg$/,
    found: "'hvf'",
  },
  {
    name: 'exclude that matches nothing',
    text: `question: q\nmatrix:\n  io: [buffered, direct]\n  exclude:\n    - { io: dsync }\n`,
    line: 5,
    column: 7,
    path: 'matrix.exclude[0]',
    expected: /matches at least one cell/,
    found: "'io=dsync', which matches none",
  },
  {
    name: 'expectation syntax',
    text: `question: q\nexpectations:\n  - ackedLost = 0\n`,
    line: 3,
    column: 15,
    path: 'expectations[0]',
    expected: /^a comparison \(== != < <= > >=\)$/,
    found: "'='",
  },
  {
    name: 'expectation where that matches no cell',
    text: `question: q\nmatrix:\n  flush: [never, per-batch]\nexpectations:\n  - "ackedLost == 0 where flush == messages:10"\n`,
    line: 5,
    column: 21,
    path: 'expectations[0]',
    expected: /a where clause that matches a cell \(flush=never; flush=per-batch\)/,
    found: "'where flush == messages:10', which matches none",
  },
];

describe('malformed files', () => {
  it.each(MALFORMED)('$name', (c) => {
    const file = writeScenario(c.text);
    const issues = issuesOf(file);
    expect(issues).toHaveLength(1);
    const [i] = issues;
    expect({ file: i.file, line: i.line, column: i.column, path: i.path, found: i.found }).toEqual({
      file,
      line: c.line,
      column: c.column,
      path: c.path,
      found: c.found,
    });
    expect(i.expected).toMatch(c.expected);
  });

  it('lists several problems at once, in file order, one line each', () => {
    const text = `question: q
cluster:
  brokers: 1
  replicationFactor: 1
settings:
  flsuh: never
  acks: 2
workload:
  connections: 0
matrix:
  io: [buffered, mmap]
expectations:
  - latencyUs.p99 >
`;
    const file = writeScenario(text);
    let err: unknown;
    try {
      loadScenario(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScenarioError);
    const e = err as ScenarioError;
    expect(e.issues.map((i) => `${i.line}:${i.column} ${i.path}`)).toEqual([
      '6:3 settings.flsuh',
      '7:9 settings.acks',
      '9:16 workload.connections',
      '11:18 matrix.io[1]',
      '13:20 expectations[0]',
    ]);
    const lines = e.message.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[1]).toBe(`${file}:7:9 settings.acks: expected 0|1|all, found 2`);
    expect(lines[3]).toBe(`${file}:11:18 matrix.io[1]: expected buffered|direct|dsync, found 'mmap'`);
  });

  it('an empty file and a non-mapping document are refused', () => {
    expect(issuesOf(writeScenario(''))[0]).toMatchObject({ line: 1, column: 1, found: 'an empty file' });
    expect(issuesOf(writeScenario('- a\n- b\n'))[0]).toMatchObject({ found: 'a list' });
  });
});
