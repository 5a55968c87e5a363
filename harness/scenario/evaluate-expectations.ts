// Evaluating expectations on a run's cells: each ends PASS, FAIL or NOT EVALUATED, its parts (a
// cell, a trial, a pair of cells) merged as Jepsen merges validity, false > unknown > true. A
// part that broke its bound fails the expectation, even in a trial whose fault did not fire or
// that is suspect (the detail names the trial and why it is in doubt); a trial that cannot be
// judged and was not replaced by another attempt (workload.extraTrials, harness/runner/run-cell.ts)
// makes it NOT EVALUATED; it passes only when every part was judged and held. Parts with nothing
// to judge and nothing in doubt are left out and named: a cell or trial with 0 acknowledged
// records for a loss figure, RF 1 for replica divergence, a cell whose consumers consumed
// nothing or stopped on an error for a poll check, a skipped cell, a replaced attempt that held.
// A trial whose cluster did not come back after its fault was not checked: a ledger figure is
// in doubt for it. An expectation with no part judged is NOT EVALUATED.
import type { CellResult, ExpectationResult, ExpectationState, Trial } from '../results/types.ts';
import { DEFAULT_SETTINGS, overlaySettings } from '../model/settings.ts';
import { SETTINGS, type SettingValue } from './settings.ts';
import type { CompareOp, Condition, Expectation, Scenario } from '../model/scenario.ts';
import { faultOfCell, whyUnjudged } from './trial-judgement.ts';
import { unavailableText } from '../results/unavailable-text.ts';

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

/**
 * One part of an expectation (a cell, a trial, a cell pair), merged as Jepsen merges validity
 * (false > unknown > true): bad, it did not hold, whether or not its trial could be judged;
 * unknown, it held (or has no figure) in a trial that cannot be judged (the fault did not fire,
 * suspect) and that no later attempt replaced; ok, judged and held; leftOut, nothing there to
 * judge and nothing in doubt (0 acknowledged records, RF 1, a skipped cell, consumers that
 * consumed nothing, a replaced attempt that held), named but not counted.
 */
interface Verdict {
  state: 'ok' | 'bad' | 'unknown' | 'leftOut';
  /** leftOut only: the part was a cell skipped on purpose. */
  skippedCell?: boolean;
  text: string;
}

/** A trial the detail names with its doubt: "trial 2: suspect (...)", and the attempt that replaced it. */
function doubtText(t: Trial, why: string): string {
  return `trial ${t.index + 1}${t.replacedBy !== undefined ? ` (replaced by trial ${t.replacedBy + 1})` : ''}: ${why}`;
}

const noAcks = (who: string) => `${who}: 0 acknowledged records, so nothing was promised that could be lost or moved`;

/** hwWentBack is measured only where each partition's HW before the fault is known (harness/checker/after-fault.ts). */
function hwNotMeasured(path: string, who: string, ledger: { hwWentBack?: number; hwNotMeasured?: number }, why?: string): string | null {
  if (path !== 'ledger.hwWentBack') return null;
  const at = who ? `${who}: ` : '';
  if (why) return `${at}HW going back not measured (${why})`;
  if (ledger.hwNotMeasured) return `${at}HW going back not measured in ${ledger.hwNotMeasured} trial(s)`;
  if (ledger.hwWentBack === undefined) return `${at}HW going back not measured (no fault fired, or a run.json from before it was measured)`;
  return null;
}

/** replicasDiverged is measured only where there are replicas to compare (RF > 1). */
const noReplicas = (path: string, who: string, ledger: { replicasDiverged?: number }) =>
  path === 'ledger.replicasDiverged' && ledger.replicasDiverged === undefined ? `${who}: no replicas compared (replication factor 1, or no follower's stored bytes read)` : null;

/** Ledger figures a trial holds nothing to judge by (0 acknowledged records, RF 1): left out, not in doubt. */
const trialLeftOut = (path: string, t: Trial) =>
  (NEEDS_ACKS.has(path) && t.ledger.acked === 0 ? noAcks(`trial ${t.index + 1}`) : null) ?? noReplicas(path, `trial ${t.index + 1}`, t.ledger);

