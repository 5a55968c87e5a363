// The report's frontier section (harness/report/frontier.ts): per target a chart of records/s
// (x) against acknowledged records lost per cut (y, symlog so 0 shows; a bar from the fewest to
// the most lost over the trials), each point a setting, the Pareto front drawn through the
// settings nothing beats, and the table with the one-sentence answer.
import type { TopLevelSpec } from 'vega-lite';
import type { RunResult } from '../results/types.ts';
import type { Chart } from './charts.ts';
import { escapeHtml, fmtInt } from './format.ts';
import { frontiersOf, type Frontier } from './frontier.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

function chartOf(f: Frontier, index: number): Chart {
  const values = f.points.map((p) => ({
    setting: p.setting,
    rps: p.recordsPerSec.median,
    lost: p.lost.median,
    lostMin: p.lost.min,
    lostMax: p.lost.max,
    front: p.onFront ? 'on the front' : 'dominated',
  }));
  const front = f.points.filter((p) => p.onFront).map((p) => ({ rps: p.recordsPerSec.median, lost: p.lost.max }));
  const x = { field: 'rps', type: 'quantitative', title: 'records/s (throughput cell, median over repetitions)' };
  const y = { field: 'lost', type: 'quantitative', title: 'acknowledged records lost per cut (median; bar: min-max over trials)', scale: { type: 'symlog' } };
  const spec = {
    $schema: SCHEMA,
    width: 700,
    height: 360,
    layer: [
      { data: { values: front }, mark: { type: 'line', color: '#2b8a3e', strokeDash: [5, 3], point: false }, encoding: { x: { field: 'rps', type: 'quantitative' }, y: { field: 'lost', type: 'quantitative', scale: { type: 'symlog' } }, order: { field: 'rps' } } },
      { data: { values }, mark: { type: 'rule', color: '#888' }, encoding: { x, y: { field: 'lostMin', type: 'quantitative', scale: { type: 'symlog' } }, y2: { field: 'lostMax' } } },
      {
        data: { values },
        mark: { type: 'point', filled: true, size: 80, tooltip: true },
        encoding: {
          x,
          y,
          color: { field: 'front', type: 'nominal', title: null, scale: { domain: ['on the front', 'dominated'], range: ['#2b8a3e', '#999'] } },
          tooltip: [
            { field: 'setting', type: 'nominal' },
            { field: 'rps', type: 'quantitative', title: 'records/s', format: ',.0f' },
            { field: 'lostMin', type: 'quantitative', title: 'lost min', format: ',' },
            { field: 'lost', type: 'quantitative', title: 'lost median', format: ',' },
            { field: 'lostMax', type: 'quantitative', title: 'lost max', format: ',' },
          ],
        },
      },
      { data: { values }, mark: { type: 'text', align: 'left', dx: 7, dy: -7, fontSize: 10 }, encoding: { x, y, text: { field: 'setting' } } },
    ],
    config: { font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', view: { stroke: '#ddd' } },
  } as unknown as TopLevelSpec;
  return { id: `chart-frontier-${index}`, title: `Durability/cost frontier: ${f.target}`, caption: f.answer, spec, notes: [] };
}

/** The frontier charts of a run (one per target); [] without a measure axis. */
export function frontierCharts(run: RunResult): Chart[] {
  return frontiersOf(run).map(chartOf);
}

function table(f: Frontier): string {
  const rows = f.points.map(
    (p) =>
      `<tr><th scope="row" data-v="${escapeHtml(p.setting)}">${escapeHtml(p.setting)}</th>` +
      `<td class="num" data-v="${p.recordsPerSec.median}">${fmtInt(p.recordsPerSec.median)}${p.notSteady ? ' <span class="warn" title="the throughput cell was still ramping (steady-state check)">not steady</span>' : ''}</td>` +
      `<td class="num" data-v="${p.lost.median}">${fmtInt(p.lost.min)} / ${fmtInt(p.lost.median)} / ${fmtInt(p.lost.max)}${p.unavailable ? ` <span class="bad" title="cuts after which the cluster did not come back: not checked">+ ${p.unavailable} unavailable</span>` : ''}</td>` +
      `<td class="num" data-v="${p.acked}">${fmtInt(p.acked)}</td>` +
      `<td data-v="${p.onFront ? 1 : 0}">${p.onFront ? '<b>on the front</b>' : 'dominated'}</td></tr>`,
  );
  return (
    `<div class="table-wrap"><table class="sortable frontier-table"><thead><tr><th scope="col">setting</th><th scope="col" class="num">records/s</th><th scope="col" class="num">lost per cut min / median / max</th><th scope="col" class="num">acked per trial</th><th scope="col">Pareto</th></tr></thead>` +
    `<tbody>${rows.join('\n')}</tbody></table></div>`
  );
}

/** '' when the run has no frontier; `chartHtml` renders a chart block the page embeds. */
export function frontierSection(run: RunResult, chartHtml: (c: Chart) => string): string {
  const fs = frontiersOf(run);
  if (fs.length === 0) return '';
  const charts = fs.map(chartOf);
  return (
    '<section id="frontier"><h2>Durability/cost frontier</h2>' +
    '<p class="muted">Every setting ran twice: a throughput cell without the fault (measure=throughput) and a loss cell under it (measure=loss). A setting is on the front when no other is as fast or faster while losing no more in its worst trial.</p>' +
    fs.map((f, i) => `<p class="answer" id="frontier-answer-${i}">${escapeHtml(f.answer)}</p>${chartHtml(charts[i]!)}${table(f)}`).join('\n') +
    '</section>'
  );
}
