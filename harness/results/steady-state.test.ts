import { describe, expect, it } from 'vitest';
import { cellSteadiness, judgeSteadiness } from './steady-state.ts';
import { summaryTable } from '../report/summary-table.ts';
import { renderRunReport } from '../report/run-page.ts';
import { asRunResult } from '../report/load-runs.ts';
import { processRun } from '../report/test-fixtures.ts';

describe('steady state of a measured window', () => {
  it('calls the O_DIRECT ramp a user saw (11,856 -> 95,776 records/s in 5 s) not steady, with its figures', () => {
    const s = judgeSteadiness([11_856, 38_000, 61_000, 84_000, 95_776]);
    expect(s.state).toBe('ramping');
    expect(s.firstRps).toBe(11_856);
    expect(s.lastRps).toBe(95_776);
    expect(s.reason).toContain('records/s went from 11,856 (first 1 s) to 95,776 (last 1 s)');
    expect(s.reason).toContain('ramp up');
  });

  it('keeps a noisy but level window steady, and a level one with a dip too', () => {
    expect(judgeSteadiness([70_000, 64_000, 73_000, 66_000, 71_000, 65_000]).state).toBe('steady');
    // One slow second (a writeback burst) is noise around a level, not a trend.
    expect(judgeSteadiness([70_000, 71_000, 40_000, 70_500, 69_800, 70_200]).state).toBe('steady');
    // A steady decline is a trend too.
    expect(judgeSteadiness([90_000, 80_000, 70_000, 60_000, 50_000, 40_000])).toMatchObject({ state: 'ramping' });
  });

  it('says unknown with too few seconds or nothing acknowledged', () => {
    expect(judgeSteadiness([1, 2, 3]).state).toBe('unknown');
    expect(judgeSteadiness([0, 0, 0, 0, 5]).state).toBe('unknown');
  });

  it('a cell is not steady when any repetition ramps, steady only when all are', () => {
    const ramp = judgeSteadiness([10, 40, 70, 100, 130, 160]);
    const level = judgeSteadiness([100, 101, 99, 100, 102, 98]);
    expect(cellSteadiness([level, ramp])).toMatchObject({ state: 'ramping' });
    expect(cellSteadiness([level, ramp])!.reason).toMatch(/^1 of 2 repetition\(s\) not steady; repetition 2:/);
    expect(cellSteadiness([level, level])!.state).toBe('steady');
    expect(cellSteadiness([undefined])).toBeUndefined();
  });

  it('is marked in the terminal summary and the report, through run.json validation', () => {
    const run = structuredClone(processRun());
    run.cells[0]!.steadiness = judgeSteadiness([11_856, 38_000, 61_000, 84_000, 95_776]);
    const text = summaryTable(run);
    expect(text).toContain('(not steady)');
    expect(text).toContain('not steady (the figures above average a ramp');
    const page = renderRunReport(asRunResult(JSON.parse(JSON.stringify(run)), 'run.json'));
    expect(page).toContain('status-not-steady');
  });
});
