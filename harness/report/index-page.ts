// reports/index.html: every run under results/, newest first, with a link to its report.

import path from 'node:path';
import { verdict } from './findings.ts';
import { escapeHtml } from './format.ts';
import type { RunEntry } from './load-runs.ts';
import { pageHead, SORT_JS } from './page-assets.ts';

export interface IndexRow {
  entry: RunEntry;
  /** Link relative to reports/index.html, when the run's report exists. */
  href?: string;
}

export function reportRelPath(scenario: string, runId: string): string {
  return `${scenario}/${runId}/index.html`;
}

export function renderReportsIndex(rows: IndexRow[], resultsDir: string): string {
  // The folder's own name only: a page may be published, and the absolute path is this machine's.
  const folder = `${path.basename(resultsDir)}/`;
  const body = rows
    .map(({ entry, href }) => {
      const run = entry.run;
      if (!run) {
        return (
          '<tr class="unreadable">' +
          `<td>${escapeHtml(path.basename(path.dirname(path.dirname(entry.file))))}</td>` +
          `<td class="mono">${escapeHtml(path.basename(path.dirname(entry.file)))}</td>` +
          `<td data-v="${entry.mtimeMs}">${escapeHtml(new Date(entry.mtimeMs).toISOString())}</td>` +
          '<td><span class="status status-unreadable">unreadable</span></td>' +
          '<td class="num" data-v=""></td>' +
          `<td colspan="2" class="note">${escapeHtml(entry.error ?? '')}</td>` +
          '</tr>'
        );
      }
      const v = verdict(run);
      const started = Date.parse(run.startedAt);
      const link = href
        ? `<a href="${escapeHtml(href)}">report</a>`
        : `<span class="muted" title="run: durolab report ${escapeHtml(`${run.scenario.name}/${run.runId}`)}">not rendered</span>`;
      return (
        `<tr data-run="${escapeHtml(`${run.scenario.name}/${run.runId}`)}">` +
        `<td>${escapeHtml(run.scenario.name)}</td>` +
        `<td class="mono">${href ? `<a href="${escapeHtml(href)}">${escapeHtml(run.runId)}</a>` : escapeHtml(run.runId)}</td>` +
        `<td data-v="${Number.isFinite(started) ? started : ''}">${escapeHtml(run.startedAt)}</td>` +
        `<td data-v="${escapeHtml(run.status)}"><span class="status status-${escapeHtml(run.status)}">${escapeHtml(run.status)}</span></td>` +
        `<td class="num" data-v="${run.cells.length}">${run.cells.length}</td>` +
        `<td data-v="${escapeHtml(v.text)}"><span class="verdict ${v.tone}">${escapeHtml(v.text)}</span></td>` +
        `<td>${link}</td>` +
        '</tr>'
      );
    })
    .join('\n');
  const table = rows.length
    ? '<table class="sortable" id="runs-table"><thead><tr>' +
      ['scenario', 'run id', 'started', 'status', 'cells', 'verdict', 'report']
        .map((h) => `<th scope="col"${h === 'cells' ? ' class="num"' : ''}>${h}</th>`)
        .join('') +
      `</tr></thead><tbody>${body}</tbody></table>`
    : `<p class="muted">No runs yet under ${escapeHtml(folder)}. Run a scenario with durolab, then durolab report.</p>`;
  return `${pageHead('durolab runs')}
<body>
<main>
<h1>durolab runs</h1>
<p class="sub">${rows.length} run${rows.length === 1 ? '' : 's'} under ${escapeHtml(folder)}, newest first.</p>
${table}
</main>
<script>${SORT_JS}</script>
</body>
</html>
`;
}
