// The bad-blocks classification from run.json alone: worst first, read errors apart from byte
// changes, a failed cell as crashed, unavailable trials counted, and the report's table and
// terminal rows drawn from the same rows. (The real trials behind these figures run in
// harness/faults/file-faults/file-faults.test.ts; this pins the rule on hand-made trials.)
import { describe, expect, it } from 'vitest';
import type { FileFaultRecord, Trial } from './types.ts';
import { fileFaultCells, fileFaultRows, trialFileOutcome } from './file-fault-outcomes.ts';
import { fileFaultTable } from '../report/file-fault-section.ts';
import { processRun } from '../report/test-fixtures.ts';

const change = { broker: 1, file: 't-0/00000000000000000000.log', offset: 100, length: 64, sizeBefore: 1000, sizeAfter: 1000, oldSha256: 'a'.repeat(64), newSha256: 'b'.repeat(64), how: 'bit-flip' as const };

function trial(ff: Partial<FileFaultRecord>, ledger: Partial<Trial['ledger']> = {}): Trial {
  return {
    index: 0,
    ledger: { acked: 1000, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, ...ledger },
    fault: {
      kind: 'corrupt-file',
      targets: [1],
      atMs: 3000,
      ackedBeforeCut: 900,
      recovery: [],
      fileFault: { files: 'newest-segment', phase: 'stopped', stop: 'kill', seed: 1, changes: [change], matched: { '1': [change.file] }, unchanged: [], ...ff },
    },
  };
}

describe('bad-block outcomes', () => {
  it('classifies worst first: lost, corrupt, diverged, then what the read-back says, and read errors by their hits', () => {
    expect(trialFileOutcome(trial({}, { ackedLost: 3, corrupt: 2 }))).toBe('lost');
    expect(trialFileOutcome(trial({}, { corrupt: 2 }))).toBe('served corrupt');
    expect(trialFileOutcome(trial({}, { replicasDiverged: 1 }))).toBe('replicas diverged');
    expect(trialFileOutcome(trial({ afterCheck: [{ broker: 1, file: change.file, offset: 100, state: 'as-changed' }] }))).toBe('nothing noticed');
    expect(trialFileOutcome(trial({ afterCheck: [{ broker: 1, file: change.file, offset: 100, state: 'rewritten' }] }))).toBe('repaired');
    expect(trialFileOutcome(trial({ changes: [], unchanged: [1] }))).toBe('did not fire');
    const reads = { changes: [], readErrors: [{ broker: 1, file: change.file, fileOffset: 0, deviceFrom: 4096, deviceTo: 8192, mode: 'eio' as const }] };
    expect(trialFileOutcome(trial({ ...reads, readHits: { '1': 4 } }))).toBe('handled');
    expect(trialFileOutcome(trial({ ...reads, readHits: { '1': 0 } }))).toBe('never read');
  });

  it('a row per cell: a failed cell is crashed, unavailable trials count; the report table and terminal cells agree', () => {
    const run = processRun();
    run.cells[0]!.trials = [trial({ afterCheck: [{ broker: 1, file: change.file, offset: 100, state: 'rewritten' }] })];
    run.cells[0]!.unavailableTrials = [{ index: 1, fault: 'corrupt-file', targets: [1], cutAtSec: 3, acked: 10, ackedBeforeCut: 9, recoveryTimeoutMs: 30_000, failed: 'no leader', evidence: '/x' }];
    run.cells[1]!.status = 'failed';
    run.cells[1]!.note = 'rep 2: recovery or check after the fault failed (broker 1 could not be started)';
    run.cells[1]!.trials = [trial({}, { ackedLost: 5 })];
    const rows = fileFaultRows(run);
    expect(rows.map((r) => [r.cell, r.worst, r.outcomes])).toEqual([
      [run.cells[0]!.id, 'unavailable', ['repaired', 'unavailable']],
      [run.cells[1]!.id, 'lost', ['lost', 'crashed']],
      ...rows.slice(2).map((r) => [r.cell, r.worst, r.outcomes]),
    ]);
    expect(rows[1]!.detail).toBe('rep 2: recovery or check after the fault failed (broker 1 could not be started)');
    expect(fileFaultCells(rows[0]!)).toEqual([run.cells[0]!.id, 'process', 'corrupt-file', 'newest-segment', 'unavailable', '1 unavailable, 1 repaired', '0 / 1,000']);
    const html = fileFaultTable(run);
    expect(html).toContain('<h3 id="bad-blocks">What each system did about the bad blocks</h3>');
    expect(html).toContain(`${run.cells[0]!.id} trial 1: broker 1 t-0/00000000000000000000.log @100 +64 bit-flip (sha256 aaaaaaaaaaaa → bbbbbbbbbbbb); after recovery t-0/00000000000000000000.log@100: rewritten`);
    expect(fileFaultTable(processRun())).toBe('');
  });
});
