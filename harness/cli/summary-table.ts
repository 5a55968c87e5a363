// The terminal summary at the end of a bench: one row per cell, then the expectations.
import { renderTable } from '../../engine/common/text-table.ts';
import type { RunResult } from '../results/types.ts';

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function summaryTable(run: RunResult): string {
  const headers = ['cell', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'errors', 'acked', 'lost', 'dup', 'ooo', 'corrupt', 'flushes', 'segments'];
  const rows = run.cells.map((c) => {
    const errors = Object.values(c.errors).reduce((a, b) => a + b, 0);
    const label = Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(' ') || c.id;
    if (c.status === 'skipped' || c.status === 'failed') {
      return [label, c.status, '', '', '', '', '', '', '', '', '', '', '', '', ''];
    }
    return [
      label + (c.status === 'interrupted' ? ' (interrupted)' : ''),
      fmt(c.throughput.recordsPerSec),
      fmt(c.throughput.mbPerSec, 1),
      fmt(c.latencyUs.p50),
      fmt(c.latencyUs.p99),
      fmt(c.latencyUs.p999),
      fmt(c.latencyUs.max),
      fmt(errors),
      fmt(c.ledger.acked),
      fmt(c.ledger.ackedLost),
      fmt(c.ledger.duplicates),
      fmt(c.ledger.outOfOrder),
      fmt(c.ledger.corrupt),
      fmt(c.broker.flushes),
      fmt(c.broker.segments),
    ];
  });
  const out = [renderTable(headers, rows, (i) => i > 0)];
  const notes = run.cells.filter((c) => c.note).map((c) => `  ${c.id}: ${c.note}`);
  if (notes.length) out.push('', 'notes:', ...notes);
  if (run.expectations.length) {
    out.push('', 'expectations:');
    for (const e of run.expectations) out.push(`  ${e.skipped ? 'SKIP' : e.passed ? 'PASS' : 'FAIL'}  ${e.detail}`);
  }
  return out.join('\n');
}
