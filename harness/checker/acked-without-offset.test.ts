// A record acknowledged (acks >= 1) whose delivery report carried no offset — librdkafka reports
// a retry the broker found a duplicate of that way — stays acknowledged: it is counted
// (ackedWithoutOffset), must survive, and the checker finds it by its identity. Through the real
// ledger and checker, from the kafka driver's seams: librdkafka's per-record delivery reports
// (settleDeliveries) and the producer's mapping of a send's outcome into the ledger
// (ledgerSendOutcome). The end-to-end run through librdkafka is producer-idempotence.test.ts.
import { describe, expect, it } from 'vitest';
import { ACKED_WITHOUT_OFFSET, AckLedger, RECORD_NOT_ACKED, ackedRecordsOf } from '../history/ledger.ts';
import { checkLedger, ledgerSummaryOfReport, type ServedBatch } from './checker.ts';
import { settleDeliveries } from '../drivers/kafka/rdkafka-client.ts';
import { ledgerSendOutcome } from '../drivers/kafka/producer.ts';
import { addLedgers } from '../runner/run-cell.ts';
import { emptyLedger } from '../runner/cell-result.ts';

const PER = 4;
const PID = 1000;
const newLedger = () => new AckLedger({ recordsPerBatch: PER, producerIdBase: PID, partitions: [0] });
const served = (baseOffset: number, baseSequence: number, records = PER): ServedBatch => ({ baseOffset, lastOffset: baseOffset + records - 1, producerId: PID, baseSequence, records });
const errorName = (e: unknown) => (e as { name: string }).name;

