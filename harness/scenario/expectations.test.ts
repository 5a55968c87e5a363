import { describe, expect, it } from 'vitest';
import type { CellResult, LedgerSummary } from '../results/types.ts';
import { ScenarioError, compileScenario, evaluateExpectations, parseExpectation, type Scenario } from './index.ts';

function scenario(expectations: string[], extra = ''): Scenario {
  const text = `question: q
target: vm
cluster: { brokers: 3, minInsyncReplicas: 2 }
settings: { sync: fdatasync }
matrix:
  io: [buffered, direct]
  flush: [never, per-batch]
${extra}expectations:
${expectations.map((e) => `  - ${JSON.stringify(e)}`).join('\n')}
`;
  return compileScenario(text, 'x.yaml', { defaultName: 'x' });
}

const CLEAN: LedgerSummary = { acked: 1000, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, inconsistentOffsets: 0 };

function cell(id: string, params: CellResult['params'], over: Partial<CellResult> & { p99?: number } = {}): CellResult {
  const { p99 = 1000, ...rest } = over;
  return {
    id,
    params,
    status: 'ok',
    throughput: { recordsPerSec: 50_000, mbPerSec: 50, requestsPerSec: 3000 },
    latencyUs: { p50: 300, p90: 600, p99, p999: 2 * p99, p9999: 3 * p99, max: 4 * p99, count: 15_000 },
    errors: {},
    ledger: { ...CLEAN },
    broker: { flushes: 0, flushTimeUs: { p50: 0, p99: 0, p999: 0, max: 0 }, segments: 1, bytes: 1 << 20 },
    histograms: { latencyUs: '' },
    timeseries: [],
    ...rest,
  };
}

function fourCells(over: Record<string, Partial<CellResult> & { p99?: number }> = {}): CellResult[] {
  const ids: Array<[string, string]> = [
    ['buffered', 'never'],
    ['buffered', 'per-batch'],
    ['direct', 'never'],
    ['direct', 'per-batch'],
  ];
  return ids.map(([io, flush]) => {
    const id = `io=${io},flush=${flush}`;
    return cell(id, { io, flush }, over[id]);
  });
}

describe('parsing', () => {
  it('reads the scalar, where, trial and ratio forms', () => {
    expect(parseExpectation('ackedLost == 0 where flush == per-batch and io == direct in every trial')).toEqual({
      expression: 'ackedLost == 0 where flush == per-batch and io == direct in every trial',
      left: {
        path: 'ledger.ackedLost',
        where: [
          { param: 'flush', value: 'per-batch', text: 'flush == per-batch' },
          { param: 'io', value: 'direct', text: 'io == direct' },
        ],
      },
      op: '==',
      right: { kind: 'number', value: 0 },
      everyTrial: true,
    });
    expect(parseExpectation('latencyUs.p99 where flush == per-batch <= 5 * latencyUs.p99 where flush == never')).toMatchObject({
      left: { path: 'latencyUs.p99', where: [{ param: 'flush', value: 'per-batch' }] },
      op: '<=',
      right: { kind: 'metric', factor: 5, metric: { path: 'latencyUs.p99', where: [{ param: 'flush', value: 'never' }] } },
    });
    expect(parseExpectation('errors.NOT_ENOUGH_REPLICAS==0 where acks == -1')).toMatchObject({
      left: { path: 'errors.NOT_ENOUGH_REPLICAS', where: [{ param: 'acks', value: 'all' }] },
      right: { kind: 'number', value: 0 },
    });
    expect(parseExpectation('broker.segments > 1 where segment.bytes == 256KiB')).toMatchObject({
      left: { where: [{ param: 'segment.bytes', value: 262144 }] },
    });
    expect(parseExpectation('throughput.recordsPerSec >= 0.5e3')).toMatchObject({ right: { kind: 'number', value: 500 } });
  });

  it.each([
    ['ackedLost = 0', 10, 'a comparison (== != < <= > >=)', "'='"],
    ['ackedLost ==', 12, 'a number or a metric such as', 'the end of the expectation'],
    ['0 == ackedLost', 0, 'on the left', "'0'"],
    ['ackedLsot == 0', 0, "a metric (did you mean 'ackedLost'?)", "'ackedLsot'"],
    ['latencyUS.p99 < 5', 0, "did you mean 'latencyUs.p99'?", "'latencyUS.p99'"],
    ['errors.NOT_ENOUGH_REPLICA == 0', 0, "did you mean 'errors.NOT_ENOUGH_REPLICAS'?", "'errors.NOT_ENOUGH_REPLICA'"],
    ['ackedLost == 0 where flsuh == never', 21, "a setting name (did you mean 'flush'?)", "'flsuh'"],
    ['ackedLost == 0 where flush = never', 27, '== after flush', "'='"],
    ['ackedLost == 0 where flush == sometimes', 30, 'flush: never|per-batch|messages:N|ms:T', "'sometimes'"],
    ['ackedLost == 0 where segment.bytes == huge', 38, 'segment.bytes: a size', "'huge'"],
    ['ackedLost == 0 in every trail', 24, "'trial' (in every trial)", "'trail'"],
    ['latencyUs.p99 < 1000 in every trial', 0, 'a ledger metric', "'latencyUs.p99'"],
    ['ackedLost <= 2 * ackedLost in every trial', 27, 'a plain number on the right', "'in'"],
    ['ackedLost == 0 extra', 15, 'where ..., in every trial, or the end', "'extra'"],
    ['ackedLost where io == direct == 0 where flush == never', 34, 'a single where clause per side', "'where'"],
  ])('%s', (text, offset, expected, found) => {
    const r = parseExpectation(text);
    expect(r).toMatchObject({ offset, found });
    expect((r as { expected: string }).expected).toContain(expected);
  });

  it('a bad expectation in a file names its line and column', () => {
    const text = 'question: q\nexpectations:\n  - ackedLost == 0\n  - "ackedLost == 0 where flush == always"\n';
    let err: ScenarioError | undefined;
    try {
      compileScenario(text, 'e.yaml', { defaultName: 'e' });
    } catch (e) {
      err = e as ScenarioError;
    }
    expect(err?.message).toBe("e.yaml:4:36 expectations[1]: expected flush: never|per-batch|messages:N|ms:T, found 'always'");
  });
});