function trialVerdicts(e: Expectation, cell: CellResult, hasFault: boolean, bound: number): Verdict[] {
  const trials = cell.trials ?? [];
  if (trials.length === 0 && !cell.unavailableTrials?.length) return [{ state: 'bad', text: `${cell.id}: no trials recorded` }];
  // The figures of the judged trials and of every trial that broke the bound, in trial order.
  const figures: string[] = [];
  let broken = false;
  const notJudged: Verdict[] = [];
  for (const t of trials) {
    const leftOut = trialLeftOut(e.left.path, t);
    if (leftOut) {
      notJudged.push({ state: 'leftOut', text: `${cell.id} ${leftOut}` });
      continue;
    }
    // A figure not measured is in doubt (unknown), not broken.
    const unmeasured = hwNotMeasured(e.left.path, `trial ${t.index + 1}`, t.ledger, t.fault?.hwNotMeasuredWhy);
    if (unmeasured) {
      notJudged.push({ state: t.replacedBy === undefined ? 'unknown' : 'leftOut', text: `${cell.id} ${unmeasured}` });
      continue;
    }
    const why = whyUnjudged(t, hasFault);
    const v = lookup({ ledger: t.ledger }, e.left.path);
    const violated = v !== undefined && !compare(v, e.op, bound);
    if (why !== null && !violated) {
      notJudged.push({ state: t.replacedBy === undefined ? 'unknown' : 'leftOut', text: `${cell.id} ${doubtText(t, why)}` });
      continue;
    }
    broken ||= violated || v === undefined;
    figures.push(`${v === undefined ? 'not recorded' : formatNumber(v)}${why !== null ? ` (${doubtText(t, why)})` : ''}`);
  }
  const judged: Verdict[] = figures.length ? [{ state: broken ? 'bad' : 'ok', text: `${cell.id}: trials ${figures.join(', ')}${statusNote(cell)}` }] : [];
  return [...judged, ...notJudged];
}

/** A cell figure with nothing to judge and nothing in doubt (consumers that consumed nothing, 0 acknowledged records for a loss figure, RF 1). */
function cellLeftOut(path: string, cell: CellResult): string | null {
  if (path.startsWith('consumerChecks.')) return consumersNotEvaluable(cell);
  if (!path.startsWith('ledger.')) return null;
  if (NEEDS_ACKS.has(path) && cell.ledger.acked === 0) return noAcks(cell.id);
  return noReplicas(path, cell.id, cell.ledger);
}

/** A cell's ledger sums every attempt: the trials among them that cannot be judged, with why. */
function cellDoubts(path: string, cell: CellResult, hasFault: boolean): Array<{ trial: Trial; why: string }> {
  if (!path.startsWith('ledger.')) return [];
  return (cell.trials ?? []).flatMap((trial) => {
    const why = whyUnjudged(trial, hasFault) ?? (trial.fault ? hwNotMeasured(path, '', trial.ledger, trial.fault.hwNotMeasuredWhy) : null);
    return why === null ? [] : [{ trial, why }];
  });
}

/**
 * A cell figure's verdict: a figure that broke its bound is bad whatever the doubt, naming the
 * trials in doubt it counts; one that held is unknown while a trial it counts cannot be judged
 * and was not replaced.
 */
