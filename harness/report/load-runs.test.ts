// Reading older run.json files: a figure they wrote as 0 without measuring it is read as not
// measured. The kafka driver's produce answers carry no HW, and before the leaders' HW was read
// just before the fault its trials wrote hwWentBack 0 for an HW never known; every fault trial
// checked since writes ackedWithoutOffset (the same change) or hwNotMeasured, and that is how the
// file tells the two apart.
import { describe, expect, it } from 'vitest';
import { asRunResult } from './load-runs.ts';
import { expectationState } from '../results/verdict.ts';

/** A minimal run.json of one process-kill cell as an older durolab wrote it (the kafka driver, before the HW was read before the fault). */
function olderRunJson(driver: string, over: { trialLedger?: Record<string, number>; fault?: Record<string, number> } = {}) {
  const latency = { p50: 900, p90: 1500, p99: 3000, p999: 5000, p9999: 6000, max: 7000, count: 4000 };
  const ledger = { acked: 4000, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, unackedPresent: 0, offsetChanged: 0, inconsistentOffsets: 0, replicasDisagree: 0, hwWentBack: 0 };
  const trial = (index: number) => ({
    index,
    ledger: { ...ledger, ...over.trialLedger },
    fault: { kind: 'process-kill', targets: [1], atMs: 3000, ackedBeforeCut: 4000, recovery: [{ broker: 1, durationMs: 2500, bytesTruncated: 0, restartMs: 4100 }], hwBeforeCut: 0, hwAfterRecovery: 0, ...over.fault },
  });
  return {
    schemaVersion: 1,
    scenario: { name: 'process-kill', file: 'scenarios/process-kill.yaml', question: 'q', raw: {} },
    runId: '20261120-101010-abcd',
    status: 'complete',
    startedAt: '2026-11-20T10:10:10.000Z',
    endedAt: '2026-11-20T10:20:10.000Z',
    gitCommit: null,
    environment: { hostname: 'h', cpu: 'c', cores: 2, memoryBytes: 1, kernel: 'k', os: 'o', node: 'v24', dataDir: '/d', filesystem: 'ext4', device: 'vda' },
    settings: { acks: 'all', workload: { driver, durationSec: 5 }, cluster: { brokers: 3 } },
    target: 'kafka',
    cells: [
      {
        id: 'acks=all',
        params: { acks: 'all' },
        status: 'ok',
        throughput: { recordsPerSec: 800, mbPerSec: 0.8, requestsPerSec: 100 },
        latencyUs: latency,
        errors: {},
        ledger: { ...ledger, acked: 8000, ...over.trialLedger },
        broker: { bytes: 0 },
        histograms: { latencyUs: '' },
        timeseries: [],
        trials: [trial(0), trial(1)],
      },
    ],
    expectations: [
      { expression: 'ledger.hwWentBack == 0 in every trial', passed: true, state: 'pass', detail: 'ledger.hwWentBack == 0 in every trial: passed (acks=all: trials 0, 0)' },
      { expression: 'ackedLost == 0', passed: true, state: 'pass', detail: 'ackedLost == 0: passed (cells acks=all: 0)' },
    ],
  };
}

describe('an older run.json of the kafka driver', () => {
  it("reads its silent hwWentBack 0 as not measured, in the trials, the cell and the expectation on it", () => {
    const run = asRunResult(olderRunJson('kafka'), 'older run.json');
    const [cell] = run.cells;
    for (const t of cell!.trials!) {
      expect(t.ledger.hwWentBack).toBeUndefined();
      expect(t.ledger.hwNotMeasured).toBe(1);
      // The HW before and after were as unmeasured as the difference.
      expect(t.fault).not.toHaveProperty('hwBeforeCut');
      expect(t.fault).not.toHaveProperty('hwAfterRecovery');
      expect(t.fault!.hwNotMeasuredWhy).toMatch(/written before its driver read the leaders' HW just before the fault/);
    }
    expect(cell!.ledger.hwWentBack).toBeUndefined();
    expect(cell!.ledger.hwNotMeasured).toBe(2);
    // What was measured stays as written.
    expect(cell!.ledger).toMatchObject({ acked: 8000, ackedLost: 0, offsetChanged: 0 });
    const [hw, lost] = run.expectations;
    expect(expectationState(hw!)).toBe('not-evaluated');
    expect(hw!.passed).toBe(false);
    expect(hw!.reason).toMatch(/HW going back not measured/);
    expect(expectationState(lost!)).toBe('pass');
  });

  it('keeps a 0 the file shows was measured: a kafka run written since (ackedWithoutOffset), an HW read before the fault, or the http driver (its produce answers carry the HW)', () => {
    const since = asRunResult(olderRunJson('kafka', { trialLedger: { ackedWithoutOffset: 0 } }), 'newer run.json');
    expect(since.cells[0]!.trials!.map((t) => t.ledger.hwWentBack)).toEqual([0, 0]);
    expect(since.cells[0]!.ledger.hwWentBack).toBe(0);
    expect(expectationState(since.expectations[0]!)).toBe('pass');
    const read = asRunResult(olderRunJson('kafka', { fault: { hwBeforeCut: 3900, hwAfterRecovery: 3950 } }), 'run.json with an HW read');
    expect(read.cells[0]!.trials!.map((t) => t.ledger.hwWentBack)).toEqual([0, 0]);
    const http = asRunResult(olderRunJson('http', { fault: { hwBeforeCut: 3900, hwAfterRecovery: 3950 } }), 'http run.json');
    expect(http.cells[0]!.trials!.map((t) => t.ledger.hwWentBack)).toEqual([0, 0]);
    expect(expectationState(http.expectations[0]!)).toBe('pass');
  });

  it("goes by the cell's own driver where a driver axis gives one", () => {
    const json = olderRunJson('http');
    json.cells[0]!.params = { acks: 'all', driver: 'kafka' } as typeof json.cells[0]['params'];
    const run = asRunResult(json, 'driver axis run.json');
    expect(run.cells[0]!.trials!.every((t) => t.ledger.hwWentBack === undefined)).toBe(true);
  });
});
