// The report's recount table: per trial whose disk images were kept, where every acknowledged
// record was according to the images alone (harness/recount), beside the check's served count.
import type { RunResult } from '../results/types.ts';
import { RECOUNT_CAPTION, RECOUNT_HEADERS, recountCells, recountRowsOf } from '../results/recount-rows.ts';
import { escapeHtml } from './format.ts';

/** '' when no trial of the run was re-counted. */
export function recountTable(run: RunResult): string {
  const rows = recountRowsOf(run);
  if (rows.length === 0) return '';
  const numeric = (i: number) => i >= 3 && i < RECOUNT_HEADERS.length - 1;
  const head = RECOUNT_HEADERS.map((h, i) => `<th scope="col"${numeric(i) ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => {
    const cells = recountCells(r);
    const differs = r.figures !== undefined && r.figures.served !== r.figures.checkServed;
    return (
      `<tr${differs || r.problem ? ' class="bad"' : ''}>` +
      cells.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td${numeric(i) ? ' class="num"' : ''}>${escapeHtml(c)}</td>`)).join('') +
      '</tr>'
    );
  });
  const differs = rows.filter((r) => r.figures && r.figures.served !== r.figures.checkServed);
  return (
    '<h3 id="recount">Recount from the kept disk images</h3>' +
    `<p class="muted">${escapeHtml(RECOUNT_CAPTION)}.</p>` +
    (differs.length ? `<p class="bad">${escapeHtml(`${differs.length} trial(s) where the disks and the check disagree on what was served: ${differs.map((r) => `${r.cell} trial ${r.trial + 1}`).join(', ')}`)}</p>` : '') +
    `<div class="table-wrap"><table class="sortable" id="recount-table"><thead><tr>${head}</tr></thead><tbody>${body.join('\n')}</tbody></table></div>`
  );
}
