// The published site's frontier page of one target: frontier/<scenario>-<target>.html, from
// the newest run of a scenario with a measure axis: the answer, the chart and the table
// (harness/report/frontier-section.ts), linked to the run's own page.
import type { RunResult } from '../results/types.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { compileChart } from '../report/charts.ts';
import { escapeHtml, jsonForScript } from '../report/format.ts';
import { inlineLibraries } from '../report/inline-libs.ts';
import { CHARTS_JS, pageHead } from '../report/page-assets.ts';
import { frontierCharts, frontierSection } from '../report/frontier-section.ts';
import { frontiersOf } from '../report/frontier.ts';

/** One page per target of the run's frontier. */
export function frontierPages(run: RunResult, links: { home: string; runHref: string }): Array<{ file: string; target: string; html: string }> {
  const all = frontiersOf(run);
  const charts = frontierCharts(run);
  return all.map((f, i) => {
    const one: RunResult = { ...run, cells: run.cells.filter((c) => cellTargetName(run, c) === f.target) };
    const chart = { ...charts[i]!, id: 'chart-frontier-0' };
    compileChart(chart);
    const block = (c: { id: string; title: string; caption: string }) => `<h3>${escapeHtml(c.title)}</h3><div class="chart" id="${c.id}" data-chart="${c.id}"></div>`;
    const html = `${pageHead(escapeHtml(`${run.scenario.name}: durability/cost frontier on ${f.target}`))}
<body>
<main>
<p class="sub"><a href="${escapeHtml(links.home)}">all runs</a> · <a href="${escapeHtml(links.runHref)}">the run (${escapeHtml(run.runId)})</a></p>
<h1>${escapeHtml(run.scenario.name)}: durability/cost frontier on ${escapeHtml(f.target)}</h1>
<p class="question">${escapeHtml(run.scenario.question)}</p>
${frontierSection(one, () => block(chart))}
</main>
${inlineLibraries().map((l) => `<script data-lib="${l.name}">${l.js}</script>`).join('\n')}
<script type="application/json" id="durolab-charts">${jsonForScript([{ id: chart.id, spec: chart.spec }])}</script>
<script>${CHARTS_JS}</script>
</body>
</html>
`;
    return { file: `frontier/${run.scenario.name}-${f.target}.html`, target: f.target, html };
  });
}
