import { describe, expect, it } from 'vitest';
import { AckLedger } from '../history/ledger.ts';
import { checkLedger, countStreamOrderViolations } from './checker.ts';

describe("a producer connection's batches out of send order", () => {
  it('counts a batch served below one its stream sent earlier, per stream', () => {
    // Stream 0 sent offsets 0, 32, then a batch served at 16 (a retry behind later sends): 1.
    // Stream 1 interleaves with stream 0 but keeps its own order: 0.
    expect(
      countStreamOrderViolations([
        { offset: 0, stream: 0 },
        { offset: 48, stream: 1 },
        { offset: 32, stream: 0 },
        { offset: 64, stream: 1 },
        { offset: 16, stream: 0 },
      ]),
    ).toBe(1);
    expect(countStreamOrderViolations([{ offset: 16 }, { offset: 0 }])).toBe(0);
  });

  it('feeds outOfOrder when the ledger records the sending stream', () => {
    const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 7, partitions: [0] });
    const a = ledger.send(0, 1000, 0);
    const b = ledger.send(0, 1001, 0);
    // b landed at offset 0 and a, retried, at 2; both acknowledged after both were sent.
    ledger.ack(0, b, 0, 1010);
    ledger.ack(0, a, 2, 1020);
    const batch = (base: number, seq: number) => ({ baseOffset: base, lastOffset: base + 1, records: 2, producerId: 7, baseSequence: seq });
    const report = checkLedger(ledger, [{ partition: 0, batches: [batch(0, b), batch(2, a)], corrupt: 0 }]);
    expect(report.ackedLost).toBe(0);
    expect(report.outOfOrder).toBe(1);
    expect([...ledger.batches(0)].map((x) => x.stream)).toEqual([0, 0]);
  });
});

describe('mapLimit', () => {
  it('keeps at most `limit` calls in flight and the results in input order; a rejection rejects', async () => {
    const { mapLimit } = await import('../common/map-limit.ts');
    let inFlight = 0;
    let most = 0;
    const out = await mapLimit([...Array(50).keys()], 4, async (x) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, (x * 7) % 5));
      inFlight--;
      return x * 2;
    });
    expect(out).toEqual([...Array(50).keys()].map((x) => x * 2));
    expect(most).toBe(4);
    await expect(mapLimit([1, 2, 3], 2, async (x) => { if (x === 2) throw new Error('two'); return x; })).rejects.toThrow('two');
    // An aborted signal starts nothing more.
    const stop = new AbortController();
    let calls = 0;
    await expect(mapLimit([...Array(20).keys()], 2, async () => { if (++calls === 3) stop.abort(); await new Promise((r) => setTimeout(r, 5)); }, stop.signal)).rejects.toThrow(/interrupted after \d+ of 20/);
    expect(calls).toBeLessThanOrEqual(4);
  });
});
