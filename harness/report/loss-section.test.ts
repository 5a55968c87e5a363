import { describe, expect, it } from 'vitest';
import type { RunResult, Trial } from '../results/types.ts';
import { asRunResult } from './load-runs.ts';
import { compileChart } from './charts.ts';
import { renderRunReport } from './run-page.ts';
import { lossDistributionTable, lossWindowChart } from './loss-section.ts';
import { powerCutRun, processRun } from './test-fixtures.ts';
import { trialSummary } from './trial-summary.ts';

/** powerCutRun's trials with what the fault runner now records: timelines, integrity, suspects. */
function runWithTimelines(): RunResult {
  const run = structuredClone(powerCutRun());
  const add = (t: Trial, lostBins: number) => {
    const bins = [];
    for (let i = -60; i < 0; i++) bins.push({ t: i * 100, acked: 640, lost: i >= -lostBins ? 640 : 0 });
    t.fault!.lossTimeline = { binMs: 100, bins };
    t.fault!.recoverMs = 4200 + t.index;
    t.cycleMs = 21_000 + t.index * 1000;
  };
  run.cells[0].trials!.forEach((t, i) => add(t, [42, 39, 0][i]));
  run.cells[1].trials!.forEach((t) => add(t, 0));
  run.cells[0].trials![1].suspect = true;
  run.cells[0].trials![1].note = 'no acknowledgement in the last 1.4 s before the cut (the load had stalled)';
  run.cells[0].trials![0].ledger.hwWentBack = 0;
  run.cells[0].trials![1].ledger.hwWentBack = 0;
  run.cells[0].trials![2].ledger.hwWentBack = 96;
  run.cells[0].trials![2].ledger.replicasDisagree = 1;
  run.cells[0].trials!.forEach((t, i) => (t.ledger.ackedWithoutOffset = [0, 12, 5][i]));
  // cell 1's trials measured no HW before the fault (a reading that failed): not measured, not clean-by-default.
  run.cells[1].trials!.forEach((t) => {
    delete t.ledger.hwWentBack;
    t.ledger.hwNotMeasured = 1;
    t.fault!.hwNotMeasuredWhy = 'hw-0: its high watermark could not be read before the fault: no answer within 1500 ms';
  });
  return run;
}

