import { describe, expect, it } from 'vitest';
import { AckLedger } from '../history/ledger.ts';
import { checkLedger, countRealTimeOrderViolations, type ServedBatch } from './checker.ts';

const PER = 4;

function ledgerWith(acks: Array<{ offset: number | null; sentMs: number; ackMs: number }>): AckLedger {
  const ledger = new AckLedger({ recordsPerBatch: PER, producerIdBase: 1000, partitions: [0] });
  for (const a of acks) {
    const seq = ledger.send(0, a.sentMs);
    if (a.offset !== null) ledger.ack(0, seq, a.offset, a.ackMs);
  }
  return ledger;
}

function served(baseOffset: number, baseSequence: number, records = PER): ServedBatch {
  return { baseOffset, lastOffset: baseOffset + records - 1, producerId: 1000, baseSequence, records };
}

describe('checkLedger', () => {
  it('counts nothing wrong when every acked record is served where it was acked', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 4)], corrupt: 0 }]);
    expect(r).toMatchObject({ acked: 8, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, offsetChanged: 0, inconsistentOffsets: 0, unackedPresent: 0 });
  });

  it("judges a batch acknowledged at non-consecutive offsets (a client split it) record by record", () => {
    const ledger = new AckLedger({ recordsPerBatch: PER, producerIdBase: 1000, partitions: [0] });
    const a = ledger.send(0, 1);
    const b = ledger.send(0, 2);
    // a's first two records at 0-1, b at 2-5, a's last two at 6-7; a consecutive list is not kept.
    ledger.ack(0, a, 0, 10, [0, 1, 6, 7]);
    ledger.ack(0, b, 2, 11, [2, 3, 4, 5]);
    expect([...ledger.batches(0)].map((x) => x.recordOffsets)).toEqual([[0, 1, 6, 7], undefined]);
    const log = { partition: 0, batches: [served(0, 0, 2), served(2, 4), { ...served(6, 2, 2) }], corrupt: 0 };
    expect(checkLedger(ledger, [log])).toMatchObject({ acked: 8, ackedLost: 0, duplicates: 0, offsetChanged: 0, inconsistentOffsets: 0 });
    // Read as if at baseOffset + i, records 2-3 of a would sit where b's records are.
    const flat = new AckLedger({ recordsPerBatch: PER, producerIdBase: 1000, partitions: [0] });
    flat.ack(0, flat.send(0, 1), 0, 10);
    flat.ack(0, flat.send(0, 2), 2, 11);
    expect(checkLedger(flat, [log]).inconsistentOffsets).toBeGreaterThan(0);
  });

  it('counts lost records, the loss window and the lost offsets', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1000, ackMs: 1001 },
      { offset: 4, sentMs: 1002, ackMs: 1500 },
      { offset: 8, sentMs: 1501, ackMs: 1800 },
    ]);
    // a torn tail: the second batch lost its last two records, the third is gone
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 4, 2)], corrupt: 0 }], { cutMs: 2500 });
    expect(r.acked).toBe(12);
    expect(r.ackedLost).toBe(6);
    expect(r.lost.map((l) => l.ackedOffset)).toEqual([4, 8]);
    expect(r.lossWindowSec).toBeCloseTo(1.0, 5);
  });

  it('allows unacknowledged records to be present but counts them', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: null, sentMs: 3, ackMs: -1 },
    ]);
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 4)], corrupt: 0 }]);
    expect(r.ackedLost).toBe(0);
    expect(r.unackedPresent).toBe(4);
  });

  it('counts duplicates, moved records, the offsets they took over, and corrupt batches', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    // batch 1 served twice (0 and 4); batch 2 pushed from 4 to 8
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 0), served(8, 4)], corrupt: 1 }]);
    expect(r.duplicates).toBe(4);
    // every record of batch 2 sits at another offset than acknowledged
    expect(r.offsetChanged).toBe(4);
    // offsets 4-7 were acknowledged for batch 2 and now hold batch 1's records
    expect(r.inconsistentOffsets).toBe(4);
    expect(r.inconsistentOffsetsSample).toEqual([4, 5, 6, 7].map((offset) => ({ partition: 0, offset })));
    expect(r.corrupt).toBe(1);
    expect(r.ackedLost).toBe(0);
  });

  it('counts two acknowledged batches that swapped offsets as inconsistent, not as lost', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    // batch 1 (seq 0-3, acked at 0) is served at 4; batch 2 (seq 4-7, acked at 4) at 0
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 4), served(4, 0)], corrupt: 0 }]);
    expect(r.ackedLost).toBe(0);
    expect(r.duplicates).toBe(0);
    expect(r.inconsistentOffsets).toBe(8);
    expect(r.offsetChanged).toBe(8);
    expect(r.perPartition[0]).toMatchObject({ acked: 8, ackedLost: 0, served: 8, inconsistentOffsets: 8 });
  });

  it('counts an acknowledged offset reused by another producer, and the acknowledged records as lost', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    const stranger: ServedBatch = { baseOffset: 4, lastOffset: 7, producerId: 77, baseSequence: 4, records: PER };
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), stranger], corrupt: 0 }]);
    // same sequence numbers, other producer: not ours, so batch 2 is lost and its offsets hold another record
    expect(r.ackedLost).toBe(4);
    expect(r.inconsistentOffsets).toBe(4);
    expect(r.offsetChanged).toBe(0);
  });

  it('counts an offset served with two different records over several reads, and not a batch read twice', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: null, sentMs: 3, ackMs: -1 },
      { offset: null, sentMs: 5, ackMs: -1 },
    ]);
    // read 1 serves batch 2 (unacknowledged) at 4; read 2 serves batch 3 there instead, and batch 1 again
    const reads = [served(0, 0), served(4, 4), served(0, 0), served(4, 8)];
    const r = checkLedger(ledger, [{ partition: 0, batches: reads, corrupt: 0 }]);
    expect(r.inconsistentOffsets).toBe(4);
    expect(r.duplicates).toBe(0);
    expect(r.unackedPresent).toBe(8);
    expect(r.offsetChanged).toBe(0);
  });

  it('looks at every record of a batch for offsetChanged', () => {
    const ledger = ledgerWith([{ offset: 0, sentMs: 1, ackMs: 2 }]);
    // the first two records sit where acknowledged, the last two one offset further
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0, 2), { ...served(3, 2, 2) }], corrupt: 0 }]);
    expect(r.offsetChanged).toBe(2);
    expect(r.ackedLost).toBe(0);
    // offset 3 was acknowledged for seq 3 and now holds seq 2
    expect(r.inconsistentOffsets).toBe(1);
  });

  it('counts records served at or above the high watermark as not served', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 4)], corrupt: 0, highWatermark: 6 }]);
    expect(r.ackedLost).toBe(2);
    expect(r.lost.map((l) => l.ackedOffset)).toEqual([4]);
  });

  it('flags a batch that landed below one acknowledged before it was sent', () => {
    expect(
      countRealTimeOrderViolations([
        { offset: 8, sentMs: 1, ackMs: 2 },
        { offset: 0, sentMs: 5, ackMs: 6 },
      ]),
    ).toBe(1);
    // concurrent requests may land in either order
    expect(
      countRealTimeOrderViolations([
        { offset: 8, sentMs: 1, ackMs: 6 },
        { offset: 0, sentMs: 2, ackMs: 5 },
      ]),
    ).toBe(0);
  });
});
