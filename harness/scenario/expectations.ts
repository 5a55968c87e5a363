// Expectations: one-line assertions on a run's cells, parsed when the scenario loads (so a
// typo stops the run before it starts) and evaluated on the CellResults at the end
// (evaluate-expectations.ts).
//
//   <metric> <op> <number> [where <param> == <value> [and ...]] [in every trial]
//   <metric> [where ...] <op> [<k> *] <metric> [where ...]
//
// A ratio compares each cell matching the left side with the cells matching the right side
// that agree on every other setting (so `p99 where flush == per-batch <= 5 * p99 where
// flush == never` pairs cells of the same io mode).

import { KNOWN_ERROR_NAMES, isKnownErrorName, knownErrorNamesText } from '../history/error-names.ts';
import { suggest } from './errors.ts';
import { SETTINGS, SETTING_NAMES } from './settings.ts';
import type { CompareOp, Condition, Expectation, MetricRef, Operand } from '../model/scenario.ts';

// Evaluation lives in evaluate-expectations.ts; these names stay importable from here.
export { effectiveParams, evaluateExpectations, formatNumber } from './evaluate-expectations.ts';

const LEDGER_FIELDS = ['acked', 'ackedLost', 'duplicates', 'outOfOrder', 'corrupt', 'unackedPresent', 'offsetChanged', 'inconsistentOffsets', 'replicasDisagree', 'replicasDiverged', 'hwWentBack', 'ackedWhileIsrShrunk', 'lostBeyondPrediction'];
const LATENCY_FIELDS = ['p50', 'p90', 'p99', 'p999', 'p9999', 'max', 'count'];

export const METRICS: readonly string[] = [
  ...LEDGER_FIELDS.map((f) => `ledger.${f}`),
  ...['recordsPerSec', 'mbPerSec', 'requestsPerSec'].map((f) => `throughput.${f}`),
  ...LATENCY_FIELDS.map((f) => `latencyUs.${f}`),
  ...LATENCY_FIELDS.map((f) => `correctedLatencyUs.${f}`),
  ...['flushes', 'segments', 'indexFiles', 'bytes', 'rolls'].map((f) => `broker.${f}`),
  ...['p50', 'p99', 'p999', 'max'].map((f) => `broker.flushTimeUs.${f}`),
  ...['nonMonotonic', 'skipped', 'neverAcked', 'corrupt'].map((f) => `consumerChecks.${f}`),
];

const OPS: readonly CompareOp[] = ['==', '!=', '<', '<=', '>', '>='];
const NUMBER_RE = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const KEYWORDS = ['where', 'and', 'in', 'every', 'trial'];
const METRIC_HINT = 'a metric such as ackedLost, ledger.duplicates, latencyUs.p99, throughput.recordsPerSec, errors.NOT_ENOUGH_REPLICAS';

export interface ExpectationSyntaxError {
  /** Character offset into the expression. */
  offset: number;
  expected: string;
  found: string;
}

interface Token {
  text: string;
  offset: number;
}

function tokenize(text: string): Token[] {
  const re = /\s*(==|!=|<=|>=|<|>|\*|[^\s=!<>*]+|\S)/y;
  const out: Token[] = [];
  let m: RegExpExecArray | null;
  while (re.lastIndex < text.length && (m = re.exec(text))) {
    if (m[1] === undefined) break;
    out.push({ text: m[1], offset: m.index + m[0].length - m[1].length });
  }
  return out;
}

class Fail extends Error {
  constructor(readonly detail: ExpectationSyntaxError) {
    super(detail.expected);
  }
}

