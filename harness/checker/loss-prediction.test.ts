// The settings' loss window on hand-made ledgers: each rule (replication, flush per batch,
// every N messages, every T ms, O_DIRECT, no flush, a kill, a move) gives the records at risk,
// and a lost record outside them is counted and named.
import { describe, expect, it } from 'vitest';
import type { LedgerBatch } from '../history/ledger.ts';
import type { LostBatch } from './checker.ts';
import { beyondPredictionText, journalCommitMsOf, predictLoss, type LossPredictionInput } from './loss-prediction.ts';

const CUT = 100_000;
/** 100 batches of 10 records, one every 100 ms up to the cut: batch i acknowledged at CUT - (99 - i) * 100, offsets 10 i .. 10 i + 9. */
const batches: LedgerBatch[] = Array.from({ length: 100 }, (_, i) => ({
  partition: 0,
  producerId: 1,
  baseSequence: i * 10,
  records: 10,
  sentMs: CUT - (99 - i) * 100 - 5,
  status: 'acked',
  baseOffset: i * 10,
  ackMs: CUT - (99 - i) * 100,
  error: null,
}));
const lostOf = (from: number): LostBatch[] => batches.slice(from).map((b) => ({ partition: 0, baseSequence: b.baseSequence, records: 10, ackedOffset: b.baseOffset, ackMs: b.ackMs }));

function input(over: Partial<LossPredictionInput> = {}): LossPredictionInput {
  return {
    faultKind: 'power-cut',
    victims: [1, 2, 3],
    losesPageCache: true,
    leaders: new Map([[0, 1]]),
    acks: 'all',
    minInsyncReplicas: 2,
    replicationFactor: 3,
    flush: { kind: 'never' },
    io: 'buffered',
    replicaLagTimeMaxMs: 30_000,
    dirtyExpireMs: 30_000,
    dirtyWritebackMs: 5_000,
    journalCommitMs: 5_000,
    volatileCache: false,
    batches,
    cutMs: CUT,
    lost: [],
    ...over,
  };
}

