// The terminal summary at the end of a bench: one row per cell, then the expectations.
import { FILE_FAULT_CAPTION, FILE_FAULT_HEADERS, fileFaultCells, fileFaultRows } from '../results/file-fault-outcomes.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import type { RunResult } from '../results/types.ts';
import { STATE_LABEL, expectationState } from '../results/verdict.ts';
import { runDiskModelText } from '../targets/run-targets.ts';
import { accountingLines } from './accounting-summary.ts';

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** A figure not measured (absent, or a latency summary of no sample): '-', never 0. */
function fmtOr(n: number | undefined, digits = 0): string {
  return n === undefined ? '-' : fmt(n, digits);
}

/**
 * Fixed-rate cells also keep a coordinated-omission-corrected histogram: a request the load
 * generator could not send on schedule (it was waiting on a stalled answer) counts as having
 * waited from its scheduled time. Shown beside the raw figures, cell by cell; closed-loop
 * cells have none (they send only when an answer came, so there is no schedule to miss).
 */
function correctedTable(run: RunResult): string | null {
  const cells = run.cells.filter((c) => c.correctedLatencyUs && c.status !== 'skipped' && c.status !== 'failed');
  if (cells.length === 0) return null;
  const headers = ['fixed-rate cell', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'corrected p50 µs', 'corrected p99 µs', 'corrected p99.9 µs', 'corrected max µs'];
  const rows = cells.map((c) => {
    const k = c.correctedLatencyUs!;
    const label = Object.entries(c.params).map(([key, v]) => `${key}=${v}`).join(' ') || c.id;
    return [label, fmt(c.latencyUs.p50), fmt(c.latencyUs.p99), fmt(c.latencyUs.p999), fmt(c.latencyUs.max), fmt(k.p50), fmt(k.p99), fmt(k.p999), fmt(k.max)];
  });
  return ['coordinated-omission corrected latency (fixed-rate load; requests the generator could not send on schedule count from their scheduled time):', renderTable(headers, rows, (i) => i > 0)].join('\n');
}

export function summaryTable(run: RunResult): string {
  const headers = ['cell', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'errors', 'acked', 'lost', 'incons', 'dup', 'ooo', 'corrupt', 'flushes', 'segments'];
  const rows = run.cells.map((c) => {
    const errors = Object.values(c.errors).reduce((a, b) => a + b, 0);
    const label = Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(' ') || c.id;
    if (c.status === 'skipped' || c.status === 'failed') {
      return [label, c.status, ...headers.slice(2).map(() => '')];
    }
    // No repetition finished its load: no throughput, and a latency summary of no sample.
    const latency = c.latencyUs.count > 0 ? c.latencyUs : undefined;
    return [
      label + (c.status === 'interrupted' ? ' (interrupted)' : '') + (c.steadiness?.state === 'ramping' ? ' (not steady)' : ''),
      fmtOr(c.throughput?.recordsPerSec),
      fmtOr(c.throughput?.mbPerSec, 1),
      fmtOr(latency?.p50),
      fmtOr(latency?.p99),
      fmtOr(latency?.p999),
      fmtOr(latency?.max),
      fmt(errors),
      fmt(c.ledger.acked),
      fmt(c.ledger.ackedLost),
      c.ledger.inconsistentOffsets === undefined ? '-' : fmt(c.ledger.inconsistentOffsets),
      fmt(c.ledger.duplicates),
      fmt(c.ledger.outOfOrder),
      fmt(c.ledger.corrupt),
      c.broker.flushes === undefined ? '-' : fmt(c.broker.flushes),
      c.broker.segments === undefined ? '-' : fmt(c.broker.segments),
    ];
  });
  const out = [renderTable(headers, rows, (i) => i > 0)];
  const corrected = correctedTable(run);
  if (corrected) out.push('', corrected);
  const accounting = accountingLines(run);
  if (accounting.length) out.push('', ...accounting);
  const rotten = fileFaultRows(run);
  if (rotten.length) out.push('', `bad blocks: ${FILE_FAULT_CAPTION}.`, renderTable([...FILE_FAULT_HEADERS], rotten.map(fileFaultCells), () => false));
  const ramps = run.cells.filter((c) => c.steadiness?.state === 'ramping').map((c) => `  ${c.id}: ${c.steadiness!.reason}`);
  if (ramps.length) out.push('', 'not steady (the figures above average a ramp, not a steady state; harness/results/steady-state.ts):', ...ramps);
  const notes = run.cells.filter((c) => c.note).map((c) => `  ${c.id}: ${c.note}`);
  if (notes.length) out.push('', 'notes:', ...notes);
  const disk = runDiskModelText(run);
  if (disk) out.push('', disk);
  if (run.expectations.length) {
    out.push('', 'expectations:');
    // A NOT EVALUATED detail carries its reason; a PASS or FAIL names the parts it left out.
    for (const e of run.expectations) out.push(`  ${STATE_LABEL[expectationState(e)]}  ${e.detail}`);
  }
  return out.join('\n');
}
