// The leader's producer table on a real partition (real log files): sequence verdicts, the
// last-5-batches window for duplicates, and the rebuild from the log on a new leader epoch,
// which reads only about the last rebuildWindowBytes (older producers are forgotten).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../records/index.ts';
import { Partition } from '../../replication/index.ts';
import { ProducerStates } from './producer-state.ts';

let root: string;
let p: Partition;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-producer-state-'));
  p = Partition.open({
    topic: 't',
    partition: 0,
    brokerId: 1,
    dataDir: root,
    logConfig: { segmentBytes: 64 * 1024 },
    minInsyncReplicas: 1,
    replicaLagTimeMaxMs: 10_000,
    proposeIsr: async () => {
      throw new Error('no ISR changes in this test');
    },
  });
  p.applyAssignment({ topic: 't', partition: 0, replicas: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
});

afterEach(() => {
  p.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function batch(producerId: number, baseSequence: number, count: number, bytes = 100): Buffer {
  return encodeBatch({ producerId, producerEpoch: 0, baseSequence, records: Array.from({ length: count }, (_, i) => ({ value: Buffer.alloc(bytes, 97 + (i % 26)) })) });
}

/** The listener's order: verdict, synchronous append, record. */
async function send(states: ProducerStates, b: Buffer): Promise<string> {
  const { verdict, header } = states.check(p, b);
  if (verdict.kind !== 'append') return verdict.kind === 'duplicate' ? `duplicate@${verdict.baseOffset}` : verdict.kind;
  const before = p.logEndOffset;
  const pending = p.appendAsLeader(b, { acks: 1, timeoutMs: 1000 });
  if (header) states.appended(p, header, before, p.logEndOffset - 1);
  return `appended@${(await pending).baseOffset}`;
}

describe('producer state on the leader', () => {
  it('detects duplicates among the last 5 batches only, and gaps', async () => {
    const s = new ProducerStates();
    for (let i = 0; i < 7; i++) expect(await send(s, batch(5, i * 2, 2))).toBe(`appended@${i * 2}`);
    expect(await send(s, batch(5, 12, 2))).toBe('duplicate@12');
    expect(await send(s, batch(5, 4, 2))).toBe('duplicate@4');
    // The 6th batch back (sequence 2) has left the window: no longer recognised, and out of order.
    expect(await send(s, batch(5, 2, 2))).toBe('out-of-order');
    expect(await send(s, batch(5, 15, 1))).toBe('out-of-order');
    // Non-idempotent batches (producer id -1) always append.
    expect(await send(s, encodeBatch({ records: [{ value: Buffer.from('plain') }] }))).toBe('appended@14');
  });

  it('rebuilds from the log on a new leader epoch, reading only the recent window', async () => {
    const first = new ProducerStates(20_000);
    expect(await send(first, batch(1, 0, 5))).toBe('appended@0');
    // ~60 KB of producer 2 afterwards, beyond the 20 KB window: producer 1 falls out of it.
    for (let i = 0; i < 60; i++) await send(first, batch(2, i * 10, 10));
    expect(await send(first, batch(1, 0, 5))).toBe('duplicate@0');

    p.applyAssignment({ topic: 't', partition: 0, replicas: [1], leader: 1, leaderEpoch: 1, partitionEpoch: 1, isr: [1] });
    const rebuilt = new ProducerStates(20_000);
    expect(await send(rebuilt, batch(2, 590, 10))).toBe('duplicate@595');
    expect(await send(rebuilt, batch(2, 605, 1))).toBe('out-of-order');
    expect(await send(rebuilt, batch(1, 0, 5))).toBe(`appended@605`);
    expect(rebuilt.rebuilds).toBe(1);
    // The same object also rebuilds when the epoch moves on.
    p.applyAssignment({ topic: 't', partition: 0, replicas: [1], leader: 1, leaderEpoch: 2, partitionEpoch: 2, isr: [1] });
    expect(await send(rebuilt, batch(1, 0, 5))).toBe('duplicate@605');
    expect(rebuilt.rebuilds).toBe(2);
  });
});
