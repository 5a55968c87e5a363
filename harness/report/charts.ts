// Vega-Lite specs for the run report, built from run.json and compiled to Vega here in Node
// so that a bad spec fails the report build rather than a reader's browser.

import { compile, type TopLevelSpec } from 'vega-lite';
import { parse } from 'vega';
import type { CellResult, RunResult, TimePoint } from '../results/types.ts';
import { isMeasured, PAGE_BYTES } from './format.ts';
import { hasThroughput } from '../results/figures.ts';
import { ninesFromHistogram, ninesTicks, type NinesCurve } from './percentiles.ts';

export interface Chart {
  /** DOM id of the chart container and key in the page's view registry. */
  id: string;
  title: string;
  caption: string;
  spec: TopLevelSpec;
  /** Things the reader should know about how the chart was drawn (fallbacks, missing probes). */
  notes: string[];
}

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const WIDE = 760;

const CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 500, gridColor: '#e6e6e6' },
  legend: { labelFontSize: 11, titleFontSize: 12, labelLimit: 260 },
  view: { stroke: '#ddd' },
  line: { strokeWidth: 1.6 },
};

/** Cells drawn in the charts, in run order; also the color domain so every chart agrees. */
function chartCells(run: RunResult): CellResult[] {
  return run.cells.filter(isMeasured);
}

function colorScale(ids: string[]) {
  return { domain: ids, scheme: ids.length <= 10 ? 'tableau10' : 'category20' };
}

function colorEncoding(ids: string[]) {
  return { field: 'cell', type: 'nominal' as const, title: 'cell', scale: colorScale(ids), sort: ids };
}

function throughputChart(run: RunResult): Chart | null {
  // A cell with no finished repetition has no throughput: not drawn (a bar of 0 would claim one).
  const cells = chartCells(run).filter(hasThroughput);
  if (cells.length === 0) return null;
  const ids = cells.map((c) => c.id);
  const values = cells.map((c) => ({
    cell: c.id,
    recordsPerSec: c.throughput.recordsPerSec,
    mbPerSec: c.throughput.mbPerSec,
    requestsPerSec: c.throughput.requestsPerSec,
    status: c.status,
  }));
  const barHeight = Math.max(60, ids.length * 24);
  const panel = (field: string, title: string, format: string, showY: boolean) => {
    const max = Math.max(...values.map((v) => (v as Record<string, number | string>)[field] as number), 0);
    return {
      width: 330,
      height: barHeight,
      encoding: {
        y: showY
          ? { field: 'cell', type: 'nominal', sort: ids, title: null, axis: { labelLimit: 220 } }
          : { field: 'cell', type: 'nominal', sort: ids, axis: null },
        x: {
          field,
          type: 'quantitative',
          title,
          // Room at the end of the longest bar for its value label.
          scale: { domain: [0, max > 0 ? max * 1.28 : 1] },
          axis: { format: '~s' },
        },
      },
      layer: [
        {
          mark: { type: 'bar', tooltip: true },
          encoding: {
            color: { ...colorEncoding(ids), legend: null },
            tooltip: [
              { field: 'cell', type: 'nominal' },
              { field: 'recordsPerSec', type: 'quantitative', title: 'records/s', format: ',.0f' },
              { field: 'mbPerSec', type: 'quantitative', title: 'MB/s', format: ',.2f' },
              { field: 'requestsPerSec', type: 'quantitative', title: 'requests/s', format: ',.0f' },
              { field: 'status', type: 'nominal' },
            ],
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, fontSize: 11, color: '#333' },
          encoding: { text: { field, type: 'quantitative', format } },
        },
      ],
    };
  };
  const spec = {
    $schema: SCHEMA,
    config: CONFIG,
    data: { values },
    hconcat: [panel('recordsPerSec', 'records/s', ',.0f', true), panel('mbPerSec', 'MB/s', ',.1f', false)],
    resolve: { scale: { y: 'shared', x: 'independent' } },
  } as unknown as TopLevelSpec;
  const notes = run.cells
    .filter((c) => !hasThroughput(c))
    .map((c) => `${c.id} not drawn (${isMeasured(c) ? 'no repetition finished its load: throughput not measured' : c.status}${c.note ? `: ${c.note}` : ''})`);
  return {
    id: 'chart-throughput',
    title: 'Throughput',
    caption: 'Acknowledged records per second and payload MB/s over the whole cell.',
    spec,
    notes,
  };
}

function ninesLabelExpr(ticks: Array<{ x: number; label: string }>): string {
  // Ticks sit on exact decades (and 2), so a threshold halfway in log space picks the label.
  let expr = `''`;
  for (let i = ticks.length - 1; i >= 0; i--) {
    const upper = i + 1 < ticks.length ? Math.sqrt(ticks[i].x * ticks[i + 1].x) : Infinity;
    expr = upper === Infinity ? `'${ticks[i].label}'` : `datum.value < ${upper} ? '${ticks[i].label}' : ${expr}`;
  }
  return expr;
}

