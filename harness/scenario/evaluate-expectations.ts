// Evaluating expectations on a run's cells: each ends PASS, FAIL or NOT EVALUATED. A part of
// an expectation (a cell, a trial, a pair of cells) that lacks the evidence to judge it is left
// out and named: a trial whose fault did not fire or that is suspect, a cell or trial with 0
// acknowledged records for a loss figure, a cell whose consumers consumed nothing or stopped on
// an error for a poll check, a skipped cell. An expectation with no part left to
// judge is NOT EVALUATED; any judged part failing makes it FAIL.
import type { CellResult, ExpectationResult, ExpectationState, Trial } from '../results/types.ts';
import { DEFAULT_SETTINGS, SETTINGS, overlaySettings, type SettingValue } from './settings.ts';
import type { CompareOp, Condition, Expectation, Scenario } from './types.ts';

/** Ledger figures that only mean something when records were acknowledged: with 0 acked they are not evaluated. */
const NEEDS_ACKS = new Set(['ledger.ackedLost', 'ledger.offsetChanged', 'ledger.inconsistentOffsets', 'ledger.outOfOrder', 'ledger.hwWentBack']);

/** Every setting in force for a cell: defaults, cluster, base settings, then the cell's own. */
export function effectiveParams(scenario: Scenario, cellParams: Record<string, SettingValue>): Record<string, SettingValue> {
  return overlaySettings(
    DEFAULT_SETTINGS,
    { 'min.insync.replicas': scenario.cluster.minInsyncReplicas },
    scenario.settings,
    cellParams,
  );
}

function paramsOfResult(scenario: Scenario, cell: CellResult): Record<string, SettingValue> {
  const known = scenario.matrix.find((c) => c.id === cell.id);
  if (known) return effectiveParams(scenario, known.params);
  // A cell the scenario does not list (an older run.json): read its params as written.
  const params: Record<string, SettingValue> = {};
  for (const [k, v] of Object.entries(cell.params ?? {})) params[k] = SETTINGS[k]?.parse(v) ?? v;
  return effectiveParams(scenario, params);
}

function matchesWhere(params: Record<string, SettingValue>, where: Condition[]): boolean {
  return where.every((c) => params[c.param] === c.value);
}

function lookup(obj: unknown, path: string): number | undefined {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return typeof cur === 'number' && Number.isFinite(cur) ? cur : undefined;
}

function metricValue(cell: CellResult, path: string): number | undefined {
  const v = lookup(cell, path);
  // Error counters are sparse: a name never seen happened zero times.
  if (v === undefined && path.startsWith('errors.') && cell.errors) return 0;
  return v;
}

function compare(a: number, op: CompareOp, b: number): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(4)));
}

function whereText(where: Condition[]): string {
  return where.length ? `where ${where.map((c) => c.text).join(' and ')}` : '(all cells)';
}


const MEASURED = new Set<CellResult['status']>(['ok', 'interrupted']);

function statusNote(cell: CellResult): string {
  return cell.status === 'ok' ? '' : ` (${cell.status})`;
}

function notMeasured(cell: CellResult): string {
  return `${cell.id}: not measured (${cell.status}${cell.note ? `: ${cell.note}` : ''})`;
}

/** One part of an expectation (a cell, a trial, a cell pair): it held, it did not, or it could not be judged. */
interface Verdict {
  state: 'ok' | 'bad' | 'na';
  /** na only: the part was a cell skipped on purpose. */
  skippedCell?: boolean;
  text: string;
}

/** Why a trial's figures cannot judge an expectation, or null when they can. */
export function trialNotEvaluable(trial: Trial, hasFault: boolean): string | null {
  // The runner's note says why (the load ended first, Ctrl-C); without one, say what is missing.
  if (hasFault && !trial.fault) return `trial ${trial.index}: ${trial.note ?? 'the fault did not fire'}`;
  if (trial.suspect) return `trial ${trial.index}: suspect (${trial.note ?? 'no reason recorded'})`;
  return null;
}

const noAcks = (who: string) => `${who}: 0 acknowledged records, so nothing was promised that could be lost or moved`;

/** hwWentBack is measured only where each partition's HW before the fault is known (harness/checker/after-fault.ts). */
function hwNotMeasured(path: string, who: string, ledger: { hwWentBack?: number; hwNotMeasured?: number }, why?: string): string | null {
  if (path !== 'ledger.hwWentBack') return null;
  if (why) return `${who}: HW going back not measured (${why})`;
  if (ledger.hwNotMeasured) return `${who}: HW going back not measured in ${ledger.hwNotMeasured} trial(s)`;
  if (ledger.hwWentBack === undefined) return `${who}: HW going back not measured (no fault fired, or a run.json from before it was measured)`;
  return null;
}

