// The terminal summary: the cell table keeps its columns, and fixed-rate cells get their
// coordinated-omission-corrected percentiles in a second table beside the raw ones.
import { describe, expect, it } from 'vitest';
import { latencyHistogram, makeRun } from './test-fixtures.ts';
import { summaryTable } from './summary-table.ts';
import { summaryTable as reportSummaryTable } from './tables.ts';
import { runCharts } from './charts.ts';
import { summaryJson } from './summary-formats.ts';
import { cellFigure } from '../results/figures.ts';
import type { CellResult } from '../results/types.ts';

const HEADER = 'cell  records/s  MB/s  p50 µs  p99 µs  p99.9 µs  max µs  errors  acked  lost  incons  dup  ooo  corrupt  flushes  segments';

describe('summaryTable', () => {
  it('closed-loop cells: the cell table only, no corrected latency', () => {
    const run = makeRun([{ id: 'c1', params: { flush: 'never' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } }]);
    const text = summaryTable(run);
    expect(text.split('\n')[0].replace(/\s+/g, ' ')).toBe(HEADER.replace(/\s+/g, ' '));
    expect(text).not.toContain('corrected');
  });

  it('fixed-rate cells: raw and corrected p50/p99/p99.9/max side by side, from the cell results', () => {
    const run = makeRun([
      { id: 'c1', params: { flush: 'never' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } },
      { id: 'c2', params: { flush: 'per-batch' }, recordsPerSec: 9_000, latency: { medianUs: 2000, sigma: 0.5, count: 2000 } },
    ]);
    // c2 ran at a fixed rate: its corrected summary is a real histogram's, with a stall's tail.
    const corrected = latencyHistogram({ medianUs: 250_000, sigma: 0.8, count: 2000, seed: 5 }).summary;
    run.cells[1].correctedLatencyUs = corrected;
    const lines = summaryTable(run).split('\n');
    expect(lines[0].replace(/\s+/g, ' ')).toBe(HEADER.replace(/\s+/g, ' '));
    const title = lines.findIndex((l) => l.startsWith('coordinated-omission corrected latency'));
    expect(title).toBeGreaterThan(3);
    expect(lines[title + 1].split(/\s{2,}/)).toEqual([
      'fixed-rate cell', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'corrected p50 µs', 'corrected p99 µs', 'corrected p99.9 µs', 'corrected max µs',
    ]);
    const row = lines[title + 3].split(/\s{2,}/);
    const n = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 0 });
    const raw = run.cells[1].latencyUs;
    expect(row).toEqual(['flush=per-batch', n(raw.p50), n(raw.p99), n(raw.p999), n(raw.max), n(corrected.p50), n(corrected.p99), n(corrected.p999), n(corrected.max)]);
    // Only the fixed-rate cell is listed.
    expect(lines.slice(title).some((l) => l.startsWith('flush=never'))).toBe(false);
  });
});

describe('a cell with no finished repetition', () => {
  // Interrupted before any load finished: no throughput (absent) and a latency summary of no sample.
  function run() {
    const r = makeRun([
      { id: 'io=buffered', params: { io: 'buffered' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } },
      { id: 'io=direct', params: { io: 'direct' }, recordsPerSec: 40_000, latency: { medianUs: 400, sigma: 0.5, count: 2000 } },
    ]);
    const { throughput: _none, ...rest } = r.cells[1]!;
    const noLoad: CellResult = { ...rest, status: 'interrupted', latencyUs: { p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, count: 0 }, repetitions: [] };
    r.cells[1] = noLoad;
    return r;
  }

  it("shows '-' for its throughput and latency in the terminal, never 0", () => {
    const row = summaryTable(run()).split('\n').find((l) => l.startsWith('io=direct'))!;
    expect(row.split(/\s{2,}/).slice(0, 7)).toEqual(['io=direct (interrupted)', '-', '-', '-', '-', '-', '-']);
    const measured = summaryTable(run()).split('\n').find((l) => l.startsWith('io=buffered'))!;
    expect(measured.split(/\s{2,}/)[1]).not.toBe('-');
  });

  it("shows a dash in the report's table, leaves it out of the throughput chart with the reason, and gives no figure to compare or claims", () => {
    const html = reportSummaryTable(run());
    const row = html.split('\n').find((l) => l.includes('data-cell="io=direct"'))!;
    // After the status and the io param: records/s, MB/s, p50, p99, p99.9, max, each with no value.
    const tds = row.split('<td').slice(1);
    expect(tds.slice(2, 8).map((td) => /data-v="([^"]*)"[^>]*>([^<]*)</.exec(td)?.slice(1))).toEqual(Array.from({ length: 6 }, () => ['', '—']));
    const chart = runCharts(run()).find((c) => c.id === 'chart-throughput')!;
    expect(JSON.stringify(chart.spec)).not.toContain('"io=direct"');
    expect(chart.notes).toEqual(['io=direct not drawn (no repetition finished its load: throughput not measured)']);
    for (const figure of ['recordsPerSec', 'mbPerSec', 'p50Us', 'p99Us', 'p999Us', 'maxUs'] as const) expect(cellFigure(run().cells[1]!, figure), figure).toBeNull();
    expect(cellFigure(run().cells[0]!, 'recordsPerSec')?.median).toBe(run().cells[0]!.throughput!.recordsPerSec);
    const json = JSON.parse(summaryJson(run())) as { cells: Array<Record<string, unknown>> };
    expect(json.cells[1]).toMatchObject({ recordsPerSec: null, mbPerSec: null, p50Us: null, p99Us: null, p999Us: null });
  });
});