function cellFigureVerdict(text: string, held: boolean, doubts: Array<{ trial: Trial; why: string }>): Verdict {
  const named = (ds: typeof doubts) => ds.map((d) => doubtText(d.trial, d.why)).join('; ');
  if (!held) return { state: 'bad', text: doubts.length ? `${text} (counting ${named(doubts)})` : text };
  const open = doubts.filter((d) => d.trial.replacedBy === undefined);
  if (open.length) return { state: 'unknown', text: `${text}, but not every trial can be judged (${named(open)})` };
  return { state: 'ok', text };
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
  // A cell that measures throughput runs without the scenario's fault: its trials have none to miss.
  const withParams = cells.map((cell) => {
    const params = paramsOfResult(scenario, cell);
    return { cell, params, hasFault: faultOfCell(scenario, params) !== undefined };
  });
  const leftCells = withParams.filter((c) => matchesWhere(c.params, e.left.where));

  if (cells.length === 0) return result(e, [{ state: 'leftOut', text: 'no cells were run' }]);
  if (leftCells.length === 0) {
    const detail = `${e.expression}: failed (${whereText(e.left.where)} matches no cell; cells: ${cells.map((c) => c.id).join('; ')})`;
    return { expression: e.expression, passed: false, state: 'fail', detail };
  }

  const verdicts: Verdict[] = [];
  for (const { cell, params, hasFault } of leftCells) {
    const unmeasured = measuredOrNot(cell);
    if (unmeasured) {
      verdicts.push(unmeasured);
      continue;
    }
    verdicts.push(...unavailableVerdicts(e.left.path, cell));
    if (e.right.kind === 'number') {
      if (e.everyTrial) verdicts.push(...trialVerdicts(e, cell, hasFault, e.right.value));
      else verdicts.push(cellVerdict(e, cell, hasFault, e.right.value));
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
    const leftWhy = cellLeftOut(e.left.path, cell);
    if (leftWhy) {
      verdicts.push({ state: 'leftOut', text: leftWhy });
      continue;
    }
    const lv = metricValue(cell, e.left.path);
    for (const r of partners) {
      const unmeasuredPartner = measuredOrNot(r.cell);
      if (unmeasuredPartner) {
        verdicts.push(unmeasuredPartner);
        continue;
      }
      verdicts.push(...unavailableVerdicts(metric.path, r.cell));
      const rightWhy = cellLeftOut(metric.path, r.cell);
      if (rightWhy) {
        verdicts.push({ state: 'leftOut', text: rightWhy });
        continue;
      }
      const rv = metricValue(r.cell, metric.path);
      const notReported =
        (lv === undefined ? (brokerNotReported(e.left.path, cell.id) ?? throughputNotMeasured(e.left.path, cell)) : null) ??
        (rv === undefined ? (brokerNotReported(metric.path, r.cell.id) ?? throughputNotMeasured(metric.path, r.cell)) : null);
      if (notReported) {
        verdicts.push({ state: 'unknown', text: notReported });
        continue;
      }
      if (lv === undefined || rv === undefined) {
        const missing = lv === undefined ? `${cell.id}: ${e.left.path}` : `${r.cell.id}: ${metric.path}`;
        verdicts.push({ state: 'bad', text: `${missing} not recorded` });
        continue;
      }
      const scaled = factor * rv;
      const rhs = factor === 1 ? `${r.cell.id} ${formatNumber(rv)}` : `${formatNumber(factor)} * ${r.cell.id} ${formatNumber(rv)} = ${formatNumber(scaled)}`;
      const doubts = [...cellDoubts(e.left.path, cell, hasFault), ...cellDoubts(metric.path, r.cell, r.hasFault)];
      verdicts.push(cellFigureVerdict(`${cell.id} ${formatNumber(lv)} ${e.op} ${rhs}`, compare(lv, e.op, scaled), doubts));
    }
  }
  return result(e, verdicts);
}

/** A broker figure absent from a measured cell: its brokers report none to clients and no file gave it (Kafka's and NATS's flushes): in doubt, not broken. */
function brokerNotReported(path: string, who: string): string | null {
  return path.startsWith('broker.') ? `${who}: ${path} not reported (its driver carries none: the Kafka protocol and NATS monitoring give no flush count, and segments are counted only where the data dirs are on this host; or no broker answered)` : null;
}

/** A cell's throughput is absent when no repetition finished its load: not measured, in doubt, not broken. */
function throughputNotMeasured(path: string, cell: CellResult): string | null {
  return path.startsWith('throughput.') && cell.throughput === undefined ? `${cell.id}: ${path} not measured (no repetition finished its load)` : null;
}

/** A trial whose cluster did not come back was not checked: a ledger figure is unknown for it (runner/unavailable-trial.ts). */
function unavailableVerdicts(path: string, cell: CellResult): Verdict[] {
  if (!path.startsWith('ledger.')) return [];
  return (cell.unavailableTrials ?? []).map((u) => ({ state: 'unknown', text: unavailableText(cell.id, u) }));
}

/** A skipped cell is left out; a cell that failed to run fails the expectation; null for a measured cell. */
function measuredOrNot(cell: CellResult): Verdict | null {
  if (cell.status === 'skipped') return { state: 'leftOut', skippedCell: true, text: notMeasured(cell) };
  if (!MEASURED.has(cell.status)) return { state: 'bad', text: notMeasured(cell) };
  return null;
}

/** A cell's own figure against a number. */
function cellVerdict(e: Expectation, cell: CellResult, hasFault: boolean, bound: number): Verdict {
  const why = cellLeftOut(e.left.path, cell);
  if (why) return { state: 'leftOut', text: why };
  const v = metricValue(cell, e.left.path);
  const unmeasured = v === undefined ? (hwNotMeasured(e.left.path, cell.id, cell.ledger) ?? brokerNotReported(e.left.path, cell.id) ?? throughputNotMeasured(e.left.path, cell)) : null;
  if (unmeasured) return { state: 'unknown', text: unmeasured };
  if (v === undefined) return { state: 'bad', text: `${cell.id}: ${e.left.path} not recorded` };
  return cellFigureVerdict(`${cell.id}: ${formatNumber(v)}${statusNote(cell)}`, compare(v, e.op, bound), cellDoubts(e.left.path, cell, hasFault));
}

/**
 * Merged as Jepsen merges validity, false > unknown > true: FAIL when any part broke its bound
 * (a trial in doubt included); NOT EVALUATED when a part could not be judged (a trial whose
 * fault did not fire or that is suspect, not replaced by another attempt) or none was judged;
 * PASS when every part was judged and held. Parts left out are named either way.
 */
function result(e: Expectation, verdicts: Verdict[]): ExpectationResult {
  const texts = (...states: Array<Verdict['state']>) => verdicts.filter((v) => states.includes(v.state)).map((v) => v.text);
  const [ok, bad, unknown, notJudged] = [texts('ok'), texts('bad'), texts('unknown'), texts('unknown', 'leftOut')];
  const state: ExpectationState = bad.length > 0 ? 'fail' : unknown.length > 0 || ok.length === 0 ? 'not-evaluated' : 'pass';
  const reason = notJudged.length ? notJudged.join('; ') : undefined;
  const left = reason ? `; not evaluated: ${reason}` : '';
  const body = (parts: string[]) => (e.right.kind === 'number' ? `cells ${parts.join('; ')}` : parts.join('; '));
  let detail: string;
  if (state === 'not-evaluated') {
    detail = `${e.expression}: not evaluated (${reason ?? 'nothing to judge'}${ok.length ? `; held in ${body(ok)}` : ''})`;
  } else if (state === 'pass') {
    detail = `${e.expression}: passed (${body(ok)}${left})`;
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