/** replicasDiverged is measured only where there are replicas to compare (RF > 1). */
const noReplicas = (path: string, who: string, ledger: { replicasDiverged?: number }) =>
  path === 'ledger.replicasDiverged' && ledger.replicasDiverged === undefined ? `${who}: no replicas compared (replication factor 1, or no follower's stored bytes read)` : null;

function trialVerdicts(e: Expectation, cell: CellResult, hasFault: boolean, bound: number): Verdict[] {
  const trials = cell.trials ?? [];
  if (trials.length === 0) return [{ state: 'bad', text: `${cell.id}: no trials recorded` }];
  const judged: string[] = [];
  const skipped: string[] = [];
  let ok = true;
  for (const t of trials) {
    const why =
      trialNotEvaluable(t, hasFault) ??
      (NEEDS_ACKS.has(e.left.path) && t.ledger.acked === 0 ? noAcks(`trial ${t.index}`) : null) ??
      noReplicas(e.left.path, `trial ${t.index}`, t.ledger) ??
      hwNotMeasured(e.left.path, `trial ${t.index}`, t.ledger, t.fault?.hwNotMeasuredWhy);
    if (why) {
      skipped.push(why);
      continue;
    }
    const v = lookup({ ledger: t.ledger }, e.left.path);
    if (v === undefined || !compare(v, e.op, bound)) ok = false;
    judged.push(v === undefined ? 'not recorded' : formatNumber(v));
  }
  const out: Verdict[] = [];
  if (judged.length) out.push({ state: ok ? 'ok' : 'bad', text: `${cell.id}: trials ${judged.join(', ')}${statusNote(cell)}` });
  for (const why of skipped) out.push({ state: 'na', text: `${cell.id} ${why}` });
  return out;
}

/** A cell's own figure can be judged only if the cell acknowledged something (loss figures) and, with a fault, some trial's fault fired. */
function cellNotEvaluable(path: string, cell: CellResult, hasFault: boolean): string | null {
  if (path.startsWith('consumerChecks.')) return consumersNotEvaluable(cell);
  if (!path.startsWith('ledger.')) return null;
  if (NEEDS_ACKS.has(path) && cell.ledger.acked === 0) return noAcks(cell.id);
  const unreplicated = noReplicas(path, cell.id, cell.ledger) ?? hwNotMeasured(path, cell.id, cell.ledger);
  if (unreplicated) return unreplicated;
  const trials = cell.trials ?? [];
  if (hasFault && trials.length > 0 && trials.every((t) => trialNotEvaluable(t, hasFault))) {
    return `${cell.id}: no trial is evaluable (${trials.map((t) => trialNotEvaluable(t, hasFault)).join('; ')})`;
  }
  return null;
}

/** Poll checks judge what was consumed: nothing consumed, or a group that stopped on an error, is no evidence. */
function consumersNotEvaluable(cell: CellResult): string | null {
  const groups = (cell.consumers ?? []).flatMap((r) => r.groups);
  const failed = groups.find((g) => g.errors.length > 0);
  if (failed) return `${cell.id}: consumer group ${failed.name} stopped on an error (${failed.errors[0]}), so its poll checks saw only part of the load`;
  if (groups.length > 0 && groups.every((g) => g.records === 0)) return `${cell.id}: its consumer groups consumed nothing`;
  return null;
}