function latencyChart(run: RunResult): Chart | null {
  const cells = chartCells(run);
  if (cells.length === 0) return null;
  const ids = cells.map((c) => c.id);
  const notes: string[] = [];
  const values: Array<{ cell: string; kind: string; x: number; percentile: number; us: number }> = [];
  let anyCorrected = false;
  const add = (cell: CellResult, kind: string, curve: NinesCurve) => {
    if (curve.problem) notes.push(`${cell.id} (${kind}): ${curve.problem}; curve drawn from the stored percentiles.`);
    for (const p of curve.points) {
      // A log axis cannot show 0 µs; such points only occur at the very bottom of a curve.
      if (p.us > 0) values.push({ cell: cell.id, kind, x: p.x, percentile: p.percentile, us: p.us });
    }
  };
  for (const cell of cells) {
    add(cell, 'measured', ninesFromHistogram(cell.histograms?.latencyUs ?? '', cell.latencyUs));
    if (cell.correctedLatencyUs) {
      anyCorrected = true;
      add(cell, 'corrected', ninesFromHistogram(cell.histograms?.correctedLatencyUs ?? '', cell.correctedLatencyUs));
    }
  }
  if (values.length === 0) return null;
  const maxX = Math.max(...values.map((v) => v.x));
  const ticks = ninesTicks(maxX);
  const encoding: Record<string, unknown> = {
    x: {
      field: 'x',
      type: 'quantitative',
      title: 'percentile',
      scale: { type: 'log', domain: [1, maxX] },
      axis: { values: ticks.map((t) => t.x), labelExpr: ninesLabelExpr(ticks), grid: true },
    },
    y: { field: 'us', type: 'quantitative', title: 'latency (µs, log)', scale: { type: 'log' }, axis: { format: '~s' } },
    color: colorEncoding(ids),
  };
  if (anyCorrected) {
    encoding.strokeDash = {
      field: 'kind',
      type: 'nominal',
      title: 'latency',
      scale: { domain: ['measured', 'corrected'], range: [[1, 0], [5, 3]] },
    };
  }
  const spec = {
    $schema: SCHEMA,
    config: CONFIG,
    width: WIDE,
    height: 340,
    data: { values },
    encoding,
    layer: [
      { mark: { type: 'line', interpolate: 'linear' } },
      {
        // Invisible points carry the tooltips; visible ones would bury the lines.
        mark: { type: 'point', filled: true, size: 50, opacity: 0 },
        encoding: {
          tooltip: [
            { field: 'cell', type: 'nominal' },
            { field: 'kind', type: 'nominal' },
            { field: 'percentile', type: 'quantitative', format: '.4~f', title: 'percentile' },
            { field: 'us', type: 'quantitative', format: ',.0f', title: 'µs' },
          ],
        },
      },
    ],
  } as unknown as TopLevelSpec;
  return {
    id: 'chart-latency',
    title: 'Latency by percentile',
    caption:
      'Produce latency per request from each cell\'s HdrHistogram, on a "nines" axis: each step right is ten times rarer. ' +
      'The last point of each line is the maximum.' +
      (anyCorrected ? ' Dashed: coordinated-omission corrected latency (fixed-rate load).' : ''),
    spec,
    notes,
  };
}

interface SeriesPanel {
  key: string;
  title: string;
  log?: boolean;
  /** Drawn only when some cell has it, and never listed as missing (the ISR: sampled only with RF > 1). */
  onlyWhenSampled?: boolean;
  metrics: Array<{ name: string; pick: (p: TimePoint) => number | null | undefined }>;
}

const MiB = 1024 * 1024;