describe('an acknowledgement without an offset', () => {
  it('librdkafka: reports with no offset acknowledge their records; all failed fails the batch; mixed reports keep each record\'s outcome', () => {
    expect(settleDeliveries([{ offset: 7 }, { offset: 8 }])).toEqual({ sent: { baseOffset: 7 } });
    // A duplicate-sequence retry: no offset (librdkafka leaves it invalid, < 0), no error.
    expect(settleDeliveries([{ offset: -1001 }, {}])).toEqual({ sent: { baseOffset: -1 } });
    const timeout = { name: 'CLIENT_TIMEOUT' };
    expect(settleDeliveries([{ error: timeout }, { error: { name: 'OTHER' } }])).toEqual({ error: timeout });
    expect(settleDeliveries([{ offset: 5 }, { offset: -1 }, { error: timeout }, { offset: 9 }])).toEqual({
      sent: { baseOffset: 5, recordOffsets: [5, ACKED_WITHOUT_OFFSET, RECORD_NOT_ACKED, 9], partialError: timeout },
    });
  });

  it('the producer acknowledges it in the ledger (acks >= 1), keeps acks=0 unconfirmed, and counts a partial failure', () => {
    const ledger = newLedger();
    const at = (baseSequence: number) => ({ partition: 0, baseSequence, atMs: 10 });
    const s0 = ledger.send(0, 1);
    const s1 = ledger.send(0, 2);
    const s2 = ledger.send(0, 3);
    const s3 = ledger.send(0, 4);
    expect(ledgerSendOutcome(ledger, 'all', at(s0), { baseOffset: -1 }, errorName)).toBeNull();
    expect(ledgerSendOutcome(ledger, 0, at(s1), { baseOffset: -1 }, errorName)).toBeNull();
    const mixed = settleDeliveries([{ offset: 20 }, { error: { name: 'CLIENT_TIMEOUT' } }, { offset: 21 }, {}]);
    expect(ledgerSendOutcome(ledger, 1, at(s2), 'sent' in mixed ? mixed.sent : { failed: 'unexpected' }, errorName)).toBe('CLIENT_TIMEOUT');
    expect(ledgerSendOutcome(ledger, 1, at(s3), { failed: 'NOT_ENOUGH_REPLICAS' }, errorName)).toBe('NOT_ENOUGH_REPLICAS');
    const batches = [...ledger.batches(0)];
    expect(batches.map((b) => b.status)).toEqual(['acked', 'unconfirmed', 'acked', 'failed']);
    expect(batches.map(ackedRecordsOf)).toEqual([4, 0, 3, 0]);
    expect(batches[2]).toMatchObject({ baseOffset: 20, recordOffsets: [20, RECORD_NOT_ACKED, 21, ACKED_WITHOUT_OFFSET], error: 'CLIENT_TIMEOUT' });
    expect(ledger.counts()).toMatchObject({ acked: 2, unconfirmed: 1, failed: 1, ackedRecords: 7 });
  });

  it('must survive: missing from the served log it is counted lost, present (by identity, at any offset) it is not', () => {
    const ledger = newLedger();
    const a = ledger.send(0, 1);
    const b = ledger.send(0, 2);
    ledger.ack(0, a, 0, 10);
    ledger.ack(0, b, -1, 11); // acknowledged, no offset reported
    const present = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0), served(4, 4)], corrupt: 0 }]);
    expect(present).toMatchObject({ acked: 8, ackedLost: 0, ackedWithoutOffset: 4, offsetChanged: 0, inconsistentOffsets: 0, unackedPresent: 0 });
    const missing = checkLedger(ledger, [{ partition: 0, batches: [served(0, 0)], corrupt: 0 }], { cutMs: 1000 });
    expect(missing).toMatchObject({ acked: 8, ackedLost: 4, ackedWithoutOffset: 4 });
    expect(missing.lost).toEqual([{ partition: 0, baseSequence: 4, records: 4, ackedOffset: -1, ackMs: 11 }]);
    // It has no offset to list among the lost offsets.
    expect(missing.lostOffsetsSample).toEqual([]);
    // Counted into run.json's trial ledger and summed per cell.
    const trial = ledgerSummaryOfReport(missing);
    expect(trial.ackedWithoutOffset).toBe(4);
    expect(addLedgers(addLedgers(emptyLedger(), trial), ledgerSummaryOfReport(present)).ackedWithoutOffset).toBe(8);
  });

  it('a batch acknowledged in part: the failed record is not promised, the others must survive', () => {
    const ledger = newLedger();
    const a = ledger.send(0, 1);
    ledger.ack(0, a, 0, 10, [0, RECORD_NOT_ACKED, ACKED_WITHOUT_OFFSET, 2], 'CLIENT_TIMEOUT');
    // Records 0 and 3 at their offsets, record 1 (failed) served anyway at 1, record 2 missing.
    const log = { partition: 0, batches: [served(0, 0, 2), served(2, 3, 1)], corrupt: 0 };
    expect(checkLedger(ledger, [log])).toMatchObject({ acked: 3, ackedLost: 1, ackedWithoutOffset: 1, unackedPresent: 1, offsetChanged: 0, inconsistentOffsets: 0 });
  });

  it('duplicates are counted by identity when a retry wrote a record twice, whatever its answer said', () => {
    const ledger = newLedger();
    const a = ledger.send(0, 1);
    const b = ledger.send(0, 2);
    ledger.ack(0, a, 4, 10); // the retry's copy was acknowledged, at 4
    ledger.fail(0, b, 'CLIENT_TIMEOUT', 11); // given up on, but the first attempt landed, twice
    const log = { partition: 0, batches: [served(0, 0), served(4, 0), served(8, 4), served(12, 4)], corrupt: 0 };
    expect(checkLedger(ledger, [log])).toMatchObject({ acked: 4, ackedLost: 0, duplicates: 8, offsetChanged: 0, unackedPresent: 4, inconsistentOffsets: 0 });
  });

  it('refuses an acknowledgement that acknowledges no record', () => {
    const ledger = newLedger();
    const a = ledger.send(0, 1);
    expect(() => ledger.ack(0, a, -1, 10, [RECORD_NOT_ACKED, RECORD_NOT_ACKED, RECORD_NOT_ACKED, RECORD_NOT_ACKED])).toThrow('acknowledged with no record acknowledged (a failed batch is ledger.fail)');
  });
});