function evaluateOne(scenario: Scenario, e: Expectation, cells: CellResult[]): ExpectationResult {
  const withParams = cells.map((cell) => ({ cell, params: paramsOfResult(scenario, cell) }));
  const leftCells = withParams.filter((c) => matchesWhere(c.params, e.left.where));
  const hasFault = scenario.faults.length > 0;

  if (cells.length === 0) return result(e, [{ state: 'na', text: 'no cells were run' }]);
  if (leftCells.length === 0) {
    const detail = `${e.expression}: failed (${whereText(e.left.where)} matches no cell; cells: ${cells.map((c) => c.id).join('; ')})`;
    return { expression: e.expression, passed: false, state: 'fail', detail };
  }

  const verdicts: Verdict[] = [];
  for (const { cell, params } of leftCells) {
    if (cell.status === 'skipped') {
      verdicts.push({ state: 'na', skippedCell: true, text: notMeasured(cell) });
      continue;
    }
    if (!MEASURED.has(cell.status)) {
      verdicts.push({ state: 'bad', text: notMeasured(cell) });
      continue;
    }
    if (e.right.kind === 'number') {
      if (e.everyTrial) {
        verdicts.push(...trialVerdicts(e, cell, hasFault, e.right.value));
        continue;
      }
      const why = cellNotEvaluable(e.left.path, cell, hasFault);
      if (why) {
        verdicts.push({ state: 'na', text: why });
        continue;
      }
      const v = metricValue(cell, e.left.path);
      if (v === undefined) {
        verdicts.push({ state: 'bad', text: `${cell.id}: ${e.left.path} not recorded` });
        continue;
      }
      verdicts.push({ state: compare(v, e.op, e.right.value) ? 'ok' : 'bad', text: `${cell.id}: ${formatNumber(v)}${statusNote(cell)}` });
      continue;
    }

    const { factor, metric } = e.right;
    const free = new Set([...e.left.where, ...metric.where].map((c) => c.param));
    const partners = withParams.filter(
      (r) =>
        r.cell !== cell &&
        matchesWhere(r.params, metric.where) &&
        [...new Set([...Object.keys(params), ...Object.keys(r.params)])].every((k) => free.has(k) || params[k] === r.params[k]),
    );
    if (partners.length === 0) {
      verdicts.push({ state: 'bad', text: `${cell.id}: no cell ${whereText(metric.where)} with the same other settings` });
      continue;
    }
    const leftWhy = cellNotEvaluable(e.left.path, cell, hasFault);
    if (leftWhy) {
      verdicts.push({ state: 'na', text: leftWhy });
      continue;
    }
    const lv = metricValue(cell, e.left.path);
    for (const r of partners) {
      if (r.cell.status === 'skipped') {
        verdicts.push({ state: 'na', skippedCell: true, text: notMeasured(r.cell) });
        continue;
      }
      if (!MEASURED.has(r.cell.status)) {
        verdicts.push({ state: 'bad', text: notMeasured(r.cell) });
        continue;
      }
      const rightWhy = cellNotEvaluable(metric.path, r.cell, hasFault);
      if (rightWhy) {
        verdicts.push({ state: 'na', text: rightWhy });
        continue;
      }
      const rv = metricValue(r.cell, metric.path);
      if (lv === undefined || rv === undefined) {
        const missing = lv === undefined ? `${cell.id}: ${e.left.path}` : `${r.cell.id}: ${metric.path}`;
        verdicts.push({ state: 'bad', text: `${missing} not recorded` });
        continue;
      }
      const scaled = factor * rv;
      const rhs = factor === 1 ? `${r.cell.id} ${formatNumber(rv)}` : `${formatNumber(factor)} * ${r.cell.id} ${formatNumber(rv)} = ${formatNumber(scaled)}`;
      verdicts.push({ state: compare(lv, e.op, scaled) ? 'ok' : 'bad', text: `${cell.id} ${formatNumber(lv)} ${e.op} ${rhs}` });
    }
  }
  return result(e, verdicts);
}

/**
 * FAIL when any judged part fails; PASS when every judged part holds and at least one was
 * judged; NOT EVALUATED when no part could be judged. Parts left out are named either way.
 */
function result(e: Expectation, verdicts: Verdict[]): ExpectationResult {
  const texts = (state: Verdict['state']) => verdicts.filter((v) => v.state === state).map((v) => v.text);
  const [ok, bad, na] = [texts('ok'), texts('bad'), texts('na')];
  const state: ExpectationState = bad.length > 0 ? 'fail' : ok.length > 0 ? 'pass' : 'not-evaluated';
  const reason = na.length ? na.join('; ') : undefined;
  const left = reason ? `; not evaluated: ${reason}` : '';
  let detail: string;
  if (state === 'not-evaluated') {
    detail = `${e.expression}: not evaluated (${reason ?? 'nothing to judge'})`;
  } else if (state === 'pass') {
    const body = e.right.kind === 'number' ? `cells ${ok.join('; ')}` : ok.join('; ');
    detail = `${e.expression}: passed (${body}${left})`;
  } else {
    detail = `${e.expression}: failed (failing ${bad.join('; ')}${ok.length ? `; passing ${ok.join('; ')}` : ''}${left})`;
  }
  const allSkippedCells = state === 'not-evaluated' && verdicts.length > 0 && verdicts.every((v) => v.skippedCell);
  return {
    expression: e.expression,
    passed: state === 'pass',
    ...(allSkippedCells ? { skipped: true } : {}),
    state,
    ...(reason ? { reason } : {}),
    detail,
  };
}

export function evaluateExpectations(scenario: Scenario, cells: CellResult[]): ExpectationResult[] {
  return scenario.expectations.map((e) => evaluateOne(scenario, e, cells));
}
