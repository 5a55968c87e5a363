// The report's bad-block table: per cell that ran a file fault, what the system did about the bad
// bytes, trial by trial (harness/results/file-fault-outcomes.ts), and each trial's changes.
import type { RunResult } from '../results/types.ts';
import { FILE_FAULT_CAPTION, FILE_FAULT_HEADERS, fileFaultCells, fileFaultRows } from '../results/file-fault-outcomes.ts';
import { escapeHtml } from './format.ts';

const BAD = new Set(['lost', 'served corrupt', 'unavailable', 'crashed', 'replicas diverged']);

/** '' when no cell of the run ran a file fault. */
export function fileFaultTable(run: RunResult): string {
  const rows = fileFaultRows(run);
  if (rows.length === 0) return '';
  const head = FILE_FAULT_HEADERS.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => {
    const cells = fileFaultCells(r);
    return `<tr${BAD.has(r.worst) ? ' class="bad"' : ''}>${cells.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td>${escapeHtml(c)}</td>`)).join('')}</tr>`;
  });
  const changes = run.cells.flatMap((c) =>
    (c.trials ?? []).flatMap((t) => {
      const ff = t.fault?.fileFault;
      if (!ff) return [];
      const list = ff.changes.map((x) => `broker ${x.broker} ${x.file} @${x.offset} +${x.length} ${x.how} (sha256 ${x.oldSha256.slice(0, 12)} → ${x.newSha256.slice(0, 12)})`);
      const after = (ff.afterCheck ?? []).map((a) => `${a.file}@${a.offset}: ${a.state}`);
      return [`<li>${escapeHtml(`${c.id} trial ${t.index + 1}: ${list.join('; ') || 'nothing changed'}${after.length ? `; after recovery ${after.join(', ')}` : ''}`)}</li>`];
    }),
  );
  return (
    '<h3 id="bad-blocks">What each system did about the bad blocks</h3>' +
    `<p class="muted">${escapeHtml(FILE_FAULT_CAPTION)}.</p>` +
    `<div class="table-wrap"><table class="sortable" id="bad-blocks-table"><thead><tr>${head}</tr></thead><tbody>${body.join('\n')}</tbody></table></div>` +
    `<details><summary>Every change, as run.json records it</summary><ul>${changes.join('\n')}</ul></details>`
  );
}
