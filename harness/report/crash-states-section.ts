// The report's crash-states part (cells whose fault was `crash-states`): a table of the loss
// distribution over the states per cell, a histogram of lost acknowledged records per state,
// and a timeline of lost records against the crash point's time with the FLUSH marks.
import type { TopLevelSpec } from 'vega-lite';
import type { CellResult, RunResult } from '../results/types.ts';
import type { Chart } from './charts.ts';
import { escapeHtml } from './format.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const CONFIG = { font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', view: { stroke: '#ddd' } };

type CrashCell = CellResult & { crashStates: NonNullable<CellResult['crashStates']> };

function crashCells(run: RunResult): CrashCell[] {
  return run.cells.filter((c): c is CrashCell => c.crashStates !== undefined && c.crashStates.states > 0);
}

export function hasCrashStates(run: RunResult): boolean {
  return crashCells(run).length > 0;
}

const fmt = (n: number) => n.toLocaleString('en-US');

export function crashStatesTable(run: RunResult): string {
  const rows = crashCells(run).map((c) => {
    const s = c.crashStates;
    const v = s.verification;
    const cells = [
      c.id,
      s.policy,
      fmt(s.states),
      fmt(s.lostMin),
      fmt(s.lostMedian),
      fmt(s.lostP99),
      fmt(s.lostMax),
      `${(s.fractionLosing * 100).toFixed(1)} %`,
      s.earliestLosingAtMs === null ? '-' : `${(s.earliestLosingAtMs / 1000).toFixed(2)} s`,
      fmt(s.corruptStates),
      `${fmt(s.writeLog.writes)} / ${fmt(s.writeLog.flushes)} / ${fmt(s.writeLog.fua)}`,
      v ? `${v.agreed} of ${v.booted}` : '-',
    ];
    return `<tr>${cells.map((x, i) => `<td${i >= 2 ? ' class="num"' : ''}>${escapeHtml(x)}</td>`).join('')}</tr>`;
  });
  const head = ['cell', 'onCut', 'states', 'lost min', 'median', 'p99', 'max', 'states losing', 'earliest losing point', 'corrupt states', 'writes / flushes / FUA', 'booted, agreeing'];
  return `<table class="sortable" id="crash-states-table"><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Histogram of lost acknowledged records per crash state, one row of bars per cell. */
function lossHistogram(cells: CrashCell[]): Chart {
  const values = cells.flatMap((c) => c.crashStates.perState.map((s) => ({ cell: c.id, lost: s.lostAcked })));
  const spec = {
    $schema: SCHEMA,
    data: { values },
    facet: { row: { field: 'cell', type: 'nominal', title: null, sort: cells.map((c) => c.id), header: { labelAngle: 0, labelAlign: 'left', labelLimit: 300 } } },
    spec: {
      width: 640,
      height: 90,
      mark: { type: 'bar', tooltip: true, color: '#b2182b' },
      encoding: {
        x: { field: 'lost', type: 'quantitative', bin: { maxbins: 30 }, title: 'acknowledged records lost in a crash state' },
        y: { aggregate: 'count', type: 'quantitative', title: 'states' },
      },
    },
    resolve: { scale: { x: 'independent' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;
  return {
    id: 'chart-crash-states-loss',
    title: 'Loss over crash states',
    caption:
      'For each cell, how many crash states lost how many acknowledged records. A bar at 0 is the states that lost nothing; ' +
      'a cell whose every state is at 0 never lost an acknowledged record at any crash point explored.',
    spec,
    notes: [],
  };
}

/** Lost records against the crash point's time, FLUSH completions as ticks. */
function lossTimeline(cells: CrashCell[]): Chart {
  const points = cells.flatMap((c) =>
    c.crashStates.perState.map((s) => ({ cell: c.id, t: s.atMs / 1000, lost: s.lostAcked, acked: s.ackedBefore, kind: s.kind, state: s.state })),
  );
  const flushes = cells.flatMap((c) => c.crashStates.flushMarksMs.map((ms) => ({ cell: c.id, t: ms / 1000 })));
  const notes = cells.filter((c) => c.crashStates.writeLog.flushes > c.crashStates.flushMarksMs.length).map((c) => `${c.id}: ${c.crashStates.flushMarksMs.length} of ${c.crashStates.writeLog.flushes} FLUSHes drawn (thinned evenly).`);
  const x = { field: 't', type: 'quantitative', title: 'crash point (s since the load started)' };
  const spec = {
    $schema: SCHEMA,
    facet: { row: { field: 'cell', type: 'nominal', title: null, sort: cells.map((c) => c.id), header: { labelAngle: 0, labelAlign: 'left', labelLimit: 300 } } },
    data: { values: [...points.map((p) => ({ ...p, layer: 'state' })), ...flushes.map((f) => ({ ...f, layer: 'flush' }))] },
    spec: {
      width: 640,
      height: 110,
      layer: [
        {
          transform: [{ filter: "datum.layer === 'flush'" }],
          mark: { type: 'tick', color: '#4c78a8', opacity: 0.5, thickness: 1 },
          encoding: { x, y: { value: 110 } },
        },
        {
          transform: [{ filter: "datum.layer === 'state'" }],
          mark: { type: 'line', color: '#bbb', strokeWidth: 1 },
          encoding: { x, y: { field: 'acked', type: 'quantitative', title: 'records' } },
        },
        {
          transform: [{ filter: "datum.layer === 'state'" }],
          mark: { type: 'point', filled: true, size: 22, tooltip: true },
          encoding: {
            x,
            y: { field: 'lost', type: 'quantitative' },
            color: { condition: { test: 'datum.lost > 0', value: '#b2182b' }, value: '#2ca02c' },
            tooltip: [
              { field: 'state', type: 'quantitative' },
              { field: 'kind', type: 'nominal', title: 'point' },
              { field: 't', type: 'quantitative', title: 's', format: '.3f' },
              { field: 'acked', type: 'quantitative', title: 'acknowledged before it', format: ',' },
              { field: 'lost', type: 'quantitative', title: 'of them lost', format: ',' },
            ],
          },
        },
      ],
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;
  return {
    id: 'chart-crash-states-timeline',
    title: 'Lost records by crash point',
    caption:
      'Each dot is a crash state at its point in the run: red = acknowledged records lost there (green = none). The grey line is how many ' +
      'records had been acknowledged by then; blue ticks along the bottom are completed FLUSHes of the disk (what is durable moves only at them).',
    spec,
    notes,
  };
}

export function crashStatesCharts(run: RunResult): Chart[] {
  const cells = crashCells(run);
  return cells.length ? [lossHistogram(cells), lossTimeline(cells)] : [];
}

/** The section (empty when no cell explored crash states); `chartBlocks` are the charts' HTML. */
export function crashStatesSection(run: RunResult, chartBlocks: string[]): string {
  if (!hasCrashStates(run)) return '';
  return `<section id="crash-states">
<h2>Crash states</h2>
<p class="muted">Each cell's trial recorded every request its broker VM sent to the data disk; crash states were built from that write log
(what was FLUSHed or written FUA by the crash point is on the disk; the onCut policy decides the rest) and each was checked on the host:
ext4 journal replay, the engine's recovery, and every record acknowledged before the point must be served. Booted states were also
started in a VM and read through the broker; they must agree with the host check.</p>
<div class="table-wrap">${crashStatesTable(run)}</div>
${chartBlocks.join('\n')}
</section>`;
}