describe('loss section', () => {
  it('gives min / median / max of acked loss and the loss window per cell, with the trial cycle', () => {
    const html = lossDistributionTable(runWithTimelines());
    const row = html.split('<tr>').find((r) => r.includes('vm buffered acks=1'))!;
    // trials lost 3,100, 2,800 and 0: min 0, median 2,800, max 3,100
    expect(row).toContain('0 / 2,800 / 3,100');
    expect(row).toContain('3,100, 2,800, 0');
    expect(row).toContain('(1 suspect)');
    expect(row).toContain('HW went back in 1 of 3 trials (max 96)');
    expect(row).not.toContain('not measured');
    // acknowledged without an offset, summed over the trials
    expect(row).toContain('<td class="num" data-v="17">17</td>');
    expect(row).toContain('replicas disagree below HW in 1 of 3 trials (max 1)');
    expect(row).toContain('21 s / 22 s / 23 s');
    const synced = html.split('<tr>').find((r) => r.includes('vm fdatasync acks=1'))!;
    expect(synced).toContain('0 / 0 / 0');
    expect(synced).toMatch(/clean; HW going back not measured in (\d+) of \1 trials/);
  });

  it('draws the loss window against the cut as a chart that compiles without warnings', () => {
    const chart = lossWindowChart(runWithTimelines())!;
    expect(chart).not.toBeNull();
    expect(compileChart(chart).warnings).toEqual([]);
    const values = (chart.spec as unknown as { data: { values: Array<{ trial: string; t: number; lost: number }> } }).data.values;
    // Lost records of trial 0 were acknowledged up to 4.2 s before the cut.
    const lost0 = values.filter((v) => v.trial.startsWith('vm buffered acks=1 · trial 1') && v.lost > 0);
    expect(Math.min(...lost0.map((v) => v.t))).toBeCloseTo(-4.2, 5);
    expect(values.some((v) => v.trial.includes('(suspect)'))).toBe(true);
  });

  it('has no loss chart when nothing was lost, and says so on the page', () => {
    const run = runWithTimelines();
    for (const c of run.cells) for (const t of c.trials ?? []) for (const b of t.fault!.lossTimeline!.bins) b.lost = 0;
    expect(lossWindowChart(run)).toBeNull();
    expect(renderRunReport(run)).toContain('id="loss-window-none"');
  });

  it('renders the section in the page: suspect notes, integrity, the accelerator caveat, and the chart embedded', () => {
    const html = renderRunReport(runWithTimelines());
    const loss = html.slice(html.indexOf('<section id="loss">'), html.indexOf('<section id="environment">'));
    expect(loss).toContain('id="loss-distribution-table"');
    expect(loss).toContain('data-chart="chart-loss-window"');
    expect(loss).toContain('suspect: no acknowledgement in the last 1.4 s');
    expect(loss).toContain('Guests ran under tcg (software emulation)');
    expect(html).toContain('id="tcg-banner"');
    expect(html).toMatch(/"id":"chart-loss-window"/);
  });

  it('keeps the new trial fields when run.json is read back', () => {
    const run = runWithTimelines();
    const back = asRunResult(JSON.parse(JSON.stringify(run)), 'test');
    const t = back.cells[0].trials![1];
    expect(t.suspect).toBe(true);
    expect(t.cycleMs).toBe(22_000);
    expect(t.fault!.lossTimeline!.bins.length).toBe(60);
    expect(back.cells[0].trials![2].ledger.hwWentBack).toBe(96);
    expect(back.cells[0].trials![1].ledger.ackedWithoutOffset).toBe(12);
    expect(back.cells[1].trials![0].ledger).toMatchObject({ hwNotMeasured: 1 });
    expect(back.cells[1].trials![0].fault!.hwNotMeasuredWhy).toContain('could not be read before the fault');
    // the terminal's fault summary says the same
    const terminal = trialSummary(back);
    expect(terminal).toContain('vm buffered acks=1: 17 acknowledged records without an offset (per trial 0, 12, 5)');
    expect(terminal).toMatch(/vm fdatasync acks=1: HW going back not measured in (\d+) of \1 trials \(trial 1: hw-0: its high watermark could not be read before the fault/);
  });

  it('names the trials whose cluster did not come back, in the table, below it and in the terminal, after a read back', () => {
    const run = runWithTimelines();
    run.cells[1].unavailableTrials = [
      { index: 3, fault: 'power-cut', targets: [1, 2, 3], cutAtSec: 13.25, acked: 133_360, ackedBeforeCut: 133_000, recoveryTimeoutMs: 60_000, failed: 'the cluster did not come back within the recovery timeout (60 s): no leader for stream', evidence: '/r/rep-4' },
    ];
    const back = asRunResult(JSON.parse(JSON.stringify(run)), 'test');
    expect(back.cells[1].unavailableTrials).toEqual(run.cells[1].unavailableTrials);
    const html = lossDistributionTable(back);
    const row = html.split('<tr>').find((r) => r.includes('vm fdatasync acks=1'))!;
    expect(row).toContain('+ 1 unavailable');
    expect(html).toContain('Unavailable after the fault');
    expect(html).toContain('trial 4</b>: UNAVAILABLE after the power-cut of broker 1, 2, 3 at 13.25 s');
    expect(html).toContain('133,360 acknowledged records (133,000 before the fault) could not be read back');
    const terminal = trialSummary(back);
    expect(terminal).toMatch(/^vm fdatasync acks=1 .* 0 +1$/m);
    expect(terminal).toContain('vm fdatasync acks=1 trial 4: UNAVAILABLE after the power-cut of broker 1, 2, 3 at 13.25 s: the cluster did not come back');
    expect(terminal).toContain('evidence in /r/rep-4');
  });

  it('leaves a run without faults without the section extras', () => {
    const html = renderRunReport(processRun());
    expect(html).not.toContain('loss-distribution-table');
    expect(html).not.toContain('chart-loss-window');
  });
});
