// compare on fixture runs: cells aligned by settings whatever their order, noise bands from
// repetitions and loss bands from trials, and the environment facts that differ.
import { describe, expect, it } from 'vitest';
import { makeRun, powerCutRun } from '../report/test-fixtures.ts';
import type { RunResult } from '../results/types.ts';
import { compareRuns, comparisonText, difference, trendText } from './compare.ts';
import { trendCharts } from './trend-charts.ts';
import { renderComparePage, renderTrendPage } from './compare-page.ts';
import { main as compareMain } from './compare-command.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const lat = { medianUs: 500, sigma: 0.2, count: 1000 };

function ioRun(runId: string, reps: Record<string, number[]>, order = Object.keys(reps)): RunResult {
  const run = makeRun(order.map((io) => ({ id: `io=${io}`, params: { io }, recordsPerSec: 0, latency: lat })), { runId, startedAt: `2025-01-0${runId.slice(-1)}T00:00:00.000Z` });
  for (const c of run.cells) {
    const rs = reps[String(c.params.io)];
    c.repetitions = rs.map((r) => ({ recordsPerSec: r, mbPerSec: r / 1000, p50Us: 500, p99Us: 900, p999Us: 1500 }));
    c.throughput!.recordsPerSec = [...rs].sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    c.throughput!.mbPerSec = c.throughput!.recordsPerSec / 1000;
  }
  return run;
}

