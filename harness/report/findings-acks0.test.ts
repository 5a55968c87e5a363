import { describe, expect, it } from 'vitest';
import { findings } from './findings.ts';
import type { RunResult } from '../results/types.ts';
import { processRun } from './test-fixtures.ts';

describe('findings for acks=0 cells', () => {
  it('say that nothing was promised rather than counting them as safe', () => {
    const run: RunResult = processRun();
    const cells = run.cells.filter((c) => c.status === 'ok');
    cells[1] = { ...cells[1], id: 'acks=0', ledger: { ...cells[1].ledger, acked: 0, ackedLost: 0, unackedPresent: 1234 } };
    const text = findings({ ...run, cells }).join('\n');
    expect(text).toContain('acks=0: nothing was acknowledged (the broker answered before appending), so no loss can be counted; acks=0: 1,234 records sent were found in the log.');
  });
});