describe('evaluation', () => {
  it('passes and cites every matching cell', () => {
    const s = scenario(['ackedLost == 0 where flush == per-batch']);
    expect(evaluateExpectations(s, fourCells())).toEqual([
      {
        expression: 'ackedLost == 0 where flush == per-batch',
        passed: true,
        state: 'pass',
        detail: 'ackedLost == 0 where flush == per-batch: passed (cells io=buffered,flush=per-batch: 0; io=direct,flush=per-batch: 0)',
      },
    ]);
  });

  it('fails naming the failing cells and their numbers', () => {
    const s = scenario(['ackedLost == 0']);
    const cells = fourCells({ 'io=buffered,flush=never': { ledger: { ...CLEAN, ackedLost: 12 } } });
    const [r] = evaluateExpectations(s, cells);
    expect(r.passed).toBe(false);
    expect(r.detail).toBe(
      'ackedLost == 0: failed (failing io=buffered,flush=never: 12; passing io=buffered,flush=per-batch: 0; io=direct,flush=never: 0; io=direct,flush=per-batch: 0)',
    );
  });

  it('a where that matches no cell fails with that reason', () => {
    // The scenario has no dsync cell: loading already refuses it...
    expect(() => scenario(['ackedLost == 0 where io == dsync'])).toThrow(/matches a cell/);
    // ...and results from another run (cells missing) fail at evaluation.
    const s2 = scenario(['ackedLost == 0 where flush == per-batch']);
    const [r] = evaluateExpectations(s2, fourCells().filter((c) => c.params.flush === 'never'));
    expect(r).toEqual({
      expression: 'ackedLost == 0 where flush == per-batch',
      passed: false,
      state: 'fail',
      detail: 'ackedLost == 0 where flush == per-batch: failed (where flush == per-batch matches no cell; cells: io=buffered,flush=never; io=direct,flush=never)',
    });
  });

  it('where clauses see base settings and defaults, not only the matrix params', () => {
    const s = scenario(['corrupt == 0 where sync == fdatasync and acks == all']);
    const [r] = evaluateExpectations(s, fourCells());
    expect(r.passed).toBe(true);
    expect(r.detail).toContain('cells io=buffered,flush=never: 0; io=buffered,flush=per-batch: 0; io=direct,flush=never: 0');
  });

  it('in every trial checks each trial ledger', () => {
    const s = scenario(['ackedLost == 0 where flush == per-batch in every trial', 'ackedLost > 0 where flush == never']);
    const trials = (lost: number[]) => lost.map((ackedLost, index) => ({ index, ledger: { ...CLEAN, ackedLost } }));
    const cells = fourCells({
      'io=buffered,flush=per-batch': { trials: trials([0, 0, 0]) },
      'io=direct,flush=per-batch': { trials: trials([0, 3, 0]), ledger: { ...CLEAN, ackedLost: 3 } },
      'io=buffered,flush=never': { ledger: { ...CLEAN, ackedLost: 900 } },
      'io=direct,flush=never': { ledger: { ...CLEAN, ackedLost: 40 } },
    });
    const [perTrial, lossy] = evaluateExpectations(s, cells);
    expect(perTrial.passed).toBe(false);
    expect(perTrial.detail).toBe(
      'ackedLost == 0 where flush == per-batch in every trial: failed (failing io=direct,flush=per-batch: trials 0, 3, 0; passing io=buffered,flush=per-batch: trials 0, 0, 0)',
    );
    expect(lossy).toMatchObject({ passed: true, detail: expect.stringContaining('io=buffered,flush=never: 900; io=direct,flush=never: 40') });

    const [noTrials] = evaluateExpectations(s, fourCells());
    expect(noTrials.detail).toContain('io=buffered,flush=per-batch: no trials recorded');
  });

  it('ratios pair cells that agree on every other setting', () => {
    const s = scenario(['latencyUs.p99 where flush == per-batch <= 5 * latencyUs.p99 where flush == never']);
    const cells = fourCells({
      'io=buffered,flush=never': { p99: 100 },
      'io=buffered,flush=per-batch': { p99: 450 },
      'io=direct,flush=never': { p99: 200 },
      'io=direct,flush=per-batch': { p99: 1200 },
    });
    const [r] = evaluateExpectations(s, cells);
    expect(r.passed).toBe(false);
    expect(r.detail).toBe(
      'latencyUs.p99 where flush == per-batch <= 5 * latencyUs.p99 where flush == never: failed (' +
        'failing io=direct,flush=per-batch 1200 <= 5 * io=direct,flush=never 200 = 1000; ' +
        'passing io=buffered,flush=per-batch 450 <= 5 * io=buffered,flush=never 100 = 500)',
    );
    const [ok] = evaluateExpectations(s, fourCells());
    expect(ok.passed).toBe(true);
  });

  it('a ratio without a factor, and one whose partner is missing', () => {
    const s = scenario(['throughput.recordsPerSec where flush == per-batch <= throughput.recordsPerSec where flush == never']);
    const [r] = evaluateExpectations(s, fourCells().filter((c) => c.id !== 'io=direct,flush=never'));
    expect(r.passed).toBe(false);
    expect(r.detail).toContain('failing io=direct,flush=per-batch: no cell where flush == never with the same other settings');
    expect(r.detail).toContain('passing io=buffered,flush=per-batch 50000 <= io=buffered,flush=never 50000');
  });

  it('error counters default to zero; unrecorded metrics and unmeasured cells fail', () => {
    const s = scenario(['errors.NOT_ENOUGH_REPLICAS == 0', 'ledger.unackedPresent >= 0 where io == direct']);
    const cells = fourCells({
      'io=buffered,flush=never': { errors: { REQUEST_TIMED_OUT: 2 } },
      'io=direct,flush=per-batch': { status: 'failed', note: 'no qemu' },
      'io=direct,flush=never': { ledger: { ...CLEAN, unackedPresent: 5 } },
    });
    const [errs, unacked] = evaluateExpectations(s, cells);
    expect(errs.passed).toBe(false);
    expect(errs.detail).toContain('failing io=direct,flush=per-batch: not measured (failed: no qemu)');
    expect(errs.detail).toContain('io=buffered,flush=never: 0');
    expect(unacked.detail).toBe(
      'ledger.unackedPresent >= 0 where io == direct: failed (failing io=direct,flush=per-batch: not measured (failed: no qemu); passing io=direct,flush=never: 5)',
    );
    const [, missing] = evaluateExpectations(s, fourCells());
    expect(missing.detail).toContain('io=direct,flush=never: ledger.unackedPresent not recorded');
  });

  it('a broker figure its brokers do not report (Kafka, NATS: no flush count) is NOT EVALUATED, never judged as 0', () => {
    const s = scenario(['broker.flushes > 0 where flush == per-batch', 'broker.flushes where flush == per-batch > broker.flushes where flush == never']);
    const noFlushCount = { broker: { bytes: 1 << 20 } };
    const [alone, pair] = evaluateExpectations(s, fourCells(Object.fromEntries(fourCells().map((c) => [c.id, noFlushCount]))));
    expect(alone.state, alone.detail).toBe('not-evaluated');
    expect(alone.reason).toContain('io=buffered,flush=per-batch: broker.flushes not reported (its driver carries none');
    expect(pair.state, pair.detail).toBe('not-evaluated');
    // Where they report it (durolab), it is judged.
    expect(evaluateExpectations(s, fourCells())[0]!.state).toBe('fail');
  });

  it('a throughput no repetition measured (none finished its load) is NOT EVALUATED, never judged as 0', () => {
    const s = scenario(['throughput.recordsPerSec >= 1 where flush == per-batch', 'throughput.recordsPerSec where flush == per-batch <= throughput.recordsPerSec where flush == never']);
    const noLoad = (c: CellResult): CellResult => {
      const { throughput: _none, ...rest } = c;
      return { ...rest, status: 'interrupted', latencyUs: { p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, count: 0 } };
    };
    const cells = fourCells().map((c) => (c.params.flush === 'per-batch' ? noLoad(c) : c));
    const [alone, pair] = evaluateExpectations(s, cells);
    expect(alone.state, alone.detail).toBe('not-evaluated');
    expect(alone.reason).toContain('io=buffered,flush=per-batch: throughput.recordsPerSec not measured (no repetition finished its load)');
    expect(pair.state, pair.detail).toBe('not-evaluated');
    expect(pair.reason).toContain('io=direct,flush=per-batch: throughput.recordsPerSec not measured');
    // Measured, it is judged.
    expect(evaluateExpectations(s, fourCells()).map((r) => r.state)).toEqual(['pass', 'pass']);
  });

  it('poll checks judge only cells whose consumers consumed something and stopped on no error', () => {
    const s = scenario(['consumerChecks.skipped == 0']);
    const group = (records: number, errors: string[] = []) => ({ name: 'g', records, errors, checks: { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 } });
    const checks = { consumerChecks: { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 } };
    const withGroups = (gs: ReturnType<typeof group>[]) => ({ ...checks, consumers: [{ repetition: 1, groups: gs }] }) as unknown as Partial<CellResult>;
    const cells = fourCells({
      'io=buffered,flush=never': withGroups([group(500)]),
      'io=buffered,flush=per-batch': withGroups([group(0)]),
      'io=direct,flush=never': withGroups([group(200, ['member 1 of group x: fetch failed 4 times.'])]),
      'io=direct,flush=per-batch': withGroups([group(0), group(0)]),
    });
    const [r] = evaluateExpectations(s, cells);
    // One judged cell passes; the others are named as left out, not passed.
    expect(r!.state).toBe('pass');
    expect(r!.detail).toContain('io=buffered,flush=never: 0');
    expect(r!.detail).toContain('io=buffered,flush=per-batch: its consumer groups consumed nothing');
    expect(r!.detail).toContain('io=direct,flush=never: consumer group g stopped on an error (member 1 of group x: fetch failed 4 times.)');
    // Nothing consumed anywhere: NOT EVALUATED, never PASS.
    const none = fourCells(Object.fromEntries(['io=buffered,flush=never', 'io=buffered,flush=per-batch', 'io=direct,flush=never', 'io=direct,flush=per-batch'].map((id) => [id, withGroups([group(0)])])));
    expect(evaluateExpectations(s, none)[0]!.state).toBe('not-evaluated');
  });

  it('cells skipped on purpose neither pass nor fail an expectation', () => {
    const s = scenario(['ackedLost == 0 where io == direct', 'ackedLost == 0']);
    const cells = fourCells({
      'io=direct,flush=per-batch': { status: 'skipped', note: 'needs --allow-host-sysctl' },
      'io=direct,flush=never': { status: 'skipped', note: 'needs --allow-host-sysctl' },
    });
    const [direct, all] = evaluateExpectations(s, cells);
    expect(direct).toMatchObject({ passed: false, skipped: true });
    expect(direct.detail).toContain('not evaluated');
    expect(all.passed).toBe(true);
    expect(all.skipped).toBeUndefined();
  });

  it('cells from a results file that the scenario does not list match on their own params', () => {
    const s = scenario(['ackedLost == 0 where flush == per-batch']);
    const foreign = cell('legacy', { io: 'direct', flush: 'per-batch' }, { ledger: { ...CLEAN, ackedLost: 1 } });
    const [r] = evaluateExpectations(s, [foreign]);
    expect(r.detail).toBe('ackedLost == 0 where flush == per-batch: failed (failing legacy: 1)');
  });

  it('no cells at all is not evaluated', () => {
    const [r] = evaluateExpectations(scenario(['ackedLost == 0']), []);
    expect(r).toMatchObject({ passed: false, state: 'not-evaluated', reason: 'no cells were run', detail: 'ackedLost == 0: not evaluated (no cells were run)' });
  });
});