describe('compare', () => {
  it('aligns cells by settings, not position; overlapping bands are within noise, apart ones higher or lower', () => {
    const a = ioRun('run-1', { buffered: [100, 120], direct: [50, 60], dsync: [10, 11] });
    const b = ioRun('run-2', { dsync: [30, 32], direct: [55, 65], buffered: [80, 90] }, ['dsync', 'direct', 'buffered']);
    const cmp = compareRuns([a, b]);
    expect(cmp.cells.map((c) => c.key)).toEqual(['process: io=buffered', 'process: io=direct', 'process: io=dsync']);
    const rate = (key: string) => cmp.cells.find((c) => c.key === key)!.figures.find((f) => f.name === 'recordsPerSec')!;
    expect(rate('process: io=direct').differences).toEqual(['baseline', 'within noise']);
    expect(rate('process: io=dsync').differences).toEqual(['baseline', 'higher']);
    expect(rate('process: io=buffered').differences).toEqual(['baseline', 'lower']);
    // Medians of two repetitions are their mean: 31 / 10.5.
    expect(rate('process: io=dsync').ratios[1]).toBeCloseTo(31 / 10.5);
    const text = comparisonText(cmp);
    expect(text).toMatch(/^process: io=direct\s+records\/s\s+55 \(50-60\)\s+60 \(55-65\)\s+1\.1x within noise$/m);
    expect(text).toMatch(/^process: io=dsync\s+records\/s\s+10\.5 \(10-11\)\s+31 \(30-32\)\s+3\.0x higher \(better\)$/m);
    expect(text).toContain('environment: the same in every run');
    const html = renderComparePage(cmp, { home: '../index.html', runHref: (r) => `../runs/${r.scenario.name}/${r.runId}/index.html` });
    expect(html).toContain('<a href="../runs/io-modes/run-2/index.html">io-modes/run-2</a>');
    expect(html.match(/data-difference="within noise"/g)?.length).toBeGreaterThan(0);
  });

  it("a replaced attempt's figures are kept in run.json but are in no band", () => {
    const a = ioRun('run-1', { buffered: [100, 120] });
    a.cells[0]!.repetitions!.splice(1, 0, { trial: 1, replaced: true, recordsPerSec: 9000, mbPerSec: 9, p50Us: 1, p99Us: 2, p999Us: 3 });
    const rate = compareRuns([a, ioRun('run-2', { buffered: [100, 120] })]).cells[0]!.figures.find((f) => f.name === 'recordsPerSec')!;
    expect(rate.values[0]).toMatchObject({ min: 100, max: 120, n: 2, over: 'repetitions' });
    expect(rate.differences[1]).toBe('within noise');
  });

  it('one repetition has no band; a cell missing in a run says so', () => {
    expect(difference({ min: 1, median: 1, max: 1, n: 1, over: 'cell' }, { min: 5, median: 5, max: 5, n: 1, over: 'cell' })).toBe('no band');
    const a = ioRun('run-1', { buffered: [100] });
    const b = ioRun('run-2', { buffered: [100], direct: [50] });
    const cmp = compareRuns([a, b]);
    const direct = cmp.cells.find((c) => c.key === 'process: io=direct')!;
    expect(direct.ids).toEqual([null, 'io=direct']);
    expect(direct.figures[0].differences[1]).toBe('missing');
    expect(comparisonText(cmp)).toMatch(/records\/s\s+100\s+100\s+1\.0x \(1 sample, no noise band\)/);
  });

  it('fault runs compare acknowledged loss over trials, and environment differences are listed', () => {
    const a = powerCutRun();
    const b = powerCutRun();
    b.runId = 'later';
    b.environment = { ...b.environment, cores: 8, kernel: '6.12.0' };
    b.cells[0].trials = b.cells[0].trials!.map((t) => ({ ...t, ledger: { ...t.ledger, ackedLost: 0 } }));
    const cmp = compareRuns([a, b]);
    const lost = cmp.cells[0].figures.find((f) => f.name === 'ackedLost')!;
    expect(lost.values[0]).toMatchObject({ min: 0, median: 2800, max: 3100, n: 3, over: 'trials' });
    expect(lost.differences[1]).toBe('within noise');
    expect(cmp.environment).toEqual([
      { fact: 'cores', values: ['2', '8'] },
      { fact: 'kernel', values: ['6.1.0-18-amd64', '6.12.0'] },
    ]);
    expect(comparisonText(cmp)).toContain('environment differences:\n  cores: A=2; B=8\n  kernel: A=6.1.0-18-amd64; B=6.12.0');
  });

  it('a scenario trend lists its runs oldest first', () => {
    const older = ioRun('run-1', { buffered: [100, 110] });
    const newer = ioRun('run-2', { buffered: [200, 210] });
    const text = trendText('io-modes', [newer, older]);
    expect(text.split('\n')[0]).toBe('io-modes: 2 run(s), oldest first (median, min-max band over repetitions or trials)');
    expect(text).toMatch(/run-1\s+run-2/);
    expect(text).toContain('105 (100-110) rec/s, p99 900 µs, lost 0  205 (200-210) rec/s');
    const page = renderTrendPage('io-modes', [newer, older]);
    expect(page).toContain('id="trend-table"');
    // Drawn too (issue 26): records/s and p99 per cell over the runs, oldest first, each point
    // the median with its min-max band; no loss chart for a scenario without faults.
    const charts = trendCharts([newer, older]);
    expect(charts.map((c) => c.id)).toEqual(['trend-recordsPerSec', 'trend-p99Us']);
    const values = (charts[0]!.spec as { data: { values: Array<{ run: string; median: number; min: number; max: number }> } }).data.values;
    expect(values.map((v) => [v.run.split(' ')[0], v.median, v.min, v.max])).toEqual([
      ['1.', 105, 100, 110],
      ['2.', 205, 200, 210],
    ]);
    expect(page).toContain('id="trend-recordsPerSec"');
    expect(page).toContain('id="durolab-charts"');
    expect(trendCharts([powerCutRun(), { ...powerCutRun(), runId: 'later', startedAt: '2025-01-03T00:00:00.000Z' }]).map((c) => c.id)).toContain('trend-ackedLost');
    expect(() => compareRuns([older])).toThrow('compare needs at least two runs, got 1');
  });
});

describe('compare --scenario', () => {
  it('takes a scenario name (a trailing slash is dropped), never an empty name or a path that would mix scenarios', async () => {
    const results = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-compare-cmd-'));
    try {
      for (const bad of ['', '../results/io-modes', 'a/b', '.', '..']) {
        await expect(compareMain(['--scenario', bad, '--no-html', '--results-dir', results])).rejects.toThrow(
          `durolab compare --scenario ${JSON.stringify(bad)}: expected a scenario name`,
        );
      }
      await expect(compareMain(['--scenario', 'io-modes/', '--no-html', '--results-dir', results])).rejects.toThrow(
        `durolab compare --scenario io-modes: no readable run under ${path.join(results, 'io-modes')}`,
      );
    } finally {
      fs.rmSync(results, { recursive: true, force: true });
    }
  });
});
