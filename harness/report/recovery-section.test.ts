import { describe, expect, it } from 'vitest';
import type { RunResult } from '../results/types.ts';
import { asRunResult } from './load-runs.ts';
import { recoveryTable } from './recovery-section.ts';
import { renderRunReport } from './run-page.ts';
import { powerCutRun, processRun } from './test-fixtures.ts';

/** powerCutRun with the recovery stages the fault runner records; one trial's ISR stayed short. */
function runWithStages(): RunResult {
  const run = structuredClone(powerCutRun());
  for (const [ci, c] of run.cells.entries()) {
    for (const t of c.trials ?? []) t.fault!.recoverySteps = { restartMs: 3000 + 1000 * t.index, electionMs: 200 * (ci + 1), catchUpMs: 100, isrMs: 50 };
  }
  run.cells[0].trials![2].fault!.recoverySteps = { restartMs: 5000, electionMs: 200, catchUpMs: 100, isrMs: null, isrShort: 'after 30 s: t-0: ISR [1, 2]' };
  return run;
}

describe('recovery section', () => {
  it('shows each stage min / median / max per cell, and an ISR left short with its reason', () => {
    const html = recoveryTable(runWithStages());
    const row = html.split('<tr>').find((r) => r.includes('vm buffered acks=1'))!;
    // restart 3, 4 and 5 s over the three trials
    expect(row).toContain('3 s / 4 s / 5 s');
    expect(row).toContain('3 of 3');
    expect(row).toContain('(short in 1)');
    expect(row).toContain('t-0: ISR [1, 2]');
    // back in service = restart + election + catch-up: 3.3, 4.3, 5.3 s
    expect(row).toContain('3.3 s / 4.3 s / 5.3 s');
    const other = html.split('<tr>').find((r) => r.includes('vm fdatasync acks=1'))!;
    expect(other).toContain('400 ms / 400 ms / 400 ms');
    expect(other).not.toContain('short in');
  });

  it('survives run.json validation into the rendered report, and is absent without stages', () => {
    const page = renderRunReport(asRunResult(JSON.parse(JSON.stringify(runWithStages())), 'run.json'));
    expect(page).toContain('id="recovery-table"');
    expect(recoveryTable(powerCutRun())).toBe('');
    expect(renderRunReport(processRun())).not.toContain('id="recovery-table"');
  });
});
