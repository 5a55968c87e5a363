// End to end through the real CLI bundle: real broker processes, real HTTP load, real files.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';
import { readRunJson } from '../report/load-runs.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-bench-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function scenarioFile(name: string, body: string): string {
  const file = path.join(work, `${name}.yaml`);
  writeFileSync(file, body);
  return file;
}

const tiny = (extra = '') => `question: Does a tiny run produce a clean ledger?
target: process
cluster: { brokers: 1, topic: tiny, partitions: 2, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { flush: never }
matrix:
  acks: [1, all]
workload:
  recordBytes: 256
  recordsPerBatch: 4
  connections: 4
  pipelining: 2
  rate: closed
  warmup: 0s
  duration: 2s
  repetitions: 1
expectations:
  - ackedLost == 0
  - duplicates == 0
  - corrupt == 0
${extra}`;

function brokerPids(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes('durolab') && cmd.includes('\0broker\0') && cmd.includes(work)) out.push(Number(pid));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

describe('durolab bench', () => {
  it('runs every cell, checks the ledger, writes run.json, latest and the report', async () => {
    const file = scenarioFile('tiny', tiny());
    const results = path.join(work, 'results');
    const reports = path.join(work, 'reports');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--reports-dir', reports], { reject: false, timeout: 90_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/acks=1\s+[\d,]+/);
    expect(r.stdout).toContain('PASS  ackedLost == 0');
    expect(r.stdout).toContain('verdict: PASS (3 expectation(s)); exit 0');
    const run = JSON.parse(readFileSync(path.join(results, 'tiny', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.status).toBe('complete');
    expect(run.cells.map((c) => c.params.acks)).toEqual([1, 'all']);
    for (const c of run.cells) {
      expect(c.status).toBe('ok');
      expect(c.ledger.acked).toBeGreaterThan(0);
      expect(c.ledger).toMatchObject({ ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0 });
      expect(c.throughput!.recordsPerSec).toBeGreaterThan(0);
      expect(c.latencyUs.p50).toBeGreaterThan(0);
      expect(c.latencyUs.p99).toBeGreaterThanOrEqual(c.latencyUs.p50);
      expect(c.histograms.latencyUs.length).toBeGreaterThan(10);
      expect(c.timeseries.length).toBeGreaterThan(0);
    }
    const html = path.join(reports, 'tiny', run.runId, 'index.html');
    expect(existsSync(html)).toBe(true);
    expect(r.stdout).toContain(html);
    expect(brokerPids()).toEqual([]);
  }, 120_000);

  it('a fault that never fires: the trial is run again within extraTrials, both attempts kept, the expectations NOT EVALUATED, exit 3', async () => {
    const file = scenarioFile(
      'unfired',
      `question: Does a kill that never comes lose anything?
target: process
cluster: { brokers: 1, topic: unfired, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { flush: never, acks: 1 }
workload: { recordBytes: 256, recordsPerBatch: 4, connections: 2, pipelining: 1, rate: closed, warmup: 0s, duration: 2s, repetitions: 1, extraTrials: 1 }
faults:
  - kind: process-kill
    target: all
    when: { afterAcked: 1000000000 }
expectations:
  - ackedLost == 0 in every trial
  - corrupt == 0
`,
    );
    const results = path.join(work, 'unfired-results');
    const reports = path.join(work, 'unfired-reports');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--reports-dir', reports], { reject: false, timeout: 120_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(3);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/rep 1 cannot be judged \(the fault \(after 1000000000 acknowledged records\) never fired: .*\): running it again \(extra attempt 1 of 1 for this cell\)/);
    expect(out).toContain('rep 2 (extra attempt 1 of 1, in place of rep 1): starting 1 broker(s)');
    expect(out).toContain('rep 2 cannot be judged (the fault (after 1000000000 acknowledged records) never fired');
    expect(out).toContain('no extra attempt is left (workload.extraTrials 1)');
    // The replaced attempt is named and left out; the last one, unjudged and unreplaced, holds the verdict back.
    expect(r.stdout).toMatch(
      /NOT EVALUATED {2}ackedLost == 0 in every trial: not evaluated \(base trial 1 \(replaced by trial 2\): the fault \(after 1000000000 acknowledged records\) never fired: the load ended first with [\d,]+ records acknowledged; base trial 2: the fault \(after 1000000000 acknowledged records\) never fired: the load ended first/,
    );
    // a cell-level figure of a fault scenario whose trial missed its fault judges nothing either
    expect(r.stdout).toContain('NOT EVALUATED  corrupt == 0: not evaluated (base: 0, but not every trial can be judged (trial 2: the fault');
    expect(r.stdout).toContain('verdict: NOT EVALUATED (2 of 2 expectation(s) lacked the evidence to judge; none failed); exit 3');
    // The fault summary counts both attempts and says which one was replaced.
    expect(r.stdout).toMatch(/^base\s+2 \(1 replaced\)\s/m);
    expect(r.stdout).toMatch(/^suspect trials \(numbered as their rep-N directories\):\n {2}base trial 1: the fault .* never fired: .* \(replaced by trial 2\)$/m);
    const run = JSON.parse(readFileSync(path.join(results, 'unfired', 'latest', 'run.json'), 'utf8')) as RunResult;
    const cell = run.cells[0]!;
    expect(cell.trials).toHaveLength(2);
    const [first, second] = cell.trials!;
    expect(first).toMatchObject({ index: 0, replacedBy: 1, suspect: true });
    expect(first!.replaces).toBeUndefined();
    expect(second).toMatchObject({ index: 1, replaces: 0, suspect: true });
    expect(second!.replacedBy).toBeUndefined();
    for (const t of cell.trials!) {
      expect(t.fault).toBeUndefined();
      expect(t.ledger.acked).toBeGreaterThan(0);
    }
    // The cell's ledger sums both attempts; its throughput is the judged (last) attempt's.
    expect(cell.ledger.acked).toBe(first!.ledger.acked + second!.ledger.acked);
    expect(cell.repetitions!.map((f) => [f.trial, f.replaced ?? false])).toEqual([
      [0, true],
      [1, false],
    ]);
    expect(cell.throughput!.recordsPerSec).toBe(cell.repetitions![1]!.recordsPerSec);
    // The report's reader of run.json keeps the attempt marks.
    const read = await readRunJson(path.join(results, 'unfired', 'latest', 'run.json'));
    expect(read.cells[0]!.trials!.map((t) => [t.replacedBy, t.replaces])).toEqual([
      [1, undefined],
      [undefined, 0],
    ]);
    expect(read.cells[0]!.repetitions!.map((f) => f.replaced)).toEqual([true, undefined]);
    // Each attempt has its own evidence directory.
    const cellDir = path.join(results, 'unfired', 'latest', 'cells', '01-base');
    for (const rep of ['rep-1', 'rep-2']) expect(readFileSync(path.join(cellDir, rep, 'ledger.ndjson'), 'utf8').length).toBeGreaterThan(0);
    expect(run.expectations.map((e) => e.state)).toEqual(['not-evaluated', 'not-evaluated']);
    const html = readFileSync(path.join(reports, 'unfired', run.runId, 'index.html'), 'utf8');
    expect(html).toContain('data-state="not-evaluated"');
    expect(html).toContain('why not evaluated:');
    expect(brokerPids()).toEqual([]);
  }, 150_000);

  it('every cell skipped: nothing measured, expectations NOT EVALUATED, exit 3', async () => {
    const file = scenarioFile('all-skipped', `requiresRoot: true\n${tiny().replace('matrix:\n  acks: [1, all]', 'matrix:\n  vm.dirty_ratio: [5, 10]')}`);
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', path.join(work, 'skip-results'), '--no-report'], { reject: false, timeout: 30_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(3);
    expect(r.stdout).toContain('NOT EVALUATED  ackedLost == 0: not evaluated (');
    expect(r.stdout).toContain('verdict: NOTHING MEASURED (every cell was skipped or failed to run); exit 3');
  }, 60_000);

  it('a bad command line is exit 2 (a failed run or a malformed scenario is 1), naming the flag and what was typed', async () => {
    const cases: Array<[string[], string]> = [
      [['--bogus'], "Unknown option '--bogus'"],
      [['acks-all', '--duration', '30s'], "--duration (DURATION): expected a number of seconds > 0, found '30s'"],
      [['acks-all', '--repeat', '0'], "--repeat (REPEAT): expected a whole number >= 1, found '0'"],
      [['acks-all', '--summary', 'bogus'], "--summary: expected one of text, markdown, json, found 'bogus'"],
      [['acks-all', '--seed=-1'], "--seed: expected a whole number from 0 to 4294967295, found '-1'"],
      [['acks-all', '--driver', 'grpc'], "--driver (DRIVER): expected http | kafka | nats, found 'grpc'"],
      [['--list', 'extra'], '--list takes no scenario, found extra'],
      [['acks-all', 'io-modes'], 'expected one scenario name or file, found 2'],
    ];
    const results = await Promise.all(cases.map(([args]) => execa(process.execPath, [cli, 'bench', ...args, '--results-dir', path.join(work, 'usage-results')], { reject: false, timeout: 30_000 })));
    results.forEach((r, i) => {
      expect(r.exitCode, `${cases[i][0].join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`durolab bench: ${cases[i][1]}`);
      expect(r.stderr).not.toContain('durolab bench: durolab bench:');
    });
    expect(existsSync(path.join(work, 'usage-results'))).toBe(false);
  });

  it('refuses a malformed scenario with file, line and field, and starts nothing', async () => {
    const file = scenarioFile('bad', tiny().replace('flush: never', 'flsuh: never').replace('connections: 4', 'connections: lots'));
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', path.join(work, 'bad-results')], { reject: false, timeout: 30_000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`${file}:4:13 settings.flsuh: expected a known key (did you mean 'flush'?), found 'flsuh'`);
    expect(r.stderr).toContain(`${file}:10:16 workload.connections: expected an integer from 1 to 1024, found 'lots'`);
    expect(existsSync(path.join(work, 'bad-results'))).toBe(false);
  });

  it('Ctrl-C stops the brokers, keeps finished cells and marks the run incomplete', async () => {
    const file = scenarioFile('interrupted', tiny().replace('duration: 2s', 'duration: 20s'));
    const results = path.join(work, 'int-results');
    const child = execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report'], { reject: false, timeout: 90_000 });
    // Interrupt during the second cell, after the first one finished.
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/\[cell 2\/2[^\n]*\] rep 1: 2\/20s/.test(out)) resolve();
      });
    });
    expect(brokerPids().length).toBe(1);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    const run = JSON.parse(readFileSync(path.join(results, 'interrupted', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.status).toBe('incomplete');
    expect(run.cells[0].status).toBe('ok');
    expect(run.cells[0].ledger.ackedLost).toBe(0);
    expect(run.cells[1].status).toBe('interrupted');
    expect(brokerPids()).toEqual([]);
  }, 120_000);
});
