// Recovery side by side: medians over the trials that restarted a broker, and each target's
// restart over durolab's in the cell with the same other params; the terminal table and the
// report section carry the same rows.
import { describe, expect, it } from 'vitest';
import type { Trial } from '../results/types.ts';
import { makeRun } from '../report/test-fixtures.ts';
import { recoveryCompareRows, recoveryCompareSummary } from './recovery-compare.ts';
import { recoveryTable } from '../report/recovery-section.ts';
import { lossTable } from '../report/tables.ts';

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

  it("shows '-' for a log recovery no broker timed and a log no broker read, never 0", () => {
    const r = run();
    for (const t of r.cells[2]!.trials!) t.fault!.recovery = [{ broker: 1, restartMs: t.fault!.recovery[0]!.restartMs }];
    const { bytes: _unread, ...broker } = r.cells[2]!.broker;
    r.cells[2]!.broker = broker;
    const row = recoveryCompareRows(r)[2]!;
    expect([row.logRecoveryMs, row.logBytes]).toEqual([null, null]);
    const line = recoveryCompareSummary(r).split('\n').find((l) => l.startsWith('target=kafka,preload=4GiB'))!;
    expect(line.split(/\s{2,}/)).toEqual(['target=kafka,preload=4GiB', '1', '-', '1', '17.00', '-', '-']);
    const html = recoveryTable(r);
    const side = html.slice(html.indexOf('id="recovery-compare-table"'));
    const tr = side.slice(side.indexOf('<th scope="row" data-v="target=kafka,preload=4GiB">'));
    // trials, log (not read), segments, restart, log recovery (not timed).
    expect(tr.slice(0, tr.indexOf('</tr>'))).toContain('<td class="num" data-v="1">1</td><td class="num" data-v="">—</td><td class="num" data-v="1">1</td><td class="num" data-v="17000">17 s</td><td class="num" data-v="">—</td>');
  });

  it("says in the loss table's recovery detail what a broker did not time or measure, and sums only what was measured", () => {
    const r = run();
    r.cells[2]!.trials![0]!.fault!.recovery = [
      { broker: 1, bytesTruncated: 2048, restartMs: 17_000 },
      { broker: 2, durationMs: 15_000, restartMs: 16_000 },
    ];
    const html = lossTable(r);
    expect(html).toContain('title="broker 1: time not reported, 2.0 KiB; broker 2: 15 s, truncation not measured"');
    // The trial's recovery column: broker 2's time; its truncated column: broker 1's bytes only.
    expect(html).toMatch(/data-v="15000" title="broker 1: time not reported[^"]*">15 s<\/td><td class="num" data-v="2048">2.0 KiB<\/td>/);
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
