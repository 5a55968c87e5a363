// The report's crash-states part: the per-cell distribution table, the loss histogram and the
// timeline with FLUSH marks compile to Vega without warnings, and runs without crash states
// get no such section.
import { describe, expect, it } from 'vitest';
import type { CrashStateRow, RunResult } from '../results/types.ts';
import { summariseCrashStates } from '../disk/crash-states/run.ts';
import { compileChart } from './charts.ts';
import { crashStatesCharts, crashStatesTable } from './crash-states-section.ts';
import { renderRunReport } from './run-page.ts';
import { crashStatesSummary } from '../disk/crash-states/summary.ts';
import { powerCutRun } from './test-fixtures.ts';

function row(state: number, atMs: number, ackedBefore: number, lostAcked: number): CrashStateRow {
  return {
    state,
    position: state * 3,
    kind: state % 3 === 0 ? 'after-flush' : 'spread',
    timeUs: 1_700_000_000_000_000 + atMs * 1000,
    atMs,
    ackCutMs: 1_700_000_000_000 + atMs,
    epoch: Math.floor(atMs / 500),
    durableWrites: state,
    unflushedWrites: 2,
    keptUnflushedWrites: 0,
    deltaBytes: 0,
    ackedBefore,
    lostAcked,
    corrupt: 0,
    inconsistentOffsets: 0,
    duplicates: 0,
    outOfOrder: 0,
    offsetChanged: 0,
    served: ackedBefore - lostAcked,
    recoveryBytesTruncated: lostAcked > 0 ? 4096 : 0,
    recoveryBatchesTruncated: lostAcked > 0 ? 1 : 0,
    noDataDir: false,
  };
}

function crashRun(): RunResult {
  const run = structuredClone(powerCutRun());
  const never = Array.from({ length: 200 }, (_, i) => row(i, i * 30, i * 16, i % 4 === 0 ? 0 : (i % 7) * 16));
  const perBatch = Array.from({ length: 200 }, (_, i) => row(i, i * 30, i * 10, 0));
  const extra = { policy: 'drop-unflushed', seed: 1, writeLog: { records: 900, writes: 500, flushes: 400, fua: 0 } };
  run.cells[0]!.crashStates = { ...summariseCrashStates(never, { ...extra, flushMarksMs: [500, 1000, 1500] }), verification: { booted: 3, agreed: 3 } };
  run.cells[1]!.crashStates = { ...summariseCrashStates(perBatch, { ...extra, flushMarksMs: Array.from({ length: 400 }, (_, i) => i * 15) }), verification: { booted: 3, agreed: 3 } };
  return run;
}

describe('crash-states report section', () => {
  it('summarises the loss distribution per cell', () => {
    const run = crashRun();
    const s = run.cells[0]!.crashStates!;
    expect(s.states).toBe(200);
    expect(s.lostMin).toBe(0);
    expect(s.lostMax).toBe(96);
    expect(s.fractionLosing).toBeGreaterThan(0.5);
    expect(s.earliestLosingAtMs).toBe(30);
    expect(run.cells[1]!.crashStates!.fractionLosing).toBe(0);
    const html = crashStatesTable(run);
    const rowOf = (id: string) => html.split('<tr>').find((r) => r.includes(`>${id}<`))!;
    expect(rowOf(run.cells[0]!.id)).toContain('<td class="num">96</td>');
    expect(rowOf(run.cells[1]!.id)).toContain('<td class="num">0.0 %</td>');
    expect(rowOf(run.cells[1]!.id)).toContain('3 of 3');
  });

  it('draws the histogram and the timeline with FLUSH marks, compiling without warnings', () => {
    const charts = crashStatesCharts(crashRun());
    expect(charts.map((c) => c.id)).toEqual(['chart-crash-states-loss', 'chart-crash-states-timeline']);
    for (const c of charts) expect(compileChart(c).warnings).toEqual([]);
    const values = (charts[1]!.spec as unknown as { data: { values: Array<{ layer: string }> } }).data.values;
    expect(values.filter((v) => v.layer === 'flush')).toHaveLength(403);
    expect(values.filter((v) => v.layer === 'state')).toHaveLength(400);
    const page = renderRunReport(crashRun());
    expect(page).toContain('id="crash-states"');
    expect(page).toContain('data-chart="chart-crash-states-timeline"');
  });

  it('prints the terminal table: states, lost min/med/p99/max, fraction losing, booted agreeing', () => {
    const run = crashRun();
    const text = crashStatesSummary(run);
    expect(text).toContain('crash states (drop-unflushed');
    const line = text.split('\n').find((l) => l.startsWith(run.cells[0]!.id))!;
    expect(line).toMatch(/200\s+0 \/ 32 \/ 96 \/ 96\s+64\.5 %\s+0\.03 s\s+0\s+3\/3$/);
    expect(crashStatesSummary(powerCutRun())).toBe('');
  });

  it('leaves runs without crash states alone', () => {
    const run = powerCutRun();
    expect(crashStatesCharts(run)).toEqual([]);
    expect(renderRunReport(run)).not.toContain('id="crash-states"');
  });
});
