import { describe, expect, it } from 'vitest';
import { AckLedger } from '../history/ledger.ts';
import { ackFiguresAt, suspicions, trialSeed, type FiredFault } from './fault-trial.ts';
import type { RecoveryOutcome } from '../faults/recover.ts';
import { faultLine } from './trial-accounting.ts';
import type { Trial } from '../results/types.ts';

function ledger(acks: Array<number | null>): AckLedger {
  const l = new AckLedger({ recordsPerBatch: 4, producerIdBase: 10, partitions: [0] });
  acks.forEach((ackMs, i) => {
    const seq = l.send(0, 1000 + i);
    if (ackMs !== null) l.ack(0, seq, i * 4, ackMs);
  });
  return l;
}

const fired = (cut: Partial<FiredFault['cut']> = {}): FiredFault => ({
  plan: { fault: { kind: 'power-cut', target: 'all', when: { at: 2 } }, whenText: 'at 2 s', atMs: 2000, afterAcked: null },
  targets: [1],
  leaders: new Map([[0, 1]]),
  cut: { brokerIds: [1], atMs: 5000, ...cut },
});

const recovered: RecoveryOutcome = {
  recoveries: [{ brokerId: 1, restartMs: 900, partitions: [{ topic: 't', partition: 0, cleanShutdown: false, bytesTruncated: 0, batchesTruncated: 0, durationMs: 3 }] }],
  recoverMs: 1200,
  caughtUp: true,
  steps: { restartMs: 900, electionMs: 200, catchUpMs: 100, isrMs: 50 },
};

describe('fault trial figures', () => {
  it('counts records acknowledged up to the cut and the quiet time before it', () => {
    const l = ledger([4100, 4900, null, 5050]);
    expect(ackFiguresAt(l, 5000)).toEqual({ ackedBeforeCut: 8, lastAckBeforeCutMs: 100, storageErrorsAfterLastAck: 0 });
    expect(ackFiguresAt(ledger([null]), 5000)).toEqual({ ackedBeforeCut: 0, lastAckBeforeCutMs: null, storageErrorsAfterLastAck: 0 });
  });

  it('trusts a trial with live guests and a steady ack stream', () => {
    expect(suspicions(fired({ liveAtCut: { 1: true } }), { ackedBeforeCut: 8, lastAckBeforeCutMs: 40, storageErrorsAfterLastAck: 0 }, recovered)).toEqual([]);
  });

  it('a full write log on the fault disk is a suspicion; what a restart had to do (a node formatted again) is not', () => {
    const withNote: RecoveryOutcome = { ...recovered, recoveries: [{ ...recovered.recoveries[0], note: 'kafka node 1: its disk lost meta.properties at the cut: formatted again' }] };
    const acks = { ackedBeforeCut: 8, lastAckBeforeCutMs: 40, storageErrorsAfterLastAck: 0 };
    expect(suspicions(fired({ liveAtCut: { 1: true } }), acks, withNote)).toEqual([]);
    const full = fired({ liveAtCut: { 1: true }, diskAtCut: { 1: { route: 'host', writeLogFull: 'kafka node 1: write log /x/disk.disk.wlog: over its limit' } } });
    expect(suspicions(full, acks, withNote)).toEqual(['kafka node 1: write log /x/disk.disk.wlog: over its limit']);
  });

  it('flags a guest whose workload had stopped, a stalled load, a clean shutdown after a kill, lagging replicas', () => {
    const notes = suspicions(
      fired({ liveAtCut: { 1: false } }),
      { ackedBeforeCut: 8, lastAckBeforeCutMs: 1800, storageErrorsAfterLastAck: 0 },
      {
        ...recovered,
        recoveries: [{ ...recovered.recoveries[0], partitions: [{ ...recovered.recoveries[0].partitions[0], cleanShutdown: true }] }],
        caughtUp: false,
        lagging: 't-0: broker 2 LEO 40',
      },
    );
    expect(notes.join('\n')).toMatch(/workload of broker 1 had stopped before the cut/);
    expect(notes.join('\n')).toMatch(/no acknowledgement in the last 1\.8 s before the cut/);
    expect(notes.join('\n')).toMatch(/broker 1 reported a clean shutdown after the kill/);
    expect(notes.join('\n')).toMatch(/replicas had not caught up when checked: t-0: broker 2 LEO 40/);
  });

  it('a quiet ack stream after the log went offline (KAFKA_STORAGE_ERROR answers, fail-stop) is what is under test, not a stalled load', () => {
    const l = ledger([4100, null, null]);
    // Batches 1 and 2 were refused by an offline log after the last acknowledgement.
    l.fail(0, 4, 'KAFKA_STORAGE_ERROR', 4200);
    l.fail(0, 8, 'KAFKA_STORAGE_ERROR', 4300);
    const acks = ackFiguresAt(l, 9000);
    expect(acks).toEqual({ ackedBeforeCut: 4, lastAckBeforeCutMs: 4900, storageErrorsAfterLastAck: 2 });
    expect(suspicions(fired({ liveAtCut: { 1: true } }), acks, recovered)).toEqual([]);
    // Any other error, or none, leaves the stall suspect.
    const other = ledger([4100, null]);
    other.fail(0, 4, 'REQUEST_TIMED_OUT', 4200);
    expect(suspicions(fired({ liveAtCut: { 1: true } }), ackFiguresAt(other, 9000), recovered).join('\n')).toMatch(/no acknowledgement in the last 4\.9 s/);
  });

  it("uses the target's own notes about the cut, and does not expect acks under acks=0", () => {
    const notes = suspicions(fired({ liveAtCut: { 1: false }, notes: ['broker 1: the broker process was not running at the fault'] } as never), { ackedBeforeCut: 0, lastAckBeforeCutMs: null, storageErrorsAfterLastAck: 0 }, recovered, 0);
    expect(notes).toEqual(['broker 1: the broker process was not running at the fault']);
  });

  it('derives distinct, reproducible trial seeds from the base seed', () => {
    const seeds = new Set<number>();
    for (let c = 0; c < 7; c++) for (let r = 0; r < 10; r++) seeds.add(trialSeed(42, c, r));
    expect(seeds.size).toBe(70);
    expect(trialSeed(42, 3, 2)).toBe(trialSeed(42, 3, 2));
  });
});

describe("the progress line's log recovery", () => {
  it('says what a broker did not time or measure instead of printing 0 or undefined', () => {
    const trial = (recovery: NonNullable<Trial['fault']>['recovery']): Trial => ({
      index: 0,
      ledger: { acked: 10, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, hwWentBack: 0 },
      fault: { kind: 'process-kill', targets: [1, 2, 3], atMs: 2000, ackedBeforeCut: 10, recovery },
    });
    const line = faultLine(
      trial([
        { broker: 1, durationMs: 3100, bytesTruncated: 512, restartMs: 5000 },
        { broker: 2, bytesTruncated: 0, restartMs: 5100 },
        { broker: 3, durationMs: 2900, restartMs: 5200 },
      ]),
    );
    expect(line).toContain('broker 1 3100 ms, 512 B truncated; broker 2 log recovery time not reported, 0 B truncated; broker 3 2900 ms, truncation not measured');
    expect(line).not.toContain('undefined');
    expect(faultLine(trial([{ broker: 1, restartMs: 900 }]))).toContain('broker 1 log recovery not reported');
  });
});
