// The summary of a run for pasting into an issue or a pull request: a markdown table (the
// terminal summary's columns) with the verdict, or the same figures as JSON.

import type { RunResult } from '../results/types.ts';
import { STATE_LABEL, expectationState, runVerdict } from '../results/verdict.ts';
import { runDiskModelText } from '../targets/run-targets.ts';

export const SUMMARY_FORMATS = ['text', 'markdown', 'json'] as const;
export type SummaryFormat = (typeof SUMMARY_FORMATS)[number];

export function parseSummaryFormat(flag: string, v: string | undefined): SummaryFormat {
  if (v === undefined) return 'text';
  if ((SUMMARY_FORMATS as readonly string[]).includes(v)) return v as SummaryFormat;
  throw new Error(`${flag}: expected one of ${SUMMARY_FORMATS.join(', ')}, found '${v}'`);
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A markdown table cell: pipes escaped, newlines flattened. */
const md = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function cellRow(c: RunResult['cells'][number]) {
  const measured = c.status === 'ok' || c.status === 'interrupted';
  // No repetition finished its load: no throughput, and a latency summary of no sample (null, never 0).
  const latency = measured && c.latencyUs.count > 0 ? c.latencyUs : null;
  return {
    cell: c.id,
    status: c.status,
    recordsPerSec: measured ? (c.throughput?.recordsPerSec ?? null) : null,
    mbPerSec: measured ? (c.throughput?.mbPerSec ?? null) : null,
    p50Us: latency ? latency.p50 : null,
    p99Us: latency ? latency.p99 : null,
    p999Us: latency ? latency.p999 : null,
    errors: Object.values(c.errors).reduce((a, b) => a + b, 0),
    acked: c.ledger.acked,
    ackedLost: c.ledger.ackedLost,
    trials: (c.trials ?? []).filter((t) => t.fault).map((t) => t.ledger.ackedLost),
    ...(c.steadiness ? { steadiness: c.steadiness.state, ...(c.steadiness.state === 'ramping' ? { notSteady: c.steadiness.reason } : {}) } : {}),
  };
}

export function summaryMarkdown(run: RunResult): string {
  const fault = run.cells.some((c) => (c.trials ?? []).some((t) => t.fault));
  const headers = ['cell', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'errors', 'acked', 'lost', ...(fault ? ['lost per trial'] : [])];
  const rows = run.cells.map((c) => {
    const r = cellRow(c);
    const n = (v: number | null, d = 0) => (v === null ? (c.status === 'ok' || c.status === 'interrupted' ? '-' : c.status) : fmt(v, d));
    return [md(r.cell) + (r.steadiness === 'ramping' ? ' (not steady)' : ''), n(r.recordsPerSec), n(r.mbPerSec, 1), n(r.p50Us), n(r.p99Us), n(r.p999Us), fmt(r.errors), fmt(r.acked), fmt(r.ackedLost), ...(fault ? [r.trials.map((x) => fmt(x)).join(', ') || '—'] : [])];
  });
  const out = [
    `**${md(run.scenario.name)}** \`${run.runId}\` (${run.target} target, ${run.status}): ${md(run.scenario.question)}`,
    '',
    `| ${headers.join(' | ')} |`,
    `| ${headers.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
  const disk = runDiskModelText(run);
  if (disk) out.push('', md(disk));
  if (run.expectations.length) {
    out.push('', ...run.expectations.map((e) => `- **${STATE_LABEL[expectationState(e)]}** ${md(e.detail)}`));
  }
  out.push('', runVerdict(run, false).line);
  return out.join('\n');
}

export function summaryJson(run: RunResult): string {
  return JSON.stringify(
    {
      scenario: run.scenario.name,
      runId: run.runId,
      target: run.target,
      status: run.status,
      question: run.scenario.question,
      cells: run.cells.map(cellRow),
      expectations: run.expectations.map((e) => ({ expression: e.expression, state: expectationState(e), detail: e.detail })),
      verdict: runVerdict(run, false),
    },
    null,
    2,
  );
}