describe('verdict states', () => {
  const FAULT = 'faults:\n  - kind: process-kill\n    target: all\n    when: { afterAcked: 1000000000 }\n';
  const faulted = (index: number) => ({
    index,
    ledger: { ...CLEAN },
    fault: { kind: 'process-kill' as const, targets: [1], atMs: 3000, ackedBeforeCut: 900, recovery: [] },
  });
  const unfired = (index: number) => ({
    index,
    ledger: { ...CLEAN },
    suspect: true,
    note: 'the fault (after 1000000000 acked) never fired: the load ended first with 1,000 records acknowledged',
  });

  it('an every-trial expectation is NOT EVALUATED while a trial whose fault did not fire stands unreplaced, and FAIL when it broke the bound', () => {
    const s = scenario(['ackedLost == 0 in every trial'], FAULT);
    const [none] = evaluateExpectations(s, fourCells(Object.fromEntries(fourCells().map((c) => [c.id, { trials: [unfired(0), unfired(1)] }]))));
    expect(none.state).toBe('not-evaluated');
    expect(none.passed).toBe(false);
    expect(none.reason).toContain('io=buffered,flush=never trial 1: the fault (after 1000000000 acked) never fired: the load ended first');
    expect(none.detail).toMatch(/^ackedLost == 0 in every trial: not evaluated \(/);

    // One trial of each cell judged and held, one never faulted: unknown wins over true.
    const mixed = fourCells(Object.fromEntries(fourCells().map((c) => [c.id, { trials: [faulted(0), unfired(1)] }])));
    const [some] = evaluateExpectations(s, mixed);
    expect(some.state).toBe('not-evaluated');
    expect(some.reason).toContain('io=buffered,flush=never trial 2: the fault (after 1000000000 acked) never fired');
    expect(some.detail).toContain('held in cells io=buffered,flush=never: trials 0');
    // without a note from the runner, the reason still says what is missing
    delete mixed[0].trials![1].note;
    expect(evaluateExpectations(s, mixed)[0].reason).toContain('io=buffered,flush=never trial 2: the fault did not fire');

    // An unfired trial that lost acknowledged records: false wins over unknown.
    mixed[0].trials![1] = { ...unfired(1), ledger: { ...CLEAN, ackedLost: 7 } };
    const [lost] = evaluateExpectations(s, mixed);
    expect(lost.state).toBe('fail');
    expect(lost.detail).toContain('failing io=buffered,flush=never: trials 0, 7 (trial 2: the fault (after 1000000000 acked) never fired: the load ended first');
  });

  it('a suspect trial that lost acknowledged records fails the expectation, naming the trial and its suspicion; one that lost nothing leaves it NOT EVALUATED', () => {
    const s = scenario(['ackedLost == 0 where io == direct in every trial'], FAULT);
    const suspect = (ackedLost: number) => ({ ...faulted(1), ledger: { ...CLEAN, ackedLost }, suspect: true, note: 'no acknowledgement in the last 1.4 s' });
    const [lost] = evaluateExpectations(s, fourCells({ 'io=direct,flush=never': { trials: [faulted(0), suspect(5)] }, 'io=direct,flush=per-batch': { trials: [faulted(0)] } }));
    expect(lost.state).toBe('fail');
    expect(lost.passed).toBe(false);
    expect(lost.detail).toBe(
      'ackedLost == 0 where io == direct in every trial: failed (failing io=direct,flush=never: trials 0, 5 (trial 2: suspect (no acknowledgement in the last 1.4 s)); passing io=direct,flush=per-batch: trials 0)',
    );

    const [doubt] = evaluateExpectations(s, fourCells({ 'io=direct,flush=never': { trials: [faulted(0), suspect(0)] }, 'io=direct,flush=per-batch': { trials: [faulted(0)] } }));
    expect(doubt.state).toBe('not-evaluated');
    expect(doubt.reason).toBe('io=direct,flush=never trial 2: suspect (no acknowledgement in the last 1.4 s)');
    expect(doubt.detail).toContain('held in cells io=direct,flush=never: trials 0; io=direct,flush=per-batch: trials 0');
  });

  it('a trial whose cluster did not come back leaves a ledger expectation NOT EVALUATED, every trial or cell-wide; a loss in a checked trial still fails it; other figures are unaffected', () => {
    const s = scenario(['ackedLost == 0 where io == direct in every trial', 'ackedLost == 0 where io == direct', 'throughput.recordsPerSec > 0 where io == direct'], FAULT);
    const gone = { index: 1, fault: 'power-cut', targets: [1, 2, 3], cutAtSec: 13.2, acked: 900, ackedBeforeCut: 880, recoveryTimeoutMs: 60_000, failed: 'no leader for stream', evidence: '/r/rep-2' };
    const withGone = (lost: number) =>
      fourCells({
        'io=direct,flush=never': { trials: [{ ...faulted(0), ledger: { ...CLEAN, ackedLost: lost } }], ledger: { ...CLEAN, ackedLost: lost }, unavailableTrials: [gone], throughput: { recordsPerSec: 10, mbPerSec: 1, requestsPerSec: 1 } },
        'io=direct,flush=per-batch': { trials: [faulted(0)], throughput: { recordsPerSec: 10, mbPerSec: 1, requestsPerSec: 1 } },
      });
    const [every, cellWide, rate] = evaluateExpectations(s, withGone(0));
    expect(every.state).toBe('not-evaluated');
    expect(every.reason).toBe('io=direct,flush=never trial 2 not checked: unavailable after the power-cut (no leader for stream)');
    expect(cellWide.state).toBe('not-evaluated');
    expect(cellWide.reason).toContain('io=direct,flush=never trial 2 not checked');
    expect(rate.state).toBe('pass');
    // false > unknown: a checked trial's loss fails it whatever the unavailable trial.
    const [lostEvery, lostCell] = evaluateExpectations(s, withGone(3));
    expect(lostEvery.state).toBe('fail');
    expect(lostCell.state).toBe('fail');
    // A cell whose only trial was unavailable: not evaluated, not "no trials recorded".
    const [only] = evaluateExpectations(s, fourCells({ 'io=direct,flush=never': { trials: [], unavailableTrials: [gone] }, 'io=direct,flush=per-batch': { trials: [faulted(0)] } }));
    expect(only.state).toBe('not-evaluated');
    expect(only.detail).not.toContain('no trials recorded');
  });

  it('an attempt replaced by a judged one does not hold the expectation back; a replaced attempt that broke the bound still fails it', () => {
    const s = scenario(['ackedLost == 0 where io == direct in every trial', 'ackedLost == 0 where io == direct'], FAULT);
    const replaced = (ackedLost: number) => ({ ...unfired(0), ledger: { ...CLEAN, ackedLost }, replacedBy: 1 });
    const cells = (ackedLost: number) =>
      fourCells({
        'io=direct,flush=never': { trials: [replaced(ackedLost), { ...faulted(1), replaces: 0 }], ledger: { ...CLEAN, ackedLost } },
        'io=direct,flush=per-batch': { trials: [faulted(0)] },
      });
    const [perTrial, cellLevel] = evaluateExpectations(s, cells(0));
    expect(perTrial.state).toBe('pass');
    expect(perTrial.detail).toContain('io=direct,flush=never: trials 0');
    expect(perTrial.detail).toContain('not evaluated: io=direct,flush=never trial 1 (replaced by trial 2): the fault (after 1000000000 acked) never fired');
    expect(cellLevel.state).toBe('pass');

    const [lostPerTrial, lostCell] = evaluateExpectations(s, cells(3));
    expect(lostPerTrial.state).toBe('fail');
    expect(lostPerTrial.detail).toContain('failing io=direct,flush=never: trials 3 (trial 1 (replaced by trial 2): the fault (after 1000000000 acked) never fired');
    expect(lostCell.state).toBe('fail');
    expect(lostCell.detail).toContain('failing io=direct,flush=never: 3 (counting trial 1 (replaced by trial 2): the fault (after 1000000000 acked) never fired');
  });

  it('a cell-level ledger figure merges its trials the same way: broken is FAIL naming the trial in doubt, held with a trial in doubt is NOT EVALUATED', () => {
    const s = scenario(['ackedLost == 0 where flush == never', 'corrupt == 0 where flush == never'], FAULT);
    const suspect = { ...faulted(1), suspect: true, note: 'recovery found a broker still down' };
    const [none] = evaluateExpectations(s, fourCells({ 'io=buffered,flush=never': { trials: [unfired(0)] }, 'io=direct,flush=never': { trials: [unfired(0)] } }));
    expect(none.state).toBe('not-evaluated');
    expect(none.reason).toContain('io=buffered,flush=never: 0, but not every trial can be judged (trial 1: the fault (after 1000000000 acked) never fired');

    const cells = fourCells({
      'io=buffered,flush=never': { trials: [faulted(0), { ...suspect, ledger: { ...CLEAN, ackedLost: 4 } }], ledger: { ...CLEAN, ackedLost: 4 } },
      'io=direct,flush=never': { trials: [faulted(0), faulted(1)] },
    });
    const [lost, corrupt] = evaluateExpectations(s, cells);
    expect(lost.state).toBe('fail');
    expect(lost.detail).toBe(
      'ackedLost == 0 where flush == never: failed (failing io=buffered,flush=never: 4 (counting trial 2: suspect (recovery found a broker still down)); passing io=direct,flush=never: 0)',
    );
    // corrupt held in both cells, but one of them counts a suspect trial: unknown wins over true.
    expect(corrupt.state).toBe('not-evaluated');
    expect(corrupt.reason).toBe('io=buffered,flush=never: 0, but not every trial can be judged (trial 2: suspect (recovery found a broker still down))');
    expect(corrupt.detail).toContain('held in cells io=direct,flush=never: 0');
    // A figure that is not the ledger's (throughput) does not depend on the trials' doubt.
    const [rps] = evaluateExpectations(scenario(['throughput.recordsPerSec > 0 where flush == never'], FAULT), cells);
    expect(rps.state).toBe('pass');
  });

  it('a cell that measures throughput runs without the fault: its trials have none to miss', () => {
    const s = compileScenario(
      `question: q\ntarget: process\ncluster: { brokers: 1 }\nmatrix:\n  measure: [throughput, loss]\n${FAULT.replace('target: all', 'target: 0')}expectations:\n  - ackedLost == 0 in every trial\n`,
      'x.yaml',
      { defaultName: 'x' },
    );
    const [perf, loss] = s.matrix.map((c) => cell(c.id, c.params));
    perf!.trials = [{ index: 0, ledger: { ...CLEAN } }];
    loss!.trials = [faulted(0)];
    expect(evaluateExpectations(s, [perf!, loss!])[0]!.state).toBe('pass');
    loss!.trials = [unfired(0)];
    expect(evaluateExpectations(s, [perf!, loss!])[0]!.state).toBe('not-evaluated');
  });

  it('a loss figure is NOT EVALUATED for a cell with 0 acknowledged records; other figures still are', () => {
    const s = scenario(['ackedLost == 0', 'inconsistentOffsets == 0 where io == buffered', 'corrupt == 0 where io == buffered']);
    const nothingAcked = { ledger: { ...CLEAN, acked: 0 } };
    const cells = fourCells({ 'io=buffered,flush=never': nothingAcked, 'io=buffered,flush=per-batch': nothingAcked });
    const [lost, incons, corrupt] = evaluateExpectations(s, cells);
    expect(lost.state).toBe('pass');
    expect(lost.detail).toContain('not evaluated: io=buffered,flush=never: 0 acknowledged records');
    expect(incons).toMatchObject({ state: 'not-evaluated', passed: false });
    expect(incons.reason).toBe(
      'io=buffered,flush=never: 0 acknowledged records, so nothing was promised that could be lost or moved; ' +
        'io=buffered,flush=per-batch: 0 acknowledged records, so nothing was promised that could be lost or moved',
    );
    expect(corrupt.state).toBe('pass');
  });

  it('every cell skipped: NOT EVALUATED, marked skipped', () => {
    const s = scenario(['ackedLost == 0']);
    const skipped = { status: 'skipped' as const, note: 'needs --allow-host-sysctl' };
    const [r] = evaluateExpectations(s, fourCells(Object.fromEntries(fourCells().map((c) => [c.id, skipped]))));
    expect(r).toMatchObject({ state: 'not-evaluated', skipped: true, passed: false });
    expect(r.reason).toContain('io=buffered,flush=never: not measured (skipped: needs --allow-host-sysctl)');
  });

  it('a failure wins over parts not evaluated', () => {
    const s = scenario(['ackedLost == 0']);
    const [r] = evaluateExpectations(s, fourCells({ 'io=buffered,flush=never': { ledger: { ...CLEAN, ackedLost: 2 } }, 'io=direct,flush=never': { ledger: { ...CLEAN, acked: 0 } } }));
    expect(r.state).toBe('fail');
    expect(r.detail).toContain('failing io=buffered,flush=never: 2');
    expect(r.detail).toContain('not evaluated: io=direct,flush=never: 0 acknowledged records');
  });

  it('offsetChanged and inconsistentOffsets are assertable, per cell and per trial', () => {
    const s = scenario(['offsetChanged == 0 in every trial', 'inconsistentOffsets == 0']);
    const trials = [{ index: 0, ledger: { ...CLEAN, offsetChanged: 0 } }, { index: 1, ledger: { ...CLEAN, offsetChanged: 4 } }];
    const [moved, incons] = evaluateExpectations(s, fourCells({ 'io=direct,flush=never': { trials, ledger: { ...CLEAN, inconsistentOffsets: 8 } } }));
    expect(moved.state).toBe('fail');
    expect(moved.detail).toContain('io=direct,flush=never: trials 0, 4');
    expect(incons.state).toBe('fail');
    expect(incons.detail).toBe('inconsistentOffsets == 0: failed (failing io=direct,flush=never: 8; passing io=buffered,flush=never: 0; io=buffered,flush=per-batch: 0; io=direct,flush=per-batch: 0)');
  });

  it('replicasDiverged is assertable per cell and per trial, and NOT EVALUATED where nothing was compared (RF 1)', () => {
    const s = scenario(['replicasDiverged == 0', 'replicasDiverged == 0 in every trial']);
    const trials = [{ index: 0, ledger: { ...CLEAN, replicasDiverged: 0 } }, { index: 1, ledger: { ...CLEAN, replicasDiverged: 1 } }];
    const [cellLevel, perTrial] = evaluateExpectations(
      s,
      fourCells({
        'io=buffered,flush=never': { ledger: { ...CLEAN, replicasDiverged: 0 }, trials: [trials[0]] },
        'io=direct,flush=never': { ledger: { ...CLEAN, replicasDiverged: 1 }, trials },
      }),
    );
    expect(cellLevel.state).toBe('fail');
    expect(cellLevel.detail).toContain('failing io=direct,flush=never: 1');
    expect(cellLevel.detail).toContain("io=buffered,flush=per-batch: no replicas compared (replication factor 1, or no follower's stored bytes read)");
    expect(perTrial.state).toBe('fail');
    expect(perTrial.detail).toContain('io=direct,flush=never: trials 0, 1');
    const [none] = evaluateExpectations(scenario(['replicasDiverged == 0']), fourCells());
    expect(none.state).toBe('not-evaluated');
  });

  it('refuses an error name that no broker answer or client failure produces, listing the known ones', () => {
    const r = parseExpectation('errors.TIMEOUT == 0');
    expect(r).toMatchObject({ offset: 0, found: "'errors.TIMEOUT'" });
    const expected = (r as { expected: string }).expected;
    expect(expected).toContain('a known error name (');
    for (const name of ['NOT_ENOUGH_REPLICAS', 'REQUEST_TIMED_OUT', 'CLIENT_TIMEOUT', 'CLIENT_ECONNREFUSED', 'HTTP_<status>']) expect(expected).toContain(name);
    // each known name once
    const names = expected.slice(expected.indexOf('(') + 1, -1).split(', ');
    expect(new Set(names).size).toBe(names.length);
    for (const ok of ['errors.CLIENT_ECONNREFUSED == 0', 'errors.HTTP_502 == 0', 'errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND == 0']) {
      expect(parseExpectation(ok)).toHaveProperty('left');
    }
  });
});
