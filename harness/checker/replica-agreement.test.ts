// run.json's replica agreement from what was compared: the offset every replica agrees below is
// a figure only where some follower's stored bytes were read; with no partition compared, or
// none of a partition's followers read, it is absent (not measured), never 0 nor the HW.
import { describe, expect, it } from 'vitest';
import { addReplicaAgreements, replicaAgreementOf, type PartitionBytes } from './replica-bytes.ts';
import { accountingLines, replicasText } from '../report/accounting-summary.ts';
import { makeRun } from '../report/test-fixtures.ts';

const part = (over: Partial<PartitionBytes>): PartitionBytes => ({
  partition: 0,
  leader: 1,
  upTo: 500,
  followers: [2, 3],
  compared: 40,
  agreeUpTo: 500,
  firstDivergentOffset: null,
  divergent: [],
  short: [],
  leaderCorrupt: 0,
  ...over,
});

describe('agreeUpTo', () => {
  it('is absent when no partition was compared', () => {
    const none = replicaAgreementOf([]);
    expect(none).toEqual({ compared: 0, replicas: 0, diverged: 0, short: 0, partitions: [] });
    expect(none).not.toHaveProperty('agreeUpTo');
  });

  it("is absent for a partition none of whose followers was read, and leaves the trial's to the partitions compared", () => {
    const unread = part({ partition: 1, upTo: 900, followers: [], compared: 0, agreeUpTo: 900 });
    const onlyUnread = replicaAgreementOf([unread]);
    expect(onlyUnread).not.toHaveProperty('agreeUpTo');
    expect(onlyUnread.partitions![0]).not.toHaveProperty('agreeUpTo');
    const both = replicaAgreementOf([part({ agreeUpTo: 480, short: [{ brokerId: 3, endOffset: 480 }] }), unread]);
    expect(both.agreeUpTo).toBe(480);
    expect(both.partitions!.map((p) => p.agreeUpTo)).toEqual([480, undefined]);
  });

  it("a cell's is the lowest of its trials that measured one", () => {
    const measured = replicaAgreementOf([part({ agreeUpTo: 300 })]);
    const unmeasured = replicaAgreementOf([]);
    expect(addReplicaAgreements(addReplicaAgreements(undefined, unmeasured), measured)?.agreeUpTo).toBe(300);
    expect(addReplicaAgreements(addReplicaAgreements(undefined, measured), unmeasured)?.agreeUpTo).toBe(300);
    expect(addReplicaAgreements(unmeasured, replicaAgreementOf([]))).not.toHaveProperty('agreeUpTo');
  });

  it('is said as not compared in the accounting line, not as agreeing up to offset 0', () => {
    const run = makeRun([{ id: 'c1', params: { acks: 'all' }, recordsPerSec: 1000, latency: { medianUs: 500, sigma: 0.5, count: 100 } }]);
    const { partitions: _detail, ...totals } = replicaAgreementOf([]);
    run.cells[0]!.replicas = totals;
    expect(replicasText(run.cells[0]!)).toBe("replicas not compared from bytes: no follower's stored bytes were read");
    expect(accountingLines(run)[1]).not.toContain('agreeing up to offset');
  });
});
