// The self-contained HTML page for one run: tables, findings and vega charts with the
// libraries and data inlined.

import { stringify as toYaml } from 'yaml';
import type { RunResult } from '../results/types.ts';
import { ranAsHostProcesses, ranInGuests, runDiskModelText } from '../targets/run-targets.ts';
import { compileChart, runCharts, type Chart } from './charts.ts';
import { findings, verdict } from './findings.ts';
import { escapeHtml, jsonForScript } from './format.ts';
import { inlineLibraries } from './inline-libs.ts';
import { CHARTS_JS, pageHead, SORT_JS } from './page-assets.ts';
import { environmentTable, expectationsTable, lossTable, summaryTable } from './tables.ts';
import { cycleSection } from './cycle-section.ts';
import { hasFaultTrials, lossDistributionTable, lossWindowChart } from './loss-section.ts';
import { recountTable } from './recount-section.ts';
import { fileFaultTable } from './file-fault-section.ts';
import { recoveryTable } from './recovery-section.ts';
import { predictionTable } from './prediction-section.ts';
import { frontierCharts, frontierSection } from './frontier-section.ts';
import { consumersSection } from './consumers-section.ts';
import { answerBlock } from './answer.ts';
import { accountingTable } from './accounting-table.ts';
import { crashStatesCharts, crashStatesSection } from './crash-states-section.ts';

export interface RenderOptions {
  /** Receives vega-lite compile warnings (dropped data and the like); default: ignored. */
  onWarning?: (chart: string, message: string) => void;
  /** The run list, relative to the page (default: ../../index.html, as under reports/). */
  homeHref?: string;
  /** More links beside "all runs" (the published site's claims and compare pages), relative to the page. */
  navLinks?: Array<{ href: string; text: string }>;
  /** For publishing: leave out the host name and local paths from the environment. */
  publish?: boolean;
  /** The documentation, relative to the page (default: the repository's docs/, as under reports/<scenario>/<run id>/). */
  docsHref?: string;
}

/** Cell ids in bold inside escaped findings: ids like "buffered, flush never" otherwise blur into the sentence. */
function emphasizeCells(escaped: string, run: RunResult): string {
  const ids = [...new Set(run.cells.map((c) => escapeHtml(c.id)))].filter((id) => id.length > 0).sort((a, b) => b.length - a.length);
  if (ids.length === 0) return escaped;
  const alternatives = ids.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return escaped.replace(new RegExp(`(?<![\\w&;#])(${alternatives})(?![\\w])`, 'g'), '<b>$1</b>');
}

function chartBlock(chart: Chart): string {
  const notes = chart.notes.map((n) => `<p class="chart-notes">${escapeHtml(n)}</p>`).join('');
  return (
    `<h3>${escapeHtml(chart.title)}</h3>` +
    `<p class="chart-caption">${escapeHtml(chart.caption)}</p>${notes}` +
    `<div class="chart" id="${chart.id}" data-chart="${chart.id}"></div>`
  );
}

function banners(run: RunResult): string {
  const out: string[] = [];
  if (run.status !== 'complete') {
    const ok = run.cells.filter((c) => c.status === 'ok').length;
    const what =
      run.status === 'incomplete'
        ? 'INCOMPLETE RUN: it stopped before every cell finished'
        : 'FAILED RUN: the runner reported a failure';
    out.push(
      `<div class="banner ${run.status}" id="status-banner">${escapeHtml(what)} (${ok} of ${run.cells.length} cells ok). ` +
        'Figures cover only what was recorded.</div>',
    );
  }
  const disk = runDiskModelText(run);
  if (disk) out.push(`<div class="banner disk-model" id="disk-model">${escapeHtml(disk)}</div>`);
  const tcg = run.cells.filter((c) => c.accelerator === 'tcg');
  if (tcg.length) {
    out.push(
      `<div class="banner tcg" id="tcg-banner">${escapeHtml(
        `${tcg.length === run.cells.length ? 'Every cell' : `${tcg.length} of ${run.cells.length} cells`} ran in a VM under TCG ` +
          '(software CPU emulation, because KVM guests hang on this host): throughput and latency under TCG are not comparable ' +
          'to the process target. Compare acknowledged loss, not speed.',
      )}</div>`,
    );
  }
  return out.join('\n');
}

function lossFigures(run: RunResult, chart: Chart | null): string {
  if (!hasFaultTrials(run)) return '';
  const accels = [...new Set(run.cells.map((c) => c.accelerator).filter(Boolean))];
  const accel = ranInGuests(run.target)
    ? `<p class="muted" id="loss-accelerator">Guests ran under ${escapeHtml(accels.join(' and ') || 'an unrecorded accelerator')}${accels.includes('tcg') ? ' (software emulation): loss and recovery figures hold for the disk model above, throughput is not comparable to the process target' : ''}.</p>`
    : ranAsHostProcesses(run.target)
      ? '<p class="muted" id="loss-accelerator">Process target: brokers ran as host processes, so a kill left the host page cache intact (a crash, not a power failure).</p>'
      : '';
  return (
    '<h3>Distribution over trials</h3>' +
    '<p class="muted">Each trial is a fresh cluster on fresh disks with its own fault time. Min / median / max over the trials of a cell.</p>' +
    accel +
    `<div class="table-wrap">${lossDistributionTable(run)}</div>` +
    recoveryTable(run) +
    predictionTable(run) +
    recountTable(run) +
    (chart ? chartBlock(chart) : '<p class="muted" id="loss-window-none">No trial lost an acknowledged record, so there is no loss window to draw.</p>')
  );
}

