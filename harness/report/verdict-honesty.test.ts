// What a run's report and terminal summary claim: expectation states with their reasons, the
// exit code that follows from them, and, for VM runs, the disk model the loss figures hold for.
import { describe, expect, it } from 'vitest';
import type { ExpectationResult, RunResult } from '../results/types.ts';
import { EXIT, runVerdict } from '../results/verdict.ts';
import { DISK_MODELS } from '../results/disk-models.ts';
import { runDiskModelText } from '../targets/run-targets.ts';
import { summaryTable } from './summary-table.ts';
import { renderRunReport } from './index.ts';
import { verdict } from './findings.ts';
import { powerCutRun, processRun } from './test-fixtures.ts';

const PASS: ExpectationResult = { expression: 'corrupt == 0', passed: true, state: 'pass', detail: 'corrupt == 0: passed (cells a: 0)' };
const FAIL: ExpectationResult = { expression: 'ackedLost == 0', passed: false, state: 'fail', detail: 'ackedLost == 0: failed (failing a: 3)' };
const NOT_EVALUATED: ExpectationResult = {
  expression: 'ackedLost == 0 in every trial',
  passed: false,
  state: 'not-evaluated',
  reason: 'a trial 0: the fault (after 1000000000 acknowledged records) never fired',
  detail: 'ackedLost == 0 in every trial: not evaluated (a trial 0: the fault (after 1000000000 acknowledged records) never fired)',
};

function completeRun(expectations: ExpectationResult[]): RunResult {
  return { ...processRun(), status: 'complete', expectations };
}

describe('exit codes', () => {
  it('0 only when every expectation passed; 1 on a failure; 3 when one was not evaluated', () => {
    expect(runVerdict(completeRun([PASS]), false)).toEqual({ code: EXIT.passed, line: 'verdict: PASS (1 expectation(s)); exit 0' });
    expect(runVerdict(completeRun([PASS, FAIL, NOT_EVALUATED]), false).code).toBe(EXIT.failed);
    expect(runVerdict(completeRun([PASS, NOT_EVALUATED]), false)).toEqual({
      code: EXIT.notEvaluated,
      line: 'verdict: NOT EVALUATED (1 of 2 expectation(s) lacked the evidence to judge; none failed); exit 3',
    });
    expect(EXIT.notEvaluated).not.toBe(EXIT.failed);
    expect(EXIT.notEvaluated).not.toBe(EXIT.passed);
  });

  it('names a split brain (two different records acknowledged at one offset) in the verdict line, whatever the expectations', () => {
    const run = completeRun([PASS]);
    run.cells[0]!.ledger.inconsistentOffsets = 3;
    expect(runVerdict(run, false).line).toBe(`verdict: PASS (1 expectation(s)); exit 0; SPLIT BRAIN: two different records acknowledged at one offset in ${run.cells[0]!.id} (3 offset(s))`);
    run.cells[0]!.ledger.inconsistentOffsets = 0;
    expect(runVerdict(run, false).line).toBe('verdict: PASS (1 expectation(s)); exit 0');
  });

  it('3 when nothing was measured, even with no expectation failing; run.json files without states still count', () => {
    const skipped = completeRun([PASS]);
    for (const c of skipped.cells) c.status = 'skipped';
    expect(runVerdict(skipped, false).code).toBe(EXIT.notEvaluated);
    expect(runVerdict(skipped, false).line).toContain('NOTHING MEASURED');
    // written before states existed: skipped meant not evaluated
    const legacy = completeRun([{ expression: 'x == 0', passed: false, skipped: true, detail: 'x == 0: not evaluated (a: not measured)' }]);
    expect(runVerdict(legacy, false).code).toBe(EXIT.notEvaluated);
  });

  it('an incomplete run exits 1, or 130 when interrupted', () => {
    const run = { ...completeRun([PASS]), status: 'incomplete' as const };
    expect(runVerdict(run, false).code).toBe(EXIT.failed);
    expect(runVerdict(run, true).code).toBe(EXIT.interrupted);
  });
});

describe('the state and its reason are shown', () => {
  it('in the terminal summary', () => {
    const text = summaryTable(completeRun([PASS, NOT_EVALUATED, FAIL]));
    expect(text).toContain('  PASS  corrupt == 0: passed (cells a: 0)');
    expect(text).toContain('  NOT EVALUATED  ackedLost == 0 in every trial: not evaluated (a trial 0: the fault (after 1000000000 acknowledged records) never fired)');
    expect(text).toContain('  FAIL  ackedLost == 0: failed (failing a: 3)');
    expect(text.split('\n')[0]).toMatch(/\blost {2}incons {2}dup\b/);
  });

  it('in the report: a NOT EVALUATED row with its reason, and a verdict that is not a pass', () => {
    const run = completeRun([PASS, NOT_EVALUATED]);
    const html = renderRunReport(run);
    const row = html.slice(html.indexOf('data-state="not-evaluated"'));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('NOT EVALUATED');
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('why not evaluated:</b> a trial 0: the fault (after 1000000000 acknowledged records) never fired');
    expect(verdict(run)).toEqual({ text: 'NOT EVALUATED 1 of 2 (passed 1)', tone: 'fail' });
    expect(html).toContain('NOT EVALUATED 1 of 2 (passed 1)');
  });
});

describe('the disk model of VM runs', () => {
  const model = DISK_MODELS['virtio-blk-file-writeback'];

  it('is named in the report and the terminal summary of every VM run', () => {
    const run = powerCutRun();
    const html = renderRunReport(run);
    const banner = html.slice(html.indexOf('id="disk-model"'));
    expect(banner.slice(0, banner.indexOf('</div>'))).toContain(
      "disk model: virtio-blk over a host file, cache=writeback: the guest&#39;s page cache and its uncommitted ext4 journal are lost at a cut; the disk keeps every write it received",
    );
    expect(summaryTable(run)).toContain(`disk model: ${model.name}: ${model.atCut}.`);
  });

  it('follows the run\'s recorded model, and is absent for the process target', () => {
    expect(runDiskModelText({ target: 'vm', diskModel: 'nbd-lossy' })).toBe(
      'disk model: nbd-lossy: not described (unknown disk model id). Loss and recovery figures hold for this model only.',
    );
    expect(runDiskModelText({ target: 'vm' })).toContain(model.name);
    const proc = processRun();
    expect(runDiskModelText(proc)).toBeNull();
    expect(renderRunReport(proc)).not.toContain('id="disk-model"');
    expect(summaryTable(proc)).not.toContain('disk model:');
  });
});
