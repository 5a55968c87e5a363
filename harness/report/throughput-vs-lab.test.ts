// records/s of each system over durolab's broker under the same settings: cells of a target axis
// paired without their target (and a driver that only follows the target).
import { describe, expect, it } from 'vitest';
import { makeRun } from '../report/test-fixtures.ts';
import { throughputVsLabRows, throughputVsLabSummary } from './throughput-vs-lab.ts';

const latency = { medianUs: 1000, sigma: 0.5, count: 1000 };
const cell = (target: string, driver: string, flush: string, recordsPerSec: number, extra: Record<string, string> = {}) => ({
  id: `target=${target},driver=${driver},flush=${flush}`,
  params: { target, driver, flush, ...extra },
  recordsPerSec,
  latency,
});

describe('throughput against the lab', () => {
  it('pairs each system with durolab under the same settings, across drivers that only follow the target', () => {
    const run = makeRun([cell('durolab', 'kafka', 'never', 14_000), cell('durolab', 'kafka', 'per-batch', 2_000), cell('kafka', 'kafka', 'never', 1_400), cell('nats', 'nats', 'per-batch', 200)]);
    expect(throughputVsLabRows(run).map((r) => [r.system, r.vsLab === null ? null : Number(r.vsLab.toFixed(2))])).toEqual([
      ['durolab', null],
      ['durolab', null],
      ['kafka', 0.1],
      ['nats', 0.1],
    ]);
    expect(throughputVsLabSummary(run)).toMatch(/target=nats,driver=nats,flush=per-batch +nats +200 +0\.10x/);
  });

  it('has nothing to say for one system, or for a frontier (its own answer)', () => {
    expect(throughputVsLabSummary(makeRun([cell('durolab', 'kafka', 'never', 14_000)]))).toBe('');
    expect(throughputVsLabRows(makeRun([cell('durolab', 'kafka', 'never', 9, { measure: 'loss' }), cell('kafka', 'kafka', 'never', 3, { measure: 'loss' })]))).toEqual([]);
  });
});
