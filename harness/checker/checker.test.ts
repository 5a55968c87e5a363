import { describe, expect, it } from 'vitest';
import { AckLedger } from '../workload/ledger.ts';
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
    expect(r).toMatchObject({ acked: 8, ackedLost: 0, duplicates: 0, outOfOrder: 0, corrupt: 0, offsetChanged: 0, unackedPresent: 0 });
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

  it('counts duplicates, moved offsets and corrupt batches', () => {
    const ledger = ledgerWith([
      { offset: 0, sentMs: 1, ackMs: 2 },
      { offset: 4, sentMs: 3, ackMs: 4 },
    ]);
    const r = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 0), served(8, 4)], corrupt: 1 }]);
    expect(r.duplicates).toBe(4);
    expect(r.offsetChanged).toBe(1);
    expect(r.corrupt).toBe(1);
    expect(r.ackedLost).toBe(0);
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
