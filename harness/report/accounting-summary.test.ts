// The accounting lines of the terminal summary and the report's accounting table: replica
// agreement from bytes with the first divergent offset, brokers' flushes beside the device's,
// refusals after a cut on their own, pending vs never-sent requests.
import { describe, expect, it } from 'vitest';
import { makeRun } from './test-fixtures.ts';
import { accountingTable } from './accounting-table.ts';
import { summaryTable } from './summary-table.ts';
import { accountingLines, afterFaultText, storageErrorsText } from './accounting-summary.ts';
import { clockTime } from '../results/storage-failure-text.ts';

function run() {
  const r = makeRun([
    { id: 'c1', params: { acks: 'all' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } },
    { id: 'c2', params: { acks: 1 }, recordsPerSec: 40_000, latency: { medianUs: 400, sigma: 0.5, count: 2000 } },
  ]);
  const [a, b] = r.cells;
  a.replicas = { compared: 2332, replicas: 2, agreeUpTo: 18_656, diverged: 0, short: 0 };
  a.broker = { ...a.broker, flushes: 0, takenAt: 'after-load', deviceFlushes: 3156, deviceFlushesScope: 'host disk (vda)' };
  b.replicas = { compared: 900, replicas: 2, agreeUpTo: 1200, firstDivergentOffset: 1200, diverged: 1, short: 0 };
  b.broker = { ...b.broker, flushes: 812, takenAt: 'before-fault', readBeforeFaultMs: 1240 };
  b.errors = { NOT_LEADER_OR_FOLLOWER: 3 };
  b.errorsAfterFault = { CLIENT_ECONNREFUSED: 21_400, CLIENT_ECONNRESET: 12 };
  b.trials = [{ index: 0, ledger: b.ledger, requests: { sent: 6834, acked: 273, failed: 3, pending: 8, neverSent: 6550, unconfirmed: 0 } }];
  return r;
}

describe('storage errors in the accounting line', () => {
  it("names each broker's first cause from its log, or says that no line named one", () => {
    const r = run();
    const [a, b] = r.cells;
    a.errors = { KAFKA_STORAGE_ERROR: 3019 };
    const at = Date.UTC(2026, 11, 5, 12, 3, 4, 512);
    a.trials = [
      {
        index: 0,
        ledger: a.ledger,
        fault: {
          kind: 'crash-states',
          targets: [1],
          atMs: 5000,
          ackedBeforeCut: 1,
          recovery: [],
          storageFailures: [
            { brokerId: 1, errno: 'ENOSPC', file: '/d/t-0/00000000000000000000.log', atMs: at, line: '' },
            { brokerId: 1, errno: null, file: '/d', atMs: at + 10, line: '' },
          ],
        },
      },
    ];
    expect(storageErrorsText(a)).toBe(`KAFKA_STORAGE_ERROR 3,019: broker 1's log dir is offline after ENOSPC on /d/t-0/00000000000000000000.log at ${clockTime(at)}`);
    b.errors = {};
    b.errorsAfterFault = { KAFKA_STORAGE_ERROR: 7 };
    expect(storageErrorsText(b)).toBe('KAFKA_STORAGE_ERROR 7: no broker log line names the cause');
    b.errorsAfterFault = {};
    expect(storageErrorsText(b)).toBe('');
    expect(accountingLines(r)[1]).toContain(': KAFKA_STORAGE_ERROR 3,019: broker 1');
  });
});

describe('accounting lines', () => {
  it('says per cell what the replicas, the flush counters, the fault errors and the requests were', () => {
    const lines = accountingLines(run());
    expect(lines[0]).toMatch(/^accounting/);
    expect(lines[1]).toContain('acks=all: replicas agree from bytes (2 replica copies, 2,332 batches compared, agreeing up to offset 18,656)');
    expect(lines[1]).toContain('flushes: brokers 0 (read after the load), device 3,156 (host disk (vda))');
    expect(lines[2]).toContain('REPLICAS DIVERGE from bytes: first divergent offset 1,200');
    expect(lines[2]).toContain('brokers 812 (read 1.2 s before the fault), device: no flush counter');
    expect(lines[2]).toContain('after the fault: 21,400 connection refusals, 12 other errors (CLIENT_ECONNRESET 12)');
    expect(lines[2]).toContain('requests: 273 acked, 3 failed, 8 pending (written, no answer), 6,550 never sent (no connection)');
    expect(summaryTable(run())).toContain(lines[2]);
  });

  it('names the brokers that gave no figures, since the sums are then of the others only', () => {
    const r = run();
    r.cells[1]!.broker = { ...r.cells[1]!.broker, notAnswered: [2, 3] };
    const lines = accountingLines(r);
    expect(lines[2]).toContain("brokers 812 (read 1.2 s before the fault), device: no flush counter; broker 2, 3 gave no figures (the brokers' sums are the others' only)");
    expect(lines[1]).not.toContain('gave no figures');
    expect(accountingTable(r)).toContain('broker 2, 3 gave no figures');
  });

  it('has nothing to say after a fault that left no errors, or without a fault', () => {
    expect(afterFaultText(undefined)).toBe('');
    expect(afterFaultText({})).toBe('');
    expect(afterFaultText({ CLIENT_ECONNREFUSED: 0 })).toBe('');
  });

  it('renders the same figures in the report table, the divergent cell marked', () => {
    const html = accountingTable(run());
    expect(html).toContain('class="bad" id="replicas-c2"');
    expect(html).toContain('first divergent offset 1,200');
    expect(html).toContain('21,400 connection refusals');
    expect(html).toContain('NOT_LEADER_OR_FOLLOWER 3');
    expect(html).toMatch(/<td class="num">8 \/ 6,550<\/td>/);
  });
});
