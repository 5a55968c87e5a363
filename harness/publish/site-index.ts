// The published site's front page: every run, filterable by scenario, target, status and
// date, with links to each run's page and run.json, the compare pages and the claims.

import { verdict } from '../report/findings.ts';
import { escapeHtml } from '../report/format.ts';
import { pageHead, SORT_JS } from '../report/page-assets.ts';
import type { RunResult } from '../results/types.ts';

export interface SiteRun {
  run: RunResult;
  /** Relative to the site root. */
  page: string;
  json: string;
}

export interface SiteScenario {
  /** Frontier pages (a measure-axis scenario), one per target. */
  frontiers?: Array<{ href: string; target: string }>;
  name: string;
  runs: number;
  /** Relative to the site root. */
  trend: string;
  latestCompare?: string;
}

/** Filters rows by the data-* attributes the selects name; the date input keeps runs started on or after it. */
const FILTER_JS = `
(function () {
  var table = document.getElementById('runs-table');
  if (!table) return;
  var controls = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  function apply() {
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var ok = controls.every(function (c) {
        var v = c.value;
        if (!v) return true;
        var key = c.getAttribute('data-filter');
        if (key === 'since') return (row.getAttribute('data-started') || '') >= v;
        return row.getAttribute('data-' + key) === v;
      });
      row.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById('shown-count').textContent = String(shown);
  }
  controls.forEach(function (c) { c.addEventListener('input', apply); c.addEventListener('change', apply); });
  apply();
})();
`;

function select(key: string, label: string, values: string[]): string {
  return (
    `<label>${escapeHtml(label)} <select data-filter="${key}" id="filter-${key}"><option value="">all</option>` +
    values.map((v) => `<option value="${escapeHtml(v)}">${escapeHtml(v)}</option>`).join('') +
    '</select></label>'
  );
}

export function renderSiteIndex(runs: SiteRun[], scenarios: SiteScenario[], generatedAt: string): string {
  const uniq = (xs: string[]) => [...new Set(xs)].sort();
  const rows = runs
    .map(({ run, page, json }) => {
      const v = verdict(run);
      return (
        `<tr data-scenario="${escapeHtml(run.scenario.name)}" data-target="${escapeHtml(run.target)}" data-status="${escapeHtml(run.status)}" data-started="${escapeHtml(run.startedAt.slice(0, 10))}">` +
        `<td>${escapeHtml(run.scenario.name)}</td>` +
        `<td class="mono"><a href="${escapeHtml(page)}">${escapeHtml(run.runId)}</a></td>` +
        `<td>${escapeHtml(run.target)}</td>` +
        `<td data-v="${escapeHtml(run.startedAt)}">${escapeHtml(run.startedAt)}</td>` +
        `<td><span class="status status-${escapeHtml(run.status)}">${escapeHtml(run.status)}</span></td>` +
        `<td class="num">${run.cells.length}</td>` +
        `<td data-v="${escapeHtml(v.text)}"><span class="verdict ${v.tone}">${escapeHtml(v.text)}</span></td>` +
        `<td><a href="${escapeHtml(json)}" download>run.json</a></td>` +
        '</tr>'
      );
    })
    .join('\n');
  const scenarioList = scenarios
    .map(
      (s) =>
        `<li><b>${escapeHtml(s.name)}</b> (${s.runs} run${s.runs === 1 ? '' : 's'}): <a href="${escapeHtml(s.trend)}">trend</a>` +
        (s.latestCompare ? ` · <a href="${escapeHtml(s.latestCompare)}">latest vs previous</a>` : '') +
        (s.frontiers ?? []).map((f) => ` · <a href="${escapeHtml(f.href)}">frontier on ${escapeHtml(f.target)}</a>`).join('') +
        '</li>',
    )
    .join('');
  const table = runs.length
    ? '<table class="sortable" id="runs-table"><thead><tr>' +
      ['scenario', 'run id', 'target', 'started', 'status', 'cells', 'verdict', 'data'].map((h) => `<th scope="col">${h}</th>`).join('') +
      `</tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="muted">No runs were published.</p>';
  return `${pageHead('durolab results')}
<body>
<main>
<h1>durolab results</h1>
<p class="sub">${runs.length} run${runs.length === 1 ? '' : 's'}, newest first; published ${escapeHtml(generatedAt)}. <a href="claims.html">The source articles' claims and their verdicts</a>. <a href="docs/index.html">Documentation</a>.</p>
<h2>Compare</h2>
<ul id="compare-links">${scenarioList || '<li class="muted">no scenario has runs</li>'}</ul>
<h2>Runs</h2>
<p class="filters">${select('scenario', 'scenario', uniq(runs.map((r) => r.run.scenario.name)))}
${select('target', 'target', uniq(runs.map((r) => r.run.target)))}
${select('status', 'status', uniq(runs.map((r) => r.run.status)))}
<label>started on or after <input type="date" data-filter="since" id="filter-since"></label>
<span class="muted"><span id="shown-count">${runs.length}</span> shown</span></p>
${table}
</main>
<script>${SORT_JS}</script>
<script>${FILTER_JS}</script>
</body>
</html>
`;
}
