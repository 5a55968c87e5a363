// Recovery side by side: medians over the trials that restarted a broker, and each target's
// restart over durolab's in the cell with the same other params; the terminal table and the
// report section carry the same rows.
import { describe, expect, it } from 'vitest';
import type { Trial } from './types.ts';
import { makeRun } from '../report/test-fixtures.ts';
import { recoveryCompareRows, recoveryCompareSummary } from './recovery-compare.ts';
import { recoveryTable } from '../report/recovery-section.ts';

const trial = (index: number, restartMs: number, logMs: number, suspect = false): Trial => ({
  index,
  ledger: { acked: 1000, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0 },
  ...(suspect ? { suspect: true } : {}),
  fault: {
    kind: 'power-cut',
    targets: [1],
    atMs: 2000,
    ackedBeforeCut: 1000,
    recovery: [{ broker: 1, durationMs: logMs, bytesTruncated: 0, batchesTruncated: 0, restartMs }],
    recoverySteps: { restartMs, electionMs: 5, catchUpMs: 10, isrMs: 1 },
  },
});

function run() {
  const latency = { medianUs: 900, sigma: 0.5, count: 1000 };
  return makeRun([
    { id: 'target=durolab,preload=1GiB', params: { target: 'durolab', preload: '1GiB' }, recordsPerSec: 300, latency, trials: [trial(0, 800, 10), trial(1, 1200, 30), trial(2, 90_000, 9, true)] },
    { id: 'target=kafka,preload=1GiB', params: { target: 'kafka', preload: '1GiB' }, recordsPerSec: 300, latency, trials: [trial(0, 4000, 3000), trial(1, 6000, 3200)] },
    { id: 'target=kafka,preload=4GiB', params: { target: 'kafka', preload: '4GiB' }, recordsPerSec: 300, latency, trials: [trial(0, 17_000, 15_000)] },
  ]);
}

describe('recovery side by side', () => {
  it('gives medians over the unsuspect trials and the restart over the same params on durolab', () => {
    const rows = recoveryCompareRows(run());
    expect(rows.map((r) => [r.cell, r.target, r.trials, r.restartMs, r.logRecoveryMs, r.vsDurolab])).toEqual([
      // The suspect trial (90 s) is left out.
      ['target=durolab,preload=1GiB', 'durolab', 2, 1000, 20, null],
      ['target=kafka,preload=1GiB', 'kafka', 2, 5000, 3100, 5],
      // No durolab cell with preload 4GiB: no ratio.
      ['target=kafka,preload=4GiB', 'kafka', 1, 17_000, 15_000, null],
    ]);
  });

  it('prints the table in the terminal and the report, and nothing without a restart', () => {
    const text = recoveryCompareSummary(run());
    expect(text).toMatch(/^recovery \(medians over the trials/);
    expect(text).toMatch(/target=kafka,preload=1GiB\s+2\s+\d+\s+\d+\s+5\.00\s+3\.10\s+5\.00x/);
    const html = recoveryTable(run());
    expect(html).toContain('<h3 id="recovery-side-by-side">');
    expect(html).toContain('<td class="num" data-v="5">5.00×</td>');
    const plain = makeRun([{ id: 'io=buffered', params: { io: 'buffered' }, recordsPerSec: 300, latency: { medianUs: 900, sigma: 0.5, count: 1000 } }]);
    expect(recoveryCompareSummary(plain)).toBe('');
    expect(recoveryTable(plain)).toBe('');
  });
});
