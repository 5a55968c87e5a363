// Consumer groups: the poll checks and figures on a driver seam that serves hand-made fetches (a
// skip over acknowledged records, an offset served again), beside consumers-kafka.test.ts, which
// runs them against durolab's broker and Apache Kafka.
import { describe, expect, it } from 'vitest';
import type { ClusterClient, ServedBatch, TailOptions } from '../drivers/types.ts';
import { AckLedger } from '../history/ledger.ts';
import { ConsumerGroups } from './consumers.ts';

function ledgerOf(batches: number): AckLedger {
  const l = new AckLedger({ recordsPerBatch: 4, producerIdBase: 100, partitions: [0] });
  for (let i = 0; i < batches; i++) {
    const seq = l.send(0, 1000 + i);
    l.ack(0, seq, i * 4, 1002 + i);
  }
  l.send(0, 2000); // sent, never acknowledged
  return l;
}

const batch = (i: number): ServedBatch => ({ baseOffset: i * 4, lastOffset: i * 4 + 3, producerId: 100, baseSequence: i * 4, records: 4 });

/** A driver whose one partition serves the given fetches (a number: the position moves back there, as after an offset reset), then waits for the stop. */
function seam(fetches: Array<ServedBatch[] | number>): ClusterClient {
  return {
    driver: 'kafka',
    tail: async (o: TailOptions) => {
      let position = 0;
      for (const f of fetches) {
        if (typeof f === 'number') {
          position = f;
          continue;
        }
        o.onFetch({ latencyUs: 250, atMs: 1010, bytes: f.length * 100, batches: f, corrupt: 0, highWatermark: 40, position });
        const last = f[f.length - 1];
        if (last) position = last.lastOffset + 1;
      }
      await new Promise<void>((resolve) => o.signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as ClusterClient;
}

describe('consumer groups', () => {
  it('counts what was consumed, its latencies and lag, and nothing wrong in an orderly read', async () => {
    const ledger = ledgerOf(10);
    const g = new ConsumerGroups(seam([[batch(0), batch(1)], [batch(2), batch(3), batch(4)]]), [{ name: 'c', start: { from: 'earliest' }, 'fetch.max.bytes': 1 << 20, 'fetch.min.bytes': 1, 'fetch.max.wait.ms': 100, startAt: 0, membership: 'assigned', count: 1 }], { topic: 't', partitions: [0], ledger, loadStarted: Promise.resolve(0), signal: new AbortController().signal });
    await new Promise((r) => setTimeout(r, 20));
    const [r] = await g.finish();
    expect(r).toMatchObject({ name: 'c', start: 'earliest', records: 20, bytes: 500, fetches: 2, lag: { max: 40, end: 20 } });
    expect(r!.checks).toEqual({ nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 });
    expect(r!.fetchLatencyUs).toMatchObject({ count: 2, p50: 250 });
    // Lag: 40 behind when the first fetch was asked from 0, 20 left after the second. Batch i
    // was sent at 1000 + i ms and consumed at 1010 ms: 10 .. 6 ms, 4 records each.
    expect(r!.endToEndUs.count).toBe(20);
    expect(r!.endToEndUs.max).toBeGreaterThanOrEqual(10_000);
  });

  it('flags an offset served again, acknowledged records skipped, and records never acknowledged', async () => {
    const ledger = ledgerOf(10);
    const neverAcked: ServedBatch = { baseOffset: 40, lastOffset: 43, producerId: 100, baseSequence: 40, records: 4 };
    const g = new ConsumerGroups(seam([[batch(0), batch(1)], [batch(4), batch(5), batch(6)], [batch(7), batch(8), batch(9), neverAcked], 0, [batch(0)]]), [{ name: 'c', start: { from: 'earliest' }, 'fetch.max.bytes': 1 << 20, 'fetch.min.bytes': 1, 'fetch.max.wait.ms': 100, startAt: 0, membership: 'assigned', count: 1 }], { topic: 't', partitions: [0], ledger, loadStarted: Promise.resolve(0), signal: new AbortController().signal });
    await new Promise((r) => setTimeout(r, 20));
    const [r] = await g.finish();
    // Batches 2 and 3 (8 acknowledged records) passed over; 4 records never acknowledged; offset 0 served again after a reset.
    expect(r!.checks).toEqual({ nonMonotonic: 1, skipped: 8, neverAcked: 4, corrupt: 0 });
  });

  it('refuses a driver without a consumer', () => {
    const http = { driver: 'http' } as unknown as ClusterClient;
    expect(() => new ConsumerGroups(http, [{ name: 'c', start: { from: 'latest' }, 'fetch.max.bytes': 1, 'fetch.min.bytes': 1, 'fetch.max.wait.ms': 0, startAt: 0, membership: 'assigned', count: 1 }], { topic: 't', partitions: [0], ledger: ledgerOf(1), loadStarted: Promise.resolve(0), signal: new AbortController().signal })).toThrow('workload.consumers: the http driver has no consumer (use workload.driver: kafka)');
  });
});