export function renderRunReport(run: RunResult, opts: RenderOptions = {}): string {
  const lossChart = lossWindowChart(run);
  // Drawn in the loss section, but embedded like every other chart.
  const crashCharts = crashStatesCharts(run);
  const frontier = frontierCharts(run);
  const charts = [...runCharts(run), ...(lossChart ? [lossChart] : []), ...crashCharts, ...frontier];
  for (const chart of charts) {
    const { warnings } = compileChart(chart);
    for (const w of warnings) opts.onWarning?.(chart.id, w);
  }
  const v = verdict(run);
  const title = `${run.scenario.name} · ${run.runId}`;
  const libs = inlineLibraries();
  const findingItems = findings(run)
    .map((f) => `<li>${emphasizeCells(escapeHtml(f), run)}</li>`)
    .join('\n');
  const envNote = run.environment.note
    ? `<div class="banner env">${escapeHtml(run.environment.note)}</div>`
    : '';
  const raw = run.scenario.raw === undefined ? '' : toYaml(run.scenario.raw);
  const mainCharts = charts.filter((c) => c !== lossChart && !crashCharts.includes(c) && !frontier.includes(c));
  const chartSection = mainCharts.length
    ? mainCharts.map(chartBlock).join('\n')
    : '<p class="muted">No cell has figures to chart.</p>';

  const generator = `<meta name="generator" content="durolab report; ${libs.map((l) => `${l.name} ${l.version}`).join(', ')}">\n`;
  return `${pageHead(escapeHtml(title), generator)}
<body data-run-status="${escapeHtml(run.status)}">
<main>
<header>
<p class="sub"><a href="${escapeHtml(opts.homeHref ?? '../../index.html')}">all runs</a>${(opts.navLinks ?? []).map((l) => ` · <a href="${escapeHtml(l.href)}">${escapeHtml(l.text)}</a>`).join('')}</p>
<h1>${escapeHtml(run.scenario.name)} <span class="muted">${escapeHtml(run.runId)}</span></h1>
<p class="sub">${escapeHtml(run.target)} target · ${run.cells.length} cells · started ${escapeHtml(run.startedAt)} · status <span class="status status-${escapeHtml(run.status)}">${escapeHtml(run.status)}</span></p>
${banners(run)}
<nav class="toc"><a href="#question">question</a><a href="#findings">findings</a><a href="#summary">summary</a><a href="#charts">charts</a><a href="#loss">loss</a>${frontier.length ? '<a href="#frontier">frontier</a>' : ''}${cycleSection(run) ? '<a href="#cycle">trial cycle</a>' : ''}<a href="#environment">environment</a></nav>
</header>

<section id="question">
<h2>Question and verdict</h2>
<p class="question">${escapeHtml(run.scenario.question || '(the scenario states no question)')}</p>
<p>Expectations: <span class="verdict ${v.tone}" id="verdict">${escapeHtml(v.text)}</span></p>
<section id="answer">
${answerBlock(run)}
</section>
<details id="expectations"${v.tone === 'pass' ? '' : ' open'}><summary>The ${run.expectations.length} expectation${run.expectations.length === 1 ? '' : 's'} behind the verdict</summary>
${expectationsTable(run)}
</details>
</section>

<section id="findings">
<h2>Findings</h2>
<ul class="findings">
${findingItems}
</ul>
<p class="muted">Computed from run.json. Absolute figures belong to the environment below; compare cells by their ratios within this run.</p>
</section>

<section id="summary">
<h2>Summary of cells</h2>
<p class="muted">Click a column header to sort. Latencies are per produce request, in microseconds.</p>
<div class="table-wrap">${summaryTable(run)}</div>
</section>

${consumersSection(run)}

<section id="charts">
<h2>Charts</h2>
${chartSection}
</section>

<section id="loss">
<h2>Acknowledged loss</h2>
<p class="muted">An acknowledged record missing after the fault is lost; records present without an acknowledgement are allowed.
A cell's row gives its whole ledger; with several trials, its loss window, recovery time and guest page cache are the worst trial's and truncated bytes the sum.</p>
<div class="table-wrap">${lossTable(run)}</div>
<h3>Integrity and accounting</h3>
<p class="muted">Replicas are compared on the host from their stored bytes (offset, size, CRC of every batch below the leader's HW). Flushes: the brokers' own counter beside the device's (/proc/diskstats). Errors after a fault (refused connections, mostly) are counted apart; a request is pending only once written to a connected socket.</p>
<div class="table-wrap">${accountingTable(run)}</div>
${fileFaultTable(run)}
${lossFigures(run, lossChart)}
</section>
${crashStatesSection(run, crashCharts.map(chartBlock))}
${frontierSection(run, chartBlock)}
${cycleSection(run)}

<section id="environment">
<h2>Environment</h2>
${envNote}
${environmentTable(run, { publish: opts.publish })}
${raw ? `<details><summary>Scenario as run (${escapeHtml(run.scenario.file)})</summary><pre>${escapeHtml(raw)}</pre></details>` : ''}
</section>
<footer><p class="sub">durolab: <a href="${escapeHtml(opts.docsHref ?? '../../../docs/getting-started.md')}">documentation</a> (how to read this report: getting started; what each fault does: faults).</p></footer>
</main>
${libs.map((l) => `<script data-lib="${l.name}">${l.js}</script>`).join('\n')}
<script type="application/json" id="durolab-charts">${jsonForScript(charts.map((c) => ({ id: c.id, spec: c.spec })))}</script>
<script>${SORT_JS}</script>
<script>${CHARTS_JS}</script>
</body>
</html>
`;
}
