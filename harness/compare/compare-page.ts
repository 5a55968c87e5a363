// The HTML pages of `durolab compare`: runs side by side, and a scenario's trend over its runs
// (drawn: records/s, p99 and loss per cell over the runs, trend-charts.ts, then the table).
// Self-contained (Vega inlined, nothing fetched), relative links only.

import type { RunResult } from '../results/types.ts';
import { compileChart } from '../report/charts.ts';
import { escapeHtml, jsonForScript } from '../report/format.ts';
import { inlineLibraries } from '../report/inline-libs.ts';
import { CHARTS_JS, pageHead } from '../report/page-assets.ts';
import { trendCharts } from './trend-charts.ts';
import { FIGURE_LABEL, fmtFigure } from '../results/figures.ts';
import { differenceText, runLabel, scenarioTrend, type Comparison } from './compare.ts';

export interface PageLinks {
  /** Link to the site's (or reports') index, relative to the page. */
  home?: string;
  /** Link to a run's page, relative to the page; undefined: not linked. */
  runHref?: (run: RunResult) => string | undefined;
}

function runCell(run: RunResult, links: PageLinks): string {
  const href = links.runHref?.(run);
  const label = escapeHtml(runLabel(run));
  return href ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
}

function nav(links: PageLinks): string {
  return links.home ? `<p class="sub"><a href="${escapeHtml(links.home)}">all runs</a></p>` : '';
}

export function renderComparePage(cmp: Comparison, links: PageLinks = {}): string {
  const letters = cmp.runs.map((_, i) => String.fromCharCode(65 + i));
  const runsList = cmp.runs
    .map((r, i) => `<li><b>${letters[i]}</b>: ${runCell(r, links)} · ${escapeHtml(r.target)} target · started ${escapeHtml(r.startedAt)} · ${escapeHtml(r.status)}</li>`)
    .join('');
  const head = ['cell', 'figure', ...letters, ...letters.slice(1).map((l) => `${l}/A`)].map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = cmp.cells
    .map((c) =>
      c.figures
        .map((f, j) => {
          const diffs = letters.slice(1).map((_, i) => {
            const d = f.differences[i + 1];
            const cls = d === 'within noise' ? 'muted' : d === 'higher' || d === 'lower' ? 'warn' : '';
            return `<td class="${cls}" data-difference="${escapeHtml(d)}">${escapeHtml(differenceText(f, i + 1))}</td>`;
          });
          return (
            `<tr${j === 0 ? ' class="cell-first"' : ''}>` +
            (j === 0 ? `<th scope="row" rowspan="${c.figures.length}">${escapeHtml(c.key)}</th>` : '') +
            `<td>${escapeHtml(FIGURE_LABEL[f.name])}</td>` +
            f.values.map((v) => `<td class="num">${escapeHtml(fmtFigure(f.name, v))}</td>`).join('') +
            diffs.join('') +
            '</tr>'
          );
        })
        .join(''),
    )
    .join('\n');
  const env = cmp.environment.length
    ? `<table id="environment-diff"><thead><tr><th>fact</th>${letters.map((l) => `<th>${l}</th>`).join('')}</tr></thead><tbody>${cmp.environment
        .map((e) => `<tr><th scope="row">${escapeHtml(e.fact)}</th>${e.values.map((v) => `<td>${escapeHtml(v)}</td>`).join('')}</tr>`)
        .join('')}</tbody></table>`
    : '<p id="environment-diff">The same in every run: cpu, cores, memory, kernel, disk, accelerator, commit and workload.</p>';
  const title = `compare ${cmp.runs.map(runLabel).join(' vs ')}`;
  return `${pageHead(escapeHtml(title))}
<body>
<main>
${nav(links)}
<h1>Compare runs</h1>
<ul>${runsList}</ul>
<p class="muted">Cells are aligned by target and settings. Each figure is the median, with the min-max band over repetitions (performance) or trials (loss) in brackets; a ratio whose bands overlap is labelled "within noise", one with a single sample on either side has no band to judge it.</p>
<div class="table-wrap"><table id="compare-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>
<h2>Environment differences</h2>
${env}
</main>
</body>
</html>
`;
}

export function renderTrendPage(scenario: string, runs: RunResult[], links: PageLinks = {}): string {
  const ordered = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const rows = scenarioTrend(ordered);
  // Compiled here: a bad spec fails the page build, not a reader's browser.
  const charts = trendCharts(ordered);
  for (const c of charts) compileChart(c);
  const head = `<th scope="col">cell</th>${ordered.map((r) => `<th scope="col">${runCell(r, links)}<br><span class="muted">${escapeHtml(r.startedAt)}</span></th>`).join('')}`;
  const body = rows
    .map(
      (r) =>
        `<tr><th scope="row">${escapeHtml(r.key)}</th>${r.values
          .map((v) =>
            v
              ? `<td class="num">${escapeHtml(fmtFigure('recordsPerSec', v.recordsPerSec))} rec/s<br>p99 ${escapeHtml(fmtFigure('p99Us', v.p99Us))} µs<br>lost ${escapeHtml(fmtFigure('ackedLost', v.ackedLost))}</td>`
              : '<td class="muted">—</td>',
          )
          .join('')}</tr>`,
    )
    .join('\n');
  return `${pageHead(escapeHtml(`${scenario}: trend over ${ordered.length} runs`))}
<body>
<main>
${nav(links)}
<h1>${escapeHtml(scenario)}: trend over ${ordered.length} run${ordered.length === 1 ? '' : 's'}</h1>
<p class="muted">Oldest first. Median with the min-max band over repetitions or trials; cells aligned by target and settings.</p>
${charts.map((c) => `<h2>${escapeHtml(c.title)}</h2><p class="chart-caption">${escapeHtml(c.caption)}</p><div class="chart" id="${c.id}" data-chart="${c.id}"></div>`).join('\n')}
<div class="table-wrap"><table id="trend-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>
</main>
${charts.length ? `${inlineLibraries().map((l) => `<script data-lib="${l.name}">${l.js}</script>`).join('\n')}
<script type="application/json" id="durolab-charts">${jsonForScript(charts.map((c) => ({ id: c.id, spec: c.spec })))}</script>
<script>${CHARTS_JS}</script>` : ''}
</body>
</html>
`;
}