describe('loss prediction', () => {
  it('a rack cut without a flush puts the writeback window at risk; a flush per batch or O_DSYNC nothing', () => {
    // 40 s window: every batch (the oldest was acknowledged 9.9 s before the cut); 3 s: the 31 newest.
    expect(predictLoss(input())).toMatchObject({ atRisk: 1000, beyond: 0 });
    expect(predictLoss(input({ dirtyExpireMs: 2_000, dirtyWritebackMs: 500, journalCommitMs: 500 }))).toMatchObject({ atRisk: 310 });
    expect(predictLoss(input({ flush: { kind: 'per-batch' } }))).toMatchObject({ atRisk: 0, rule: 'nothing acknowledged is at risk' });
    expect(predictLoss(input({ io: 'dsync' })).atRisk).toBe(0);
  });

  it('every N messages bounds the unflushed tail by offset; every T ms and O_DIRECT by time', () => {
    expect(predictLoss(input({ flush: { kind: 'messages', every: 25 } })).atRisk).toBe(25);
    // 1.1 * 1000 + 500 = 1.6 s: the 17 newest batches (acknowledged 0 .. 1.6 s before the cut).
    expect(predictLoss(input({ flush: { kind: 'ms', every: 1000 } })).atRisk).toBe(170);
    // commit 5 s + 1 s: 61 batches.
    expect(predictLoss(input({ io: 'direct' })).atRisk).toBe(610);
    // A volatile write cache keeps unflushed writes however old: without an fdatasync everything is at risk.
    expect(predictLoss(input({ io: 'direct', volatileCache: true })).atRisk).toBe(1000);
    expect(predictLoss(input({ volatileCache: true, flush: { kind: 'per-batch' } })).atRisk).toBe(0);
  });

  it('replication: a cut that spares a min-ISR replica puts nothing at risk with acks=all; acks=1 risks the leader-only window', () => {
    expect(predictLoss(input({ victims: [1] })).atRisk).toBe(0);
    // acks=1, the leader cut, followers spared: at risk where not surely replicated (30 s) and not surely flushed (40 s).
    expect(predictLoss(input({ acks: 1, victims: [1] }))).toMatchObject({ atRisk: 1000 });
    expect(predictLoss(input({ acks: 1, victims: [1], replicaLagTimeMaxMs: 500 })).atRisk).toBe(60);
    expect(predictLoss(input({ acks: 1, victims: [2] })).atRisk).toBe(0);
    expect(predictLoss(input({ acks: 0 })).atRisk).toBe(1000);
    // A rack cut under acks=1: even an fsync per append does not keep what the leader alone had
    // if another replica leads afterwards (Kafka lost 112 so in durability-frontier).
    expect(predictLoss(input({ acks: 1, flush: { kind: 'per-batch' }, replicaLagTimeMaxMs: 1000 })).atRisk).toBe(110);
    expect(predictLoss(input({ acks: 1, flush: { kind: 'per-batch' }, replicationFactor: 1, victims: [1] })).atRisk).toBe(0);
  });

  it('a kill or a planned move keeps every page cache: only acks=1 with the leader hit is at risk', () => {
    const kept = { losesPageCache: false, victims: [1] };
    expect(predictLoss(input({ ...kept })).atRisk).toBe(0);
    expect(predictLoss(input({ ...kept, acks: 1, replicaLagTimeMaxMs: 1000 })).atRisk).toBe(110);
    expect(predictLoss(input({ ...kept, acks: 1, replicationFactor: 1, victims: [1] })).atRisk).toBe(0);
    expect(predictLoss(input({ ...kept, acks: 1, victims: [3] })).atRisk).toBe(0);
  });

  it('counts and names what was lost outside the window: a lying drive under a flush per batch', () => {
    const lying = predictLoss(input({ flush: { kind: 'per-batch' }, lost: lostOf(90) }));
    expect(lying).toMatchObject({ atRisk: 0, beyond: 100 });
    expect(lying.beyondSample[0]).toEqual({ partition: 0, offset: 900, ackedBeforeFaultMs: 900 });
    expect(beyondPredictionText(lying)).toBe('lost 100 acknowledged records the settings say were safe (first: partition 0 offset 900, acknowledged 0.9 s before the fault): the disk lied or the engine has a bug');
    // Every 25 messages: losing the last 25 is allowed, the 5 records before them are not.
    const n = predictLoss(input({ flush: { kind: 'messages', every: 25 }, lost: lostOf(97) }));
    expect(n).toMatchObject({ atRisk: 25, beyond: 5 });
    const honest = predictLoss(input({ lost: lostOf(50) }));
    expect(honest.beyond).toBe(0);
    expect(beyondPredictionText(honest)).toBeNull();
  });

  it('reads the journal commit interval from the mount options', () => {
    expect(journalCommitMsOf('commit=5')).toBe(5000);
    expect(journalCommitMsOf('noatime,commit=30,data=ordered')).toBe(30_000);
    expect(journalCommitMsOf(undefined)).toBe(5000);
  });

  it('rule 3: acks=all acknowledged while the ISR was the hit leader alone is at risk, flushed or not; acks=1 after an isolation', () => {
    // The ISR shrinks to the leader (1) 2 s before a kill of that leader: the last 20 batches (200 records) were on it alone.
    const isr = [
      { atMs: 0, partition: 0, leader: 1, isr: [1, 2, 3] },
      { atMs: CUT - 1950, partition: 0, leader: 1, isr: [1] },
    ];
    const kill = input({ faultKind: 'process-kill', losesPageCache: false, victims: [1], isr });
    expect(predictLoss({ ...kill, isr: undefined })).toMatchObject({ atRisk: 0, rule: 'nothing acknowledged is at risk' });
    const p = predictLoss({ ...kill, lost: lostOf(85) });
    expect(p.atRisk).toBe(200);
    expect(p.beyond).toBe(0);
    expect(p.rule).toContain('acks=all with the ISR shrunk to the leader alone');
    // A flush per batch does not help: another replica leads without the records.
    expect(predictLoss({ ...kill, flush: { kind: 'per-batch' } }).atRisk).toBe(200);
    // Lost before the shrink: beyond the prediction.
    expect(predictLoss({ ...kill, lost: lostOf(70) }).beyond).toBe(100);
    // A follower hit instead of the leader: nothing.
    expect(predictLoss({ ...kill, victims: [2] }).atRisk).toBe(0);
    // A shrink to two replicas is not the leader alone.
    expect(predictLoss({ ...kill, isr: [isr[0]!, { ...isr[1]!, isr: [1, 2] }] }).atRisk).toBe(0);
    // With a rack cut's writeback window already covering them, nothing is counted twice.
    expect(predictLoss(input({ isr })).atRisk).toBe(1000);
    // acks=1 on a leader isolated 1 s before the fault: its last 10 batches; the kill's lag window covers them already, a move with rf 1 does not.
    const zombie = input({ acks: 1, faultKind: 'process-kill', losesPageCache: false, victims: [1], replicationFactor: 1, isolatedAtMs: CUT - 950 });
    expect(predictLoss(zombie)).toMatchObject({ atRisk: 100 });
    expect(predictLoss({ ...zombie, isolatedAtMs: undefined }).atRisk).toBe(0);
  });

  it('without eligible leader replicas, a power cut of the leader alone in the ISR puts its page cache at risk under acks=all and min ISR 2 (KIP-966)', () => {
    const isr = [
      { atMs: 0, partition: 0, leader: 1, isr: [1, 2, 3] },
      { atMs: CUT - 1950, partition: 0, leader: 1, isr: [1] },
    ];
    // Only the leader cut; what it acknowledged was on two replicas before the shrink, nothing after it (min ISR 2).
    const cut = input({ victims: [1], isr, batches: batches.slice(0, 80) });
    expect(predictLoss(cut).atRisk).toBe(0);
    expect(predictLoss({ ...cut, eligibleLeaderReplicas: true }).atRisk).toBe(0);
    // ELR off: the restarted leader leads again on what its disk kept; no flush: every record acknowledged in the last 40 s.
    const off = predictLoss({ ...cut, eligibleLeaderReplicas: false, lost: lostOf(0).slice(0, 80) });
    expect(off.atRisk).toBe(800);
    expect(off.beyond).toBe(0);
    // The ISR whole at the cut, or a follower cut instead: the other replicas lead, nothing at risk.
    expect(predictLoss({ ...cut, eligibleLeaderReplicas: false, isr: [isr[0]!] }).atRisk).toBe(0);
    expect(predictLoss({ ...cut, eligibleLeaderReplicas: false, victims: [2] }).atRisk).toBe(0);
  });
});
