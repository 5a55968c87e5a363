import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeBatch } from '../records/index.ts';
import { BrokerError } from './errors.ts';
import { HighWatermarkCheckpoint } from './hw-checkpoint.ts';
import { Partition, type PartitionAssignment } from './partition.ts';
import type { AlterPartitionRequest } from './types.ts';

let root: string;
let t: number;
const open: Partition[] = [];
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-part-'));
  t = 1_000_000;
});
afterEach(() => {
  vi.useRealTimers();
  for (const p of open.splice(0)) p.close();
  fs.rmSync(root, { recursive: true, force: true });
});

interface Made {
  p: Partition;
  proposals: AlterPartitionRequest[];
}

/** A partition whose AlterPartition requests are accepted as sent (or rejected when `reject`). */
function make(brokerId: number, opts: { minIsr?: number; lagMs?: number; maxBatchBytes?: number; reject?: boolean } = {}): Made {
  const proposals: AlterPartitionRequest[] = [];
  const p = Partition.open({
    topic: 't',
    partition: 0,
    brokerId,
    dataDir: path.join(root, `b${brokerId}`),
    logConfig: opts.maxBatchBytes ? { maxBatchBytes: opts.maxBatchBytes } : {},
    minInsyncReplicas: opts.minIsr ?? 1,
    replicaLagTimeMaxMs: opts.lagMs ?? 10_000,
    now: () => t,
    proposeIsr: async (req) => {
      proposals.push(req);
      if (opts.reject) throw new BrokerError('FENCED_LEADER_EPOCH', 'stale');
      return { topic: req.topic, partition: req.partition, replicas: [1, 2, 3], leader: req.brokerId, leaderEpoch: req.leaderEpoch, partitionEpoch: req.partitionEpoch + 1, isr: req.isr };
    },
  });
  open.push(p);
  return { p, proposals };
}

function assignment(leader: number, leaderEpoch: number, isr: number[], partitionEpoch = leaderEpoch): PartitionAssignment {
  return { topic: 't', partition: 0, replicas: [1, 2, 3], leader, leaderEpoch, partitionEpoch, isr };
}

function rec(offset: number, epoch: number, value: string): Buffer {
  return encodeBatch({ baseOffset: offset, partitionLeaderEpoch: epoch, records: [{ value: Buffer.from(value) }], firstTimestamp: 1_700_000_000_000 });
}

function batch(...values: string[]): Buffer {
  return encodeBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), firstTimestamp: 1_700_000_000_000 });
}

/** Turns p into a follower of `leader` at `epoch` with an empty truncation step. */
function follow(p: Partition, leader: number, epoch: number, isr = [1, 2, 3]): void {
  expect(p.applyAssignment(assignment(leader, epoch, isr))).toBe('became-follower');
}

/** Writes single-record batches with the given epochs as a follower would receive them. */
function seed(p: Partition, epochs: Array<[number, number, string]>, leaderHw: number): void {
  for (const [offset, epoch, v] of epochs) p.appendAsFollower(rec(offset, epoch, v), leaderHw);
}

const tick = () => new Promise<void>((r) => setImmediate(r));
const codeOf = (e: unknown) => (e instanceof BrokerError ? e.code : String(e));
// Fake setTimeout/clearTimeout only (setImmediate stays real): counts exactly this code's timers.
const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
const timeouts = () => vi.getTimerCount();