/** `ackedLost` -> `ledger.ackedLost`; undefined when the name is not a metric. */
export function resolveMetric(name: string): string | undefined {
  if (LEDGER_FIELDS.includes(name)) return `ledger.${name}`;
  if (METRICS.includes(name)) return name;
  if (/^errors\.[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return name;
  return undefined;
}

class Parser {
  private i = 0;
  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private fail(expected: string, at = this.peek()): never {
    throw new Fail({
      offset: at?.offset ?? this.text.length,
      expected,
      found: at ? `'${at.text}'` : 'the end of the expectation',
    });
  }

  private take(expected: string): Token {
    const t = this.peek();
    if (!t) this.fail(expected);
    this.i++;
    return t;
  }

  private metric(): MetricRef {
    const t = this.take(METRIC_HINT);
    const path = resolveMetric(t.text);
    if (path === undefined) {
      const close = suggest(t.text, [...LEDGER_FIELDS, ...METRICS, ...KNOWN_ERROR_NAMES.map((e) => `errors.${e}`)]);
      this.fail(close ? `a metric (did you mean '${close}'?)` : METRIC_HINT, t);
    }
    if (path.startsWith('errors.')) {
      const name = path.slice('errors.'.length);
      if (!isKnownErrorName(name)) {
        // A name no broker answer or client failure produces could never be counted: the expectation could never fail.
        const close = suggest(name, KNOWN_ERROR_NAMES);
        this.fail(close ? `a known error name (did you mean 'errors.${close}'?)` : `a known error name (${knownErrorNamesText()})`, t);
      }
    }
    return { path, where: [] };
  }

  private where(): Condition[] {
    const out: Condition[] = [];
    do {
      this.i++; // 'where' or 'and'
      const p = this.take('a setting name after where/and');
      if (!SETTINGS[p.text]) {
        const close = suggest(p.text, SETTING_NAMES);
        this.fail(close ? `a setting name (did you mean '${close}'?)` : `a setting name (${SETTING_NAMES.join(', ')})`, p);
      }
      const eq = this.take(`== after ${p.text}`);
      if (eq.text !== '==') this.fail(`== after ${p.text} (where compares settings for equality)`, eq);
      const v = this.take(`a value for ${p.text}`);
      const value = SETTINGS[p.text].parse(v.text);
      if (value === undefined) this.fail(`${p.text}: ${SETTINGS[p.text].expected}`, v);
      out.push({ param: p.text, value, text: `${p.text} == ${v.text}` });
    } while (this.peek()?.text === 'and');
    return out;
  }

  private number(): number | undefined {
    const t = this.peek();
    if (t && NUMBER_RE.test(t.text)) {
      this.i++;
      return Number(t.text);
    }
    return undefined;
  }

  parse(): Omit<Expectation, 'expression' | 'line' | 'column'> {
    const leftStart = this.peek();
    if (leftStart && NUMBER_RE.test(leftStart.text)) this.fail(`${METRIC_HINT} on the left`, leftStart);
    const left = this.metric();
    if (this.peek()?.text === 'where') left.where = this.where();

    const opTok = this.take(`a comparison (${OPS.join(' ')})`);
    if (!OPS.includes(opTok.text as CompareOp)) this.fail(`a comparison (${OPS.join(' ')})`, opTok);
    const op = opTok.text as CompareOp;

    let right: Operand;
    const n = this.number();
    if (n !== undefined && this.peek()?.text === '*') {
      this.i++;
      right = { kind: 'metric', factor: n, metric: this.metric() };
      if (this.peek()?.text === 'where') right.metric.where = this.where();
    } else if (n !== undefined) {
      right = { kind: 'number', value: n };
      if (this.peek()?.text === 'where') {
        if (left.where.length > 0) this.fail('a single where clause per side', this.peek());
        left.where = this.where();
      }
    } else {
      const t = this.peek();
      if (!t || KEYWORDS.includes(t.text) || OPS.includes(t.text as CompareOp)) this.fail(`a number or ${METRIC_HINT}`);
      right = { kind: 'metric', factor: 1, metric: this.metric() };
      if (this.peek()?.text === 'where') right.metric.where = this.where();
    }

    let everyTrial = false;
    if (this.peek()?.text === 'in') {
      const inTok = this.take('in every trial');
      for (const word of ['every', 'trial']) {
        const t = this.take('in every trial');
        if (t.text !== word) this.fail(`'${word}' (in every trial)`, t);
      }
      everyTrial = true;
      if (right.kind === 'metric') this.fail('a plain number on the right of a per-trial expectation', inTok);
      if (!left.path.startsWith('ledger.')) {
        this.fail('a ledger metric (trials record only ledgers) with in every trial', leftStart);
      }
    }
    if (this.peek()) {
      this.fail(right.kind === 'number' ? 'where ..., in every trial, or the end' : 'where ... or the end');
    }
    return { left, op, right, everyTrial };
  }
}

export function parseExpectation(text: string): Omit<Expectation, 'line' | 'column'> | ExpectationSyntaxError {
  const tokens = tokenize(text);
  try {
    return { expression: text, ...new Parser(text, tokens).parse() };
  } catch (err) {
    if (err instanceof Fail) return err.detail;
    throw err;
  }
}

export function isSyntaxError(x: unknown): x is ExpectationSyntaxError {
  return typeof x === 'object' && x !== null && 'offset' in x && 'expected' in x;
}
