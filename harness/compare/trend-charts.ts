// The charts of a scenario's trend page (compare-page.ts renderTrendPage): per figure (records/s,
// p99, acknowledged loss) one line per cell over the runs, oldest first, each point the median
// with a rule over the min-max band of its repetitions or trials, the x axis naming each run's
// id and commit, so a regression shows at a glance. Compiled here like the run report's charts.
import type { TopLevelSpec } from 'vega-lite';
import type { RunResult } from '../results/types.ts';
import type { Chart } from '../report/charts.ts';
import { scenarioTrend } from './compare.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

const FIGURES = [
  { key: 'recordsPerSec', title: 'Records/s over the runs', axis: 'records/s (median, min-max band)' },
  { key: 'p99Us', title: 'p99 produce latency over the runs', axis: 'p99 µs (median, min-max band)' },
  { key: 'ackedLost', title: 'Acknowledged records lost over the runs', axis: 'acked lost (median, min-max band)' },
] as const;

/** The run as the x axis names it: its order, id and commit. */
export function trendRunLabel(run: RunResult, i: number): string {
  return `${i + 1}. ${run.runId}${run.gitCommit ? ` @${run.gitCommit.slice(0, 7)}` : ''}`;
}

export function trendCharts(runs: RunResult[]): Chart[] {
  const ordered = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const labels = ordered.map(trendRunLabel);
  const rows = scenarioTrend(ordered);
  const faulted = ordered.some((run) => run.cells.some((c) => (c.trials ?? []).some((t) => t.fault)));
  return FIGURES.flatMap((f) => {
    const values = rows.flatMap((r) =>
      r.values.flatMap((v, i) => {
        const fig = v?.[f.key];
        return fig ? [{ run: labels[i]!, cell: r.key, median: fig.median, min: fig.min, max: fig.max, n: fig.n }] : [];
      }),
    );
    // Loss is drawn for scenarios with faults (a performance scenario's is the checker's 0 every time).
    if (values.length === 0 || (f.key === 'ackedLost' && !faulted)) return [];
    const x = { field: 'run', type: 'ordinal', sort: labels, title: 'run (oldest first) @commit', axis: { labelAngle: -30, labelLimit: 220 } } as const;
    const color = { field: 'cell', type: 'nominal', title: 'cell', scale: { scheme: rows.length <= 10 ? 'tableau10' : 'category20' } } as const;
    const spec: TopLevelSpec = {
      $schema: SCHEMA,
      width: 760,
      height: 260,
      data: { values },
      layer: [
        { mark: { type: 'rule', strokeWidth: 2, opacity: 0.5 }, encoding: { x, y: { field: 'min', type: 'quantitative' }, y2: { field: 'max' }, color } },
        {
          mark: { type: 'line', point: true },
          encoding: {
            x,
            y: { field: 'median', type: 'quantitative', title: f.axis },
            color,
            tooltip: [
              { field: 'cell' },
              { field: 'run' },
              { field: 'median', format: ',.0f' },
              { field: 'min', format: ',.0f' },
              { field: 'max', format: ',.0f' },
              { field: 'n', title: 'samples' },
            ],
          },
        },
      ],
    };
    return [{ id: `trend-${f.key}`, title: f.title, caption: 'One line per cell (target and settings), one point per run; the vertical rule is the min-max band over its repetitions or trials.', spec, notes: [] }];
  });
}
