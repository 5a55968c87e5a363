// A run's verdict: each expectation's state (PASS, FAIL, NOT EVALUATED) and the exit code of
// `durolab bench`, in one place for the terminal summary, the report and the CLI.
import type { ExpectationResult, ExpectationState, RunResult } from './types.ts';

/** The state of an expectation, also for run.json files written before states existed. */
export function expectationState(e: ExpectationResult): ExpectationState {
  return e.state ?? (e.passed ? 'pass' : e.skipped ? 'not-evaluated' : 'fail');
}

export const STATE_LABEL: Record<ExpectationState, string> = { pass: 'PASS', fail: 'FAIL', 'not-evaluated': 'NOT EVALUATED' };

/** Exit codes of `durolab bench` (also in its --help and the README). */
export const EXIT = {
  /** Every expectation passed (or the scenario states none) and something was measured. */
  passed: 0,
  /** An expectation failed, or the run failed or stopped incomplete. */
  failed: 1,
  /** Bad command line (a malformed scenario exits 1, naming the file, line and field). */
  usage: 2,
  /** No expectation failed, but one was NOT EVALUATED or no cell was measured. */
  notEvaluated: 3,
  /** Ctrl-C. */
  interrupted: 130,
} as const;

/** No cell ran its load: every one was skipped or failed to start. */
export function nothingMeasured(run: RunResult): boolean {
  return !run.cells.some((c) => c.status === 'ok' || c.status === 'interrupted');
}

/**
 * Fault trials whose cluster did not come back (CellResult.unavailableTrials): the run is FAIL
 * whatever its expectations say, since what was acknowledged could not be read back at all; the
 * expectations stay NOT EVALUATED for those trials (their loss was never measured).
 */
export function unavailableTrialsOf(run: RunResult): Array<{ cell: string; trial: number; evidence: string }> {
  return run.cells.flatMap((c) => (c.unavailableTrials ?? []).map((u) => ({ cell: c.id, trial: u.index + 1, evidence: u.evidence })));
}

/** "2 trial(s) unavailable after the fault (the cluster did not come back; evidence in A, B)", or ''. */
export function unavailableVerdictText(run: RunResult): string {
  const us = unavailableTrialsOf(run);
  if (us.length === 0) return '';
  const shown = us.slice(0, 3).map((u) => u.evidence);
  return `${us.length} trial(s) unavailable after the fault: the cluster did not come back (evidence in ${shown.join(', ')}${us.length > shown.length ? `, and ${us.length - shown.length} more` : ''})`;
}

export interface RunVerdict {
  code: number;
  /** One line for the terminal, saying why the code is what it is. */
  line: string;
}

export function runVerdict(run: RunResult, aborted: boolean): RunVerdict {
  const v = verdictOf(run, aborted);
  const split = splitBrainText(run);
  return split ? { ...v, line: `${v.line}; ${split}` } : v;
}

/**
 * Two different records acknowledged at one offset (ledger.inconsistentOffsets) is a split brain:
 * two leaders each took writes for the same place. Named in the verdict line whatever the
 * expectations say; null when no cell saw one.
 */
export function splitBrainText(run: RunResult): string | null {
  const cells = run.cells.filter((c) => (c.ledger?.inconsistentOffsets ?? 0) > 0);
  if (!cells.length) return null;
  return `SPLIT BRAIN: two different records acknowledged at one offset in ${cells.map((c) => `${c.id} (${c.ledger.inconsistentOffsets} offset(s))`).join(', ')}`;
}

function verdictOf(run: RunResult, aborted: boolean): RunVerdict {
  if (run.status !== 'complete') {
    return aborted
      ? { code: EXIT.interrupted, line: `run status: ${run.status} (interrupted)` }
      : { code: EXIT.failed, line: `run status: ${run.status}` };
  }
  const states = run.expectations.map(expectationState);
  const count = (s: ExpectationState) => states.filter((x) => x === s).length;
  const failed = count('fail');
  const notEvaluated = count('not-evaluated');
  const unavailable = unavailableVerdictText(run);
  if (failed > 0 || unavailable) {
    const parts = [...(failed > 0 ? [`${failed} of ${states.length} expectation(s) failed`] : []), ...(unavailable ? [unavailable] : []), ...(notEvaluated ? [`${notEvaluated} expectation(s) not evaluated`] : [])];
    return { code: EXIT.failed, line: `verdict: FAIL (${parts.join('; ')}); exit ${EXIT.failed}` };
  }
  if (nothingMeasured(run)) {
    return { code: EXIT.notEvaluated, line: `verdict: NOTHING MEASURED (every cell was skipped or failed to run); exit ${EXIT.notEvaluated}` };
  }
  if (notEvaluated > 0) {
    return { code: EXIT.notEvaluated, line: `verdict: NOT EVALUATED (${notEvaluated} of ${states.length} expectation(s) lacked the evidence to judge; none failed); exit ${EXIT.notEvaluated}` };
  }
  return { code: EXIT.passed, line: states.length ? `verdict: PASS (${states.length} expectation(s)); exit 0` : 'verdict: no expectations; exit 0' };
}