describe('Partition', () => {
  it('leader: acks=1 appends with offsets and the leader epoch stamped; HW waits for the ISR', async () => {
    const { p } = make(1);
    expect(p.applyAssignment(assignment(1, 3, [1, 2]))).toBe('became-leader');
    expect(p.role).toBe('leader');
    expect(p.epochCache.entries).toEqual([{ epoch: 3, startOffset: 0 }]);
    const r = await p.appendAsLeader(batch('a', 'b'), { acks: 1, timeoutMs: 1000 });
    expect(r).toMatchObject({ baseOffset: 0, lastOffset: 1, recordCount: 2, hw: 0 });
    const stored = p.log.read(0, 1 << 20).data;
    expect(stored.readInt32BE(12)).toBe(3); // partitionLeaderEpoch
    expect(p.highWatermark).toBe(0);
    // follower 2 (in ISR) fetches at 2: HW = min(2, 2)
    p.readForReplica(2, 0, 1 << 20, 3);
    expect(p.highWatermark).toBe(0);
    const f = p.readForReplica(2, 2, 1 << 20, 3);
    expect(p.highWatermark).toBe(2);
    expect(f).toMatchObject({ highWatermark: 2, leaderEpoch: 3, nextOffset: 2 });
    expect(f.data.length).toBe(0);
  });

  it('rejects bad requests with Kafka error names and appends nothing', async () => {
    const { p } = make(1, { maxBatchBytes: 200 });
    const err = async (f: () => Promise<unknown> | unknown) => {
      try {
        await f();
      } catch (e) {
        return e as BrokerError;
      }
      throw new Error('expected an error');
    };
    // not leader yet
    expect((await err(() => p.appendAsLeader(batch('x'), { acks: 1, timeoutMs: 1000 }))).code).toBe('NOT_LEADER_OR_FOLLOWER');
    follow(p, 2, 1);
    const nl = await err(() => p.appendAsLeader(batch('x'), { acks: 1, timeoutMs: 1000 }));
    expect(nl.code).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(nl.details).toMatchObject({ leader: 2, leaderEpoch: 1 });
    expect(codeOf(await err(() => p.readForConsumer(0, 100)))).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(codeOf(await err(() => p.endOffsetForEpoch(0)))).toBe('NOT_LEADER_OR_FOLLOWER');
    // a follower must truncate before appending
    expect(codeOf(await err(() => p.appendAsFollower(rec(0, 1, 'x'), 0)))).toBe('INVALID_REQUEST');
    p.applyAssignment(assignment(1, 2, [1]));
    const corrupt = batch('y');
    corrupt[corrupt.length - 1] ^= 0xff;
    expect(codeOf(await err(() => p.appendAsLeader(corrupt, { acks: 1, timeoutMs: 1000 })))).toBe('CORRUPT_MESSAGE');
    expect(codeOf(await err(() => p.appendAsLeader(batch('z'.repeat(300)), { acks: 1, timeoutMs: 1000 })))).toBe('MESSAGE_TOO_LARGE');
    expect(codeOf(await err(() => p.appendAsLeader(Buffer.concat([batch('a'), batch('b')]), { acks: 1, timeoutMs: 1000 })))).toBe('CORRUPT_MESSAGE');
    expect(p.logEndOffset).toBe(0);
    expect(codeOf(await err(() => p.readForReplica(2, 0, 100, 1)))).toBe('FENCED_LEADER_EPOCH');
    expect(codeOf(await err(() => p.readForReplica(2, 5, 100, 2)))).toBe('OFFSET_OUT_OF_RANGE');
    expect(codeOf(await err(() => p.readForReplica(9, 0, 100, 2)))).toBe('INVALID_REQUEST');
    expect(codeOf(await err(() => p.readForConsumer(3, 100)))).toBe('OFFSET_OUT_OF_RANGE');
    expect(p.metrics().errors).toMatchObject({ NOT_LEADER_OR_FOLLOWER: 4, CORRUPT_MESSAGE: 2, MESSAGE_TOO_LARGE: 1, FENCED_LEADER_EPOCH: 1 });
  });

  it('ignores stale assignments; ISR changes at the same leader epoch are updates', () => {
    const { p } = make(1);
    expect(p.applyAssignment(assignment(1, 2, [1, 2, 3], 5))).toBe('became-leader');
    expect(p.applyAssignment(assignment(2, 1, [2, 3], 9))).toBe('stale');
    expect(p.applyAssignment(assignment(1, 2, [1, 2], 5))).toBe('stale');
    expect(p.applyAssignment(assignment(1, 2, [1, 2], 6))).toBe('updated');
    expect(p.isr).toEqual([1, 2]);
    expect(p.applyAssignment(assignment(-1, 3, [1], 7))).toBe('updated');
    expect(p.role).toBe('none');
  });

  it('consumers read only below the HW; long polls wake on data, HW, role change and timeout, leaving no timer', async () => {
    const { p } = make(1);
    p.applyAssignment(assignment(1, 0, [1, 2]));
    await p.appendAsLeader(batch('a'), { acks: 1, timeoutMs: 1000 });
    await p.appendAsLeader(batch('b'), { acks: 1, timeoutMs: 1000 });
    expect(p.readForConsumer(0, 1 << 20)).toMatchObject({ highWatermark: 0, nextOffset: 0 });
    expect(p.readForConsumer(0, 1 << 20).data.length).toBe(0);
    p.readForReplica(2, 1, 1 << 20, 0); // follower has offset 0 only
    expect(p.highWatermark).toBe(1);
    const c = p.readForConsumer(0, 1 << 20);
    expect(c).toMatchObject({ highWatermark: 1, nextOffset: 1 });
    expect(c.data.equals(p.log.read(0, 1 << 20, 1).data)).toBe(true);

    fakeTimers();
    const before = timeouts();
    let replicaWoke = false;
    let consumerWoke = false;
    const r = p.waitForData(2, 60_000, true).then(() => (replicaWoke = true));
    const cw = p.waitForData(1, 60_000, false).then(() => (consumerWoke = true));
    expect(timeouts()).toBe(before + 2);
    await tick();
    expect([replicaWoke, consumerWoke]).toEqual([false, false]);
    await p.appendAsLeader(batch('c'), { acks: 1, timeoutMs: 1000 });
    await r;
    expect(consumerWoke).toBe(false);
    p.readForReplica(2, 3, 1 << 20, 0);
    await cw;
    expect(timeouts()).toBe(before);
    // timeout
    let timedOut = false;
    const slow = p.waitForData(3, 40, false).then(() => (timedOut = true));
    vi.advanceTimersByTime(39);
    await tick();
    expect(timedOut).toBe(false);
    vi.advanceTimersByTime(1);
    await slow;
    expect(p.metrics().longPolls).toBe(0);
    // role change wakes
    const w = p.waitForData(99, 60_000, true);
    p.applyAssignment(assignment(2, 1, [1, 2]));
    await w;
    expect(timeouts()).toBe(before);
    // not leader: resolves at once so the caller gets the error from the read
    await p.waitForData(0, 60_000, true);
  });

  it('lastCaughtUpTime follows Kafka: caught up to the LEO at this fetch or at the previous one', async () => {
    const { p, proposals } = make(1, { lagMs: 10_000 });
    p.applyAssignment(assignment(1, 0, [1, 2, 3]));
    // A steady stream: each fetch of follower 2 reaches the LEO the leader had at its previous
    // fetch, never the current one. Follower 3 reads at the same pace but always one batch
    // behind the previous LEO. Over 30 s, only 3 falls out.
    let lastLeo2 = 0;
    let lastLeo3 = 0;
    for (let i = 0; i < 30; i++) {
      await p.appendAsLeader(batch(`v${i}`), { acks: 1, timeoutMs: 1000 });
      t += 1000;
      const leoNow = p.logEndOffset;
      p.readForReplica(2, lastLeo2, 1 << 20, 0);
      p.readForReplica(3, Math.max(0, lastLeo3 - 1), 1 << 20, 0);
      lastLeo2 = leoNow;
      lastLeo3 = leoNow;
      p.tick();
      await tick();
    }
    const shrinks = proposals.filter((r) => r.isr.length < 3);
    expect(shrinks.length).toBe(1);
    expect(shrinks[0].isr).toEqual([1, 2]);
    expect(p.isr).toEqual([1, 2]);
    const m = p.metrics();
    expect(m.followers.find((f) => f.id === 2)!.inIsr).toBe(true);
    expect(m.isrShrinks).toBe(1);
  });

  it('HW never moves backwards on the leader; a new leader keeps its HW until followers report', async () => {
    const { p } = make(1);
    follow(p, 2, 0);
    p.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: -1 });
    seed(p, [[0, 0, 'a'], [1, 0, 'b'], [2, 0, 'c'], [3, 0, 'd']], 3);
    expect(p.highWatermark).toBe(3);
    expect(p.applyAssignment(assignment(1, 1, [1, 2, 3]))).toBe('became-leader');
    expect(p.highWatermark).toBe(3);
    p.readForReplica(2, 4, 1 << 20, 1);
    expect(p.highWatermark).toBe(3); // 3 has not fetched: unknown LEO
    p.readForReplica(3, 1, 1 << 20, 1); // a follower below the HW
    expect(p.highWatermark).toBe(3);
    p.readForReplica(3, 4, 1 << 20, 1);
    expect(p.highWatermark).toBe(4);
    p.readForReplica(3, 2, 1 << 20, 1);
    expect(p.highWatermark).toBe(4);
  });

  it('ISR expansion needs LEO >= HW and >= the start of the leader epoch; a rejected proposal is retried later', async () => {
    const { p, proposals } = make(1);
    follow(p, 2, 0);
    p.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: -1 });
    seed(p, Array.from({ length: 10 }, (_, i) => [i, 0, `r${i}`] as [number, number, string]), 5);
    expect(p.highWatermark).toBe(5);
    p.applyAssignment(assignment(1, 1, [1]));
    expect(p.highWatermark).toBe(10); // alone in the ISR
    p.readForReplica(2, 7, 1 << 20, 1);
    await tick();
    expect(proposals).toEqual([]);
    p.readForReplica(2, 10, 1 << 20, 1);
    await tick();
    expect(proposals.map((r) => r.isr)).toEqual([[1, 2]]);
    expect(p.isr).toEqual([1, 2]);
    expect(p.metrics().isrExpands).toBe(1);

    const rej = make(2, { reject: true });
    rej.p.applyAssignment({ ...assignment(2, 0, [2]), replicas: [2, 3] });
    rej.p.readForReplica(3, 0, 1 << 20, 0);
    await tick();
    rej.p.readForReplica(3, 0, 1 << 20, 0);
    await tick();
    expect(rej.proposals.length).toBe(2);
    expect(rej.p.isr).toEqual([2]);
    expect(rej.p.metrics().isrProposalsRejected).toBe(2);
  });

  it('KIP-279: a follower with an epoch the leader never had truncates over two rounds and converges', async () => {
    // Follower F (3): epoch 1 at 0..9, then epoch 3 at 10..14 (a leadership nobody else saw).
    // Leader L (1): epoch 1 at 0..5, epoch 2 at 6..11, epoch 4 at 12..19; now leads epoch 5.
    // One KIP-101 round would cut F at 10 and keep its epoch-1 records 6..9, where L has epoch 2.
    const L = make(1).p;
    follow(L, 2, 4);
    L.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: -1 });
    const lRecs: Array<[number, number, string]> = [];
    for (let o = 0; o < 20; o++) lRecs.push([o, o < 6 ? 1 : o < 12 ? 2 : 4, `L${o}`]);
    seed(L, lRecs, 0);
    const F = make(3).p;
    follow(F, 2, 4);
    F.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: -1 });
    const fRecs: Array<[number, number, string]> = [];
    for (let o = 0; o < 15; o++) fRecs.push([o, o < 10 ? 1 : 3, o < 6 ? `L${o}` : `F${o}`]);
    seed(F, fRecs, 0);
    expect(F.epochCache.entries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
    ]);
    L.applyAssignment(assignment(1, 5, [1]));
    F.applyAssignment(assignment(1, 5, [1]));
    expect(F.needsTruncation).toBe(true);

    const a1 = L.endOffsetForEpoch(F.latestLogEpoch);
    expect(a1).toEqual({ leaderEpoch: 2, endOffset: 12 });
    expect(F.truncateByLeaderEpoch(a1).truncatedTo).toBe(10);
    expect(F.needsTruncation).toBe(true);
    expect(F.latestLogEpoch).toBe(1);
    const a2 = L.endOffsetForEpoch(F.latestLogEpoch);
    expect(a2).toEqual({ leaderEpoch: 1, endOffset: 6 });
    expect(F.truncateByLeaderEpoch(a2).truncatedTo).toBe(6);
    expect(F.needsTruncation).toBe(false);
    while (F.logEndOffset < L.logEndOffset) {
      const r = L.readForReplica(3, F.logEndOffset, 100, 5);
      F.appendAsFollower(r.data, r.highWatermark);
    }
    L.readForReplica(3, F.logEndOffset, 100, 5);
    expect(L.highWatermark).toBe(20);
    expect(F.logHash(20).hash).toBe(L.logHash(20).hash);
    expect(F.epochCache.entries).toEqual(L.epochCache.entries.filter((e) => e.epoch !== 5));
  });

  it('no epochs on either side: the follower falls back to its HW', () => {
    const { p } = make(2);
    follow(p, 1, 0);
    const r = p.truncateByLeaderEpoch({ leaderEpoch: -1, endOffset: -1 });
    expect(r).toEqual({ truncatedTo: 0, bytesTruncated: 0 });
    expect(p.needsTruncation).toBe(false);
  });

  it('HW checkpoint: written by tick (in the background) at most once a second and on close; on open HW = min(checkpoint, LEO)', async () => {
    const { p } = make(1);
    p.applyAssignment(assignment(1, 0, [1]));
    await p.appendAsLeader(batch('a'), { acks: 'all', timeoutMs: 1000 });
    const cp = new HighWatermarkCheckpoint(p.dir, 't', 0);
    await p.tick(); // the periodic write runs off the event loop; tick's promise says when it is on disk
    expect(cp.read()).toBe(1);
    await p.appendAsLeader(batch('b'), { acks: 'all', timeoutMs: 1000 });
    t += 500;
    await p.tick();
    expect(cp.read()).toBe(1);
    t += 500;
    await p.tick();
    expect(cp.read()).toBe(2);
    await p.appendAsLeader(batch('c'), { acks: 'all', timeoutMs: 1000 });
    p.close();
    open.splice(open.indexOf(p), 1);
    expect(cp.read()).toBe(3);
    cp.write(50);
    const again = make(1).p;
    expect(again.highWatermark).toBe(3);
    expect(again.epochCache.entries).toEqual([{ epoch: 0, startOffset: 0 }]);
  });

  it('a malformed checkpoint stops the open with an error naming the file, and leaves the log closed', async () => {
    const { p } = make(1);
    p.applyAssignment(assignment(1, 0, [1]));
    await p.appendAsLeader(batch('a'), { acks: 1, timeoutMs: 1000 });
    p.close();
    open.splice(open.indexOf(p), 1);
    const file = path.join(p.dir, 'leader-epoch-checkpoint');
    fs.writeFileSync(file, '0\n1\nzero 0\n');
    expect(() => make(1)).toThrow(/leader-epoch-checkpoint: line 3: expected the epoch/);
    fs.writeFileSync(file, '0\n1\n0 0\n');
    const again = make(1).p;
    expect(again.logEndOffset).toBe(1);
    // the failed open closed its log cleanly (marker written), so no recovery was needed now
    expect(again.log.recovery.cleanShutdown).toBe(true);
    const bad = await again.appendAsLeader(batch('x'), { acks: 2 as unknown as 1, timeoutMs: 10 }).catch((e) => e);
    expect(codeOf(bad)).toBe('NOT_LEADER_OR_FOLLOWER');
    again.applyAssignment(assignment(1, 1, [1]));
    const bad2 = await again.appendAsLeader(batch('x'), { acks: 2 as unknown as 1, timeoutMs: 10 }).catch((e) => e);
    expect(codeOf(bad2)).toBe('INVALID_REQUEST');
  });

  it('close fails waiting acks=all requests and leaves no timers', async () => {
    const { p } = make(1, { minIsr: 1 });
    p.applyAssignment(assignment(1, 0, [1, 2]));
    fakeTimers();
    const before = timeouts();
    const w = p.appendAsLeader(batch('a'), { acks: 'all', timeoutMs: 60_000 }).catch((e) => e);
    const poll = p.waitForData(5, 60_000, true);
    await tick();
    expect(timeouts()).toBe(before + 2);
    p.close();
    open.splice(open.indexOf(p), 1);
    expect(codeOf(await w)).toBe('NOT_LEADER_OR_FOLLOWER');
    await poll;
    expect(timeouts()).toBe(before);
    expect(p.metrics()).toMatchObject({ purgatorySize: 0, longPolls: 0 });
  });

  it('logHash covers whole batches below upTo and is equal for equal bytes', async () => {
    const { p } = make(1);
    p.applyAssignment(assignment(1, 0, [1]));
    await p.appendAsLeader(batch('a', 'b'), { acks: 1, timeoutMs: 1000 });
    await p.appendAsLeader(batch('c'), { acks: 1, timeoutMs: 1000 });
    const h2 = p.logHash(2);
    const h3 = p.logHash(3);
    expect(h2.hash).not.toBe(h3.hash);
    expect(p.logHash(1).hash).toBe(p.logHash(0).hash); // the batch 0..1 is not below 1
    expect(h3).toMatchObject({ upTo: 3, hw: 3, leo: 3 });
    expect(p.logHash()).toEqual(h3);
  });
});
