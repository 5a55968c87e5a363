// The report's integrity and accounting table (in the loss section), one row per measured cell:
// replica agreement from bytes (compared on the host batch by batch; RF > 1), the brokers' own
// flush count beside the device's, errors before the fault and after it (connection refusals
// apart), and the ledger's requests by state (pending = written with no answer; never sent =
// the connection never connected). Text shared with the terminal (harness/report/accounting-summary.ts).
import type { RunResult } from '../results/types.ts';
import { afterFaultText, flushesText, replicasText } from './accounting-summary.ts';
import { escapeHtml, fmtInt, isMeasured } from './format.ts';

export function accountingTable(run: RunResult): string {
  const cells = run.cells.filter(isMeasured);
  if (cells.length === 0) return '';
  const head = ['cell', 'replicas (from bytes)', 'flushes: brokers vs device', 'errors before the fault', 'after the fault', 'requests pending / never sent']
    .map((h) => `<th scope="col">${escapeHtml(h)}</th>`)
    .join('');
  const rows = cells.map((c) => {
    const before = Object.entries(c.errors).filter(([, n]) => n > 0);
    const trials = (c.trials ?? []).filter((t) => t.requests);
    const pending = trials.reduce((a, t) => a + t.requests!.pending, 0);
    const neverSent = trials.reduce((a, t) => a + t.requests!.neverSent, 0);
    const replicas = replicasText(c);
    const bad = (c.replicas?.diverged ?? 0) > 0;
    return (
      '<tr>' +
      `<th scope="row">${escapeHtml(c.id)}</th>` +
      `<td${bad ? ' class="bad"' : ''} id="replicas-${escapeHtml(c.id)}">${escapeHtml(replicas ?? 'RF 1: nothing to compare')}</td>` +
      `<td>${escapeHtml(flushesText(c).replace(/^flushes: /, ''))}</td>` +
      `<td>${escapeHtml(before.length ? before.map(([k, n]) => `${k} ${fmtInt(n)}`).join(', ') : 'none')}</td>` +
      `<td>${escapeHtml(afterFaultText(c.errorsAfterFault).replace(/^after the fault: /, '') || (c.errorsAfterFault ? 'none' : '—'))}</td>` +
      `<td class="num">${trials.length ? `${fmtInt(pending)} / ${fmtInt(neverSent)}` : '—'}</td>` +
      '</tr>'
    );
  });
  return `<table id="accounting-table"><thead><tr>${head}</tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
}
