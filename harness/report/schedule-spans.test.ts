// The report's timeline draws each fault of a trial's schedule as a shaded span, start to heal,
// over the records/s, p99 and ISR size panels (the ISR panel drawn only where sampled); the spec
// compiles without warnings.
import { describe, expect, it } from 'vitest';
import { compileChart, runCharts } from './charts.ts';
import { processRun } from './test-fixtures.ts';
import type { Trial } from '../results/types.ts';

describe('fault schedule on the timeline', () => {
  it('shades each entry from its start to its heal over records/s, p99 and the ISR size, per cell', () => {
    const run = processRun();
    // The ISR size per second beside p99 (harness/runner/run-trial.ts from trial.isr).
    run.cells[0]!.timeseries = run.cells[0]!.timeseries.map((p, i) => ({ ...p, isrSize: i < 3 ? 3 : 1 }));
    run.settings = { ...run.settings, workload: { warmupSec: 1 } };
    const trial: Trial = {
      index: 0,
      ledger: { acked: 100, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0 },
      schedule: [
        { entry: 0, kind: 'pause', when: 'at 3 s', durationMs: 2000, targets: [2], startMs: 3000, healMs: 5010 },
        { entry: 1, kind: 'process-kill', when: 'at 8 s', targets: [1], startMs: 8000 },
        { entry: 2, kind: 'pause', when: 'after 9000 acknowledged records', durationMs: 1000, startMs: null, note: 'the load ended before it started' },
      ],
    };
    run.cells[0]!.trials = [trial];
    const chart = runCharts(run).find((c) => c.id === 'chart-timeseries')!;
    const panels = (chart.spec as unknown as { vconcat: Array<{ layer?: Array<{ data?: { values: Array<Record<string, unknown>> }; mark: { type: string } }> }> }).vconcat;
    const layered = panels.filter((p) => p.layer);
    expect(layered).toHaveLength(3);
    expect(JSON.stringify(chart.spec)).toContain('ISR size (smallest partition)');
    for (const p of layered) {
      expect(p.layer![0]!.mark.type).toBe('rect');
      expect(p.layer![0]!.data!.values).toEqual([
        { cell: run.cells[0]!.id, fault: 'pause of broker 2 (at 3 s)', t0: 2, t1: 4.01, from: '3.00 s', to: '5.01 s' },
        { cell: run.cells[0]!.id, fault: 'process-kill of broker 1 (at 8 s)', t0: 7, t1: 7.08, from: '8.00 s', to: '-' },
      ]);
    }
    expect(chart.caption).toMatch(/Grey spans over records\/s, p99 and ISR size/);
    expect(compileChart(chart).warnings).toEqual([]);
  });

  it('draws no span where no trial has a schedule, and no ISR panel where the ISR was not sampled', () => {
    const chart = runCharts(processRun()).find((c) => c.id === 'chart-timeseries')!;
    expect(JSON.stringify(chart.spec)).not.toContain('ISR size');
    expect(chart.notes.join(' ')).not.toContain('ISR');
    expect(JSON.stringify(chart.spec)).not.toContain('"rect"');
    expect(chart.caption).not.toMatch(/Grey spans/);
  });
});