const PANELS: SeriesPanel[] = [
  // Beside the acknowledged records/s: what the high watermarks committed (sampled with the ISR where the driver reads an HW).
  {
    key: 'rate',
    title: 'records/s',
    metrics: [
      { name: 'records/s', pick: (p) => p.recordsPerSec },
      { name: 'HW advanced/s', pick: (p) => p.hwAdvancedPerSec },
    ],
  },
  { key: 'p99', title: 'p99 µs (log)', log: true, metrics: [{ name: 'p99', pick: (p) => p.p99Us }] },
  // Beside p99: the smallest partition ISR each second (sampled every ~250 ms during the load, RF > 1).
  { key: 'isr', title: 'ISR size (smallest partition)', onlyWhenSampled: true, metrics: [{ name: 'ISR size', pick: (p) => p.isrSize }] },
  {
    key: 'pagecache',
    title: 'page cache MiB',
    metrics: [
      { name: 'nr_dirty', pick: (p) => (p.nrDirty == null ? null : (p.nrDirty * PAGE_BYTES) / MiB) },
      { name: 'nr_writeback', pick: (p) => (p.nrWriteback == null ? null : (p.nrWriteback * PAGE_BYTES) / MiB) },
    ],
  },
  {
    key: 'diskops',
    title: 'disk ops/s',
    metrics: [
      { name: 'writes/s', pick: (p) => p.writesPerSec },
      { name: 'flushes/s', pick: (p) => p.flushesPerSec },
    ],
  },
  { key: 'diskmb', title: 'disk write MB/s', metrics: [{ name: 'write MB/s', pick: (p) => (p.writeKBPerSec == null ? null : p.writeKBPerSec / 1000) }] },
  // The read side: what the device read, and the page cache's misses (a cold read pages in; a warm one does not).
  {
    key: 'diskread',
    title: 'disk read MB/s',
    metrics: [
      { name: 'read MB/s', pick: (p) => (p.readKBPerSec == null ? null : p.readKBPerSec / 1000) },
      { name: 'paged in MB/s', pick: (p) => (p.pgpginKBPerSec == null ? null : p.pgpginKBPerSec / 1000) },
    ],
  },
  {
    key: 'cachemiss',
    title: 'page cache misses /s',
    metrics: [
      { name: 'major faults/s', pick: (p) => p.majorFaultsPerSec },
      { name: 'file refaults/s', pick: (p) => p.refaultsPerSec },
      { name: 'pages reclaimed/s', pick: (p) => p.pagesStolenPerSec },
    ],
  },
];

/** Name of the page-level parameter that picks which cell the time series show. */
const CELL_PICK = 'cellPick';

/** Panels a fault schedule's spans are drawn over. */
const SPAN_PANELS = new Set(['rate', 'p99', 'isr']);

interface FaultSpan {
  cell: string;
  fault: string;
  t0: number;
  t1: number;
  from: string;
  to: string;
}

/**
 * Each schedule entry of the trial the cell's timeseries comes from (its first attempt), from its
 * start to its heal (an instant kind: a thin span at its start), on the series' axis: seconds of
 * the measured window, so the warm-up comes off the entry's time since the load's start.
 */
function faultSpans(run: RunResult, cells: CellResult[]): FaultSpan[] {
  const warmupSec = (run.settings as { workload?: { warmupSec?: number } }).workload?.warmupSec ?? 0;
  const out: FaultSpan[] = [];
  for (const cell of cells) {
    const trial = (cell.trials ?? []).find((t) => t.index === 0);
    for (const e of trial?.schedule ?? []) {
      if (e.startMs === null) continue;
      const t0 = e.startMs / 1000 - warmupSec;
      const t1 = typeof e.healMs === 'number' ? e.healMs / 1000 - warmupSec : t0 + 0.08;
      const fault = `${e.kind} of broker ${(e.targets ?? []).join(', ')} (${e.when})`;
      out.push({ cell: cell.id, fault, t0, t1, from: `${(e.startMs / 1000).toFixed(2)} s`, to: typeof e.healMs === 'number' ? `${(e.healMs / 1000).toFixed(2)} s` : e.healMs === null ? 'not healed' : '-' });
    }
  }
  return out;
}

