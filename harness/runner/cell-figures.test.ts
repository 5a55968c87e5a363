// A cell's throughput is the median over the repetitions that finished their load: a cell where
// none did (interrupted before any load finished, skipped) carries no throughput at all, never a
// measured-looking 0, and run.json files that wrote one still load.
import { describe, expect, it } from 'vitest';
import { CellFigures } from './cell-figures.ts';
import { skippedCell } from './cell-result.ts';
import { asRunResult } from '../report/load-runs.ts';
import { makeRun } from '../report/test-fixtures.ts';

const cell = { id: 'io=direct', label: 'io=direct', params: { io: 'direct' } };

describe('the throughput of a cell with no finished repetition', () => {
  it('is absent from an interrupted cell whose first load never finished, and from a skipped one', () => {
    const interrupted = new CellFigures(false).result(cell, true, false);
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted).not.toHaveProperty('throughput');
    expect(interrupted.latencyUs.count).toBe(0);
    const skipped = skippedCell('io=direct', { io: 'direct' }, 'skipped', 'host sysctls not allowed');
    expect(skipped).not.toHaveProperty('throughput');
    // Nothing was read from any broker either: not even a 0 of bytes.
    expect(skipped.broker).toEqual({});
  });

  it('reads both shapes of run.json: a cell without a throughput, and an older one with 0s', () => {
    const run = makeRun([{ id: 'a', params: { io: 'direct' }, recordsPerSec: 100, latency: { medianUs: 500, sigma: 0.5, count: 100 } }]);
    const { throughput: _written, ...without } = run.cells[0]!;
    const fresh = asRunResult(JSON.parse(JSON.stringify({ ...run, cells: [{ ...without, status: 'interrupted' }] })), 'fresh run.json');
    expect(fresh.cells[0]!.throughput).toBeUndefined();
    const older = asRunResult(JSON.parse(JSON.stringify({ ...run, cells: [{ ...run.cells[0], status: 'skipped', throughput: { recordsPerSec: 0, mbPerSec: 0, requestsPerSec: 0 } }] })), 'older run.json');
    expect(older.cells[0]!.throughput).toEqual({ recordsPerSec: 0, mbPerSec: 0, requestsPerSec: 0 });
  });
});
