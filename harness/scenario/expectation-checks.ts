// Checks of a scenario's expectations: each one's syntax (the issue points into the expression
// when the YAML scalar maps onto it one to one) and `where` clauses that match no cell of the
// matrix, so an expectation that could never be judged is refused before the run.
import type { ScenarioIssue } from './errors.ts';
import { effectiveParams, isSyntaxError, parseExpectation } from './expectations.ts';
import type { SettingValue } from './settings.ts';
import type { SourceFile } from './source.ts';
import type { Expectation, MatrixCell, Scenario } from '../model/scenario.ts';

export interface ExpectationChecksInput {
  src: SourceFile;
  /** The `expectations:` strings, when the section parsed. */
  texts: string[] | undefined;
  /** The matrix's cells, the cluster's min.insync.replicas and the base settings, when known. */
  cells: MatrixCell[] | undefined;
  minInsyncReplicas: number | undefined;
  settings: Record<string, SettingValue> | undefined;
}

export function checkExpectations(input: ExpectationChecksInput): { expectations: Expectation[]; issues: ScenarioIssue[] } {
  const { src, cells, minInsyncReplicas, settings } = input;
  const expectations: Expectation[] = [];
  const issues: ScenarioIssue[] = [];
  input.texts?.forEach((text, i) => {
    const node = src.nodeAt(['expectations', i]);
    const parsed = parseExpectation(text);
    if (isSyntaxError(parsed)) {
      issues.push(expectationIssue(src, i, text, node, parsed.offset, parsed.expected, parsed.found));
      return;
    }
    const start = node?.range ? src.positionOf(node.range[0]) : src.position(['expectations', i]);
    const e: Expectation = { ...parsed, ...start };
    expectations.push(e);
    if (!cells || minInsyncReplicas === undefined || !settings) return;
    const partial = { cluster: { minInsyncReplicas }, settings } as Scenario;
    const sides = [e.left.where, e.right.kind === 'metric' ? e.right.metric.where : []];
    for (const where of sides) {
      if (where.length === 0) continue;
      const hit = cells.some((c) => {
        const p = effectiveParams(partial, c.params);
        return where.every((w) => p[w.param] === w.value);
      });
      if (!hit) {
        const clause = `where ${where.map((w) => w.text).join(' and ')}`;
        const at = text.indexOf(clause);
        issues.push(
          expectationIssue(src, i, text, node, at < 0 ? 0 : at, `a where clause that matches a cell (${cells.map((c) => c.id).join('; ')})`, `'${clause}', which matches none`),
        );
      }
    }
  });
  return { expectations, issues };
}

function expectationIssue(
  src: SourceFile,
  index: number,
  text: string,
  node: ReturnType<SourceFile['nodeAt']>,
  offset: number,
  expected: string,
  found: string,
): ScenarioIssue {
  const path: PropertyKey[] = ['expectations', index];
  let pos = src.position(path);
  // Point into the expression when the YAML scalar maps 1:1 onto it (plain or quoted, one line).
  const range = node?.range;
  if (range && !text.includes('\n')) {
    const source = src.text.slice(range[0], range[1]);
    const quote = source.startsWith('"') || source.startsWith("'") ? 1 : 0;
    if (source.slice(quote, quote + text.length) === text) pos = src.positionOf(range[0] + quote + offset);
  }
  return { file: src.file, ...pos, path: `expectations[${index}]`, expected, found };
}