function timeseriesChart(run: RunResult): Chart | null {
  const cells = chartCells(run).filter((c) => (c.timeseries ?? []).length > 0);
  if (cells.length === 0) return null;
  const ids = chartCells(run).map((c) => c.id);
  const values: Array<{ cell: string; panel: string; metric: string; t: number; value: number }> = [];
  const present = new Map<string, Set<string>>();
  for (const cell of cells) {
    for (const point of cell.timeseries) {
      for (const panel of PANELS) {
        for (const metric of panel.metrics) {
          const v = metric.pick(point);
          if (v == null || !Number.isFinite(v) || (panel.log && v <= 0)) continue;
          values.push({ cell: cell.id, panel: panel.key, metric: metric.name, t: point.t, value: v });
          if (!present.has(panel.key)) present.set(panel.key, new Set());
          present.get(panel.key)!.add(metric.name);
        }
      }
    }
  }
  const panels = PANELS.filter((p) => present.has(p.key));
  if (panels.length === 0) return null;
  const tMax = Math.max(...values.map((v) => v.t));
  const notes: string[] = [];
  // The ISR panel exists only for replicated runs (sampled with RF > 1): its absence elsewhere is no gap.
  const missing = PANELS.filter((p) => !present.has(p.key) && !p.onlyWhenSampled).map((p) => p.title);
  if (missing.length) notes.push(`No samples for: ${missing.join(', ')}.`);
  const cellFilter = { filter: `${CELL_PICK} == 'all' || datum.cell == ${CELL_PICK}` };
  const spans = faultSpans(run, cells);
  const vconcat = panels.map((panel, i) => {
    const metrics = [...present.get(panel.key)!];
    const last = i === panels.length - 1;
    const encoding: Record<string, unknown> = {
      x: {
        field: 't',
        type: 'quantitative',
        title: last ? 'seconds since load start' : null,
        scale: { domain: [0, tMax] },
        axis: { tickMinStep: 1 },
      },
      y: {
        field: 'value',
        type: 'quantitative',
        title: panel.title,
        scale: panel.log ? { type: 'log' } : { zero: true },
        axis: { format: '~s', titleLimit: 110 },
      },
      color: colorEncoding(ids),
      tooltip: [
        { field: 'cell', type: 'nominal' },
        { field: 'metric', type: 'nominal' },
        { field: 't', type: 'quantitative', title: 's' },
        { field: 'value', type: 'quantitative', format: ',.4~r' },
      ],
    };
    if (metrics.length > 1) {
      encoding.strokeDash = {
        field: 'metric',
        type: 'nominal',
        title: panel.title.replace(/ MiB$| ops\/s$/, ''),
        scale: { domain: panel.metrics.map((m) => m.name), range: [[1, 0], [5, 3]] },
      };
    }
    const line = {
      transform: [{ filter: { field: 'panel', equal: panel.key } }, cellFilter],
      mark: { type: 'line', interpolate: 'linear', tooltip: true, point: { size: 14, filled: true } },
      encoding,
    };
    if (!spans.length || !SPAN_PANELS.has(panel.key)) return { width: WIDE, height: 110, ...line };
    // The schedule's entries as shaded spans behind the line: the whole panel's height, start to heal.
    const shade = {
      data: { values: spans },
      transform: [cellFilter],
      mark: { type: 'rect', color: '#b0b0b0', opacity: 0.28 },
      encoding: {
        x: { field: 't0', type: 'quantitative', scale: { domain: [0, tMax] }, title: last ? 'seconds since load start' : null },
        x2: { field: 't1' },
        tooltip: [
          { field: 'cell', type: 'nominal' },
          { field: 'fault', type: 'nominal' },
          { field: 'from', type: 'nominal', title: 'started' },
          { field: 'to', type: 'nominal', title: 'healed' },
        ],
      },
    };
    return { width: WIDE, height: 110, layer: [shade, line] };
  });
  const spec = {
    $schema: SCHEMA,
    config: CONFIG,
    data: { values },
    params: [
      {
        name: CELL_PICK,
        value: 'all',
        bind: { input: 'select', options: ['all', ...cells.map((c) => c.id)], name: 'cell: ' },
      },
    ],
    vconcat,
    spacing: 8,
    resolve: { scale: { x: 'shared', y: 'independent', color: 'shared', strokeDash: 'independent' } },
  } as unknown as TopLevelSpec;
  return {
    id: 'chart-timeseries',
    title: 'Over time',
    caption:
      'One sample per second on one time axis, so stalls in throughput or p99 line up with dirty pages, writeback and device flushes. ' +
      'Page counts assume 4 KiB pages; device figures are for the whole disk (other processes included).' +
      (spans.length
        ? ' Grey spans over records/s, p99 and ISR size: each fault of the first trial\'s schedule from its start to its heal (a thin one: a fault that does not last), timed by the harness from the load\'s start; the driver\'s seconds may begin up to a few hundred ms later (its producers connect first).'
        : ''),
    spec,
    notes,
  };
}

export function runCharts(run: RunResult): Chart[] {
  return [throughputChart(run), latencyChart(run), timeseriesChart(run)].filter((c): c is Chart => c !== null);
}

type CompileLogger = NonNullable<NonNullable<Parameters<typeof compile>[1]>['logger']>;

/**
 * Compiles a chart to Vega and parses the result; throws on any error. Warnings are returned:
 * vega-lite warns about things like dropped data, which the caller may treat as a defect.
 */
export function compileChart(chart: Chart): { warnings: string[] } {
  const warnings: string[] = [];
  let level = 2;
  const logger: CompileLogger = {
    level(l?: number) {
      if (l === undefined) return level;
      level = l;
      return logger;
    },
    error(...args: unknown[]) {
      throw new Error(args.map(String).join(' '));
    },
    warn(...args: unknown[]) {
      warnings.push(args.map(String).join(' '));
      return logger;
    },
    info() {
      return logger;
    },
    debug() {
      return logger;
    },
  };
  try {
    const { spec } = compile(chart.spec, { logger });
    parse(spec);
  } catch (err) {
    throw new Error(`report chart '${chart.id}' does not compile to Vega: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { warnings };
}
