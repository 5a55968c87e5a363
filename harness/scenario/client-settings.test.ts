// Client-side settings per cell: a driver axis, Kafka producer settings as axes, the --driver
// override, and what scenario check refuses about them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError, cellSettings, loadScenario } from './index.ts';

const tmp = mkdtempSync(path.join(tmpdir(), 'durolab-client-settings-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function file(text: string): string {
  const f = path.join(tmp, `c${n++}.yaml`);
  writeFileSync(f, text);
  return f;
}
function issues(f: string, opts: { driver?: string } = {}): string[] {
  try {
    loadScenario(f, opts);
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues.map((i) => `${i.path}: expected ${i.expected}, found ${i.found}`);
    throw err;
  }
  throw new Error(`${f} loaded without errors`);
}

const base = (matrix: string, workload = '') => `question: Which client settings does each cell run with?
cluster:
  brokers: 3
  minInsyncReplicas: 2
settings:
  acks: all
matrix:
${matrix}
workload:
  duration: 5s
${workload}`;

describe('client settings as matrix axes', () => {
  it('a driver axis gives each cell its driver; ids and where clauses name it', () => {
    const s = loadScenario(file(base('  io: [buffered, dsync]\n  driver: [http, kafka]') + 'expectations:\n  - corrupt == 0 where driver == kafka\n'));
    expect(s.matrix.map((c) => c.id)).toEqual(['io=buffered,driver=http', 'io=buffered,driver=kafka', 'io=dsync,driver=http', 'io=dsync,driver=kafka']);
    expect(s.matrix[1]!.label).toBe('buffered, driver kafka');
    expect(cellSettings(s, s.matrix[1]!).values.driver).toBe('kafka');
    expect(s.expectations[0]!.left.where).toEqual([expect.objectContaining({ param: 'driver', value: 'kafka' })]);
  });

  it('library, enable.idempotence and max.in.flight are axes of the kafka driver', () => {
    const l = loadScenario(file(base('  library: [rdkafka, platformatic]', '  driver: kafka\n')));
    expect(l.matrix.map((c) => c.label)).toEqual(['librdkafka', '@platformatic/kafka']);
    expect(cellSettings(l, l.matrix[1]!).values.library).toBe('platformatic');
    const s = loadScenario(file(base('  enable.idempotence: [true, false]', '  driver: kafka\n  pipelining: 1\n')));
    expect(s.matrix.map((c) => c.id)).toEqual(['enable.idempotence=true', 'enable.idempotence=false']);
    expect(s.matrix.map((c) => c.label)).toEqual(['idempotent', 'not idempotent']);
    const m = loadScenario(file(base('  max.in.flight: [1, 5]', '  driver: kafka\n')));
    expect(m.matrix.map((c) => c.params['max.in.flight'])).toEqual([1, 5]);
  });

  it('refuses producer settings without the kafka driver, a bad driver value and an idempotent cell with sends in parallel', () => {
    expect(issues(file(base('  enable.idempotence: [true, false]')))).toEqual([
      'matrix.enable.idempotence: expected enable.idempotence only with the kafka driver (workload.driver: kafka or a driver: [kafka] axis), found enable.idempotence',
    ]);
    expect(issues(file(base('  driver: [http, grpc]')))[0]).toMatch(/^matrix\.driver\[1\]: expected http \| kafka/);
    expect(issues(file(base('  max.in.flight: [0]', '  driver: kafka\n')))[0]).toMatch(/^matrix\.max\.in\.flight\[0\]: expected an integer from 1 to 256/);
    // Both libraries keep one idempotent send in flight (each for its own reason).
    expect(() => loadScenario(file(base('  enable.idempotence: [true, false]', '  driver: kafka\n  pipelining: 1\n')))).not.toThrow();
    const [idem] = issues(file(base('  enable.idempotence: [true, false]', '  driver: kafka\n  pipelining: 5\n')));
    expect(idem).toMatch(/^workload\.pipelining: expected max\.in\.flight at most 1 in cell enable\.idempotence=true \(enable\.idempotence: true, library rdkafka; librdkafka .*PR #4989.*\), found 5$/);
    const [plt] = issues(file(base('  enable.idempotence: [true, false]', '  driver: kafka\n  pipelining: 4\n  producer:\n    library: platformatic\n')));
    expect(plt).toMatch(/^workload\.pipelining: expected max\.in\.flight at most 1 in cell enable\.idempotence=true .*library platformatic; @platformatic\/kafka.*, found 4$/);
    const [axis] = issues(file(base('  library: [rdkafka, platformatic]\n  enable.idempotence: [true]', '  driver: kafka\n  pipelining: 3\n')));
    expect(axis).toMatch(/^workload\.pipelining: expected max\.in\.flight at most 1 in cell library=rdkafka,enable\.idempotence=true .*library rdkafka;/);
    expect(issues(file(base('  library: [librdkafka]', '  driver: kafka\n')))[0]).toMatch(/^matrix\.library\[0\]: expected rdkafka \| platformatic/);
    expect(issues(file(base('  library: [rdkafka]')))[0]).toMatch(/^matrix\.library: expected library only with the kafka driver/);
  });

  it('pairs each target of a target axis with a driver it talks to: a driver axis with the other pairs excluded', () => {
    const axes = (exclude: string) => `question: Does each system run through its own driver?
matrix:
  target: [durolab, kafka]
  driver: [http, kafka]
${exclude}workload:
  duration: 5s
`;
    const s = loadScenario(file(axes('  exclude:\n    - { target: kafka, driver: http }\n')));
    expect(s.matrix.map((c) => c.id)).toEqual(['target=durolab,driver=http', 'target=durolab,driver=kafka', 'target=kafka,driver=kafka']);
    // Without the exclude, the kafka target's http cell is refused, naming the axis value and the cell.
    expect(issues(file(axes('')))).toEqual([
      "matrix.driver[0]: expected a driver target: kafka can talk to (kafka) in cell target=kafka,driver=http, or that pair excluded (matrix.exclude), found 'http'",
    ]);
  });

  it('a driver axis with the kafka driver allows a workload.producer block', () => {
    const s = loadScenario(file(base('  driver: [http, kafka]', '  producer:\n    retries: 2\n')));
    expect(s.workload.producer).toMatchObject({ retries: 2 });
  });
});

describe('--driver (DRIVER=) override', () => {
  it('runs a scenario through another driver as if its file said so', () => {
    const f = file(base('  acks: [1, all]').replace('settings:\n  acks: all\n', 'settings:\n  io: buffered\n'));
    expect(loadScenario(f).workload.driver).toBe('http');
    expect(loadScenario(f, { driver: 'kafka' }).workload.driver).toBe('kafka');
  });

  it('refuses a driver that does not exist, naming the override', () => {
    expect(() => loadScenario(file(base('  acks: [1, all]').replace('settings:\n  acks: all\n', '')), { driver: 'grpc' })).toThrow(
      "DRIVER: expected http | kafka | nats, found 'grpc'",
    );
  });
});
