import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordsOf } from '../records/index.ts';
import { Log } from '../storage/index.ts';
import { BrokerError } from './errors.ts';
import type { ProduceResult } from './partition-types.ts';
import { batchOf, settle, SimCluster } from './test-cluster.ts';

let sim: SimCluster | null = null;
afterEach(() => {
  sim?.close();
  sim = null;
});

function track<T>(p: Promise<T>) {
  const s: { state: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { state: 'pending' };
  p.then(
    (v) => Object.assign(s, { state: 'resolved', value: v }),
    (e) => Object.assign(s, { state: 'rejected', error: e }),
  );
  return s;
}

const codeOf = (e: unknown) => (e instanceof BrokerError ? e.code : String(e));

describe('replication over three real partitions', () => {
  it('acks=all completes only after both followers fetched past the batch', async () => {
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l = sim.leader();
    expect(sim.leaderId).toBe(1);
    const r = track(l.appendAsLeader(batchOf('a', 'b', 'c'), { acks: 'all', timeoutMs: 30_000 }));
    await settle();
    expect(r.state).toBe('pending');
    expect(l.metrics().purgatorySize).toBe(1);
    // follower 2 gets the batch; the leader learns its new LEO only from its next fetch
    expect(sim.fetch(2)).toBeGreaterThan(0);
    sim.fetch(2);
    await settle();
    expect(r.state).toBe('pending');
    expect(l.highWatermark).toBe(0);
    sim.fetch(3);
    await settle();
    expect(r.state).toBe('pending');
    sim.fetch(3);
    await settle();
    expect(r.state).toBe('resolved');
    const res = r.value as ProduceResult;
    expect(res).toMatchObject({ baseOffset: 0, lastOffset: 2, recordCount: 3 });
    expect(res.hw).toBeGreaterThanOrEqual(3);
    expect(l.highWatermark).toBe(3);
    // followers learn the HW from the next fetch answer
    sim.fetchAll();
    expect(sim.p(2).highWatermark).toBe(3);
    expect(sim.p(3).highWatermark).toBe(3);
    // acks=1 answers at once, before replication
    const one = await l.appendAsLeader(batchOf('d'), { acks: 1, timeoutMs: 30_000 });
    expect(one).toMatchObject({ baseOffset: 3, lastOffset: 3, hw: 3 });
  });

  it('a paused follower leaves the ISR after replica.lag.time.max.ms; then acks=all succeeds with min ISR 2', async () => {
    // Session timeout above the lag time, so the leader's lag check (not the controller's
    // fencing of a silent broker) is what removes the follower.
    sim = new SimCluster({ minInsyncReplicas: 2, replicaLagTimeMaxMs: 10_000, sessionTimeoutMs: 60_000 });
    const l = sim.leader();
    sim.pause(3);
    const r = track(l.appendAsLeader(batchOf('x'), { acks: 'all', timeoutMs: 60_000 }));
    sim.fetch(2);
    sim.fetch(2);
    await settle();
    expect(r.state).toBe('pending');
    // not yet: lag time not exceeded (ticks keep broker 2 fetching, 3 is silent)
    for (let i = 0; i < 99; i++) {
      await sim.tick(100);
      sim.fetch(2);
    }
    expect(sim.controllerIsr).toEqual([1, 2, 3]);
    expect(r.state).toBe('pending');
    // 10 s since 3 last caught up: out of the ISR, HW moves, the request completes
    for (let i = 0; i < 3; i++) {
      await sim.tick(100);
      sim.fetch(2);
    }
    await settle();
    expect(sim.controllerIsr).toEqual([1, 2]);
    expect(l.isr).toEqual([1, 2]);
    expect(r.state).toBe('resolved');
    expect(sim.controller.state().events.at(-1)).toMatchObject({ kind: 'isr-change', isr: [1, 2] });
    // the paused follower comes back, catches up and is proposed back into the ISR
    sim.resume(3);
    await sim.replicate();
    await settle();
    expect(sim.controllerIsr).toEqual([1, 2, 3]);
    expect(l.metrics()).toMatchObject({ isrShrinks: 1, isrExpands: 1 });
  });

  it('both followers paused: min ISR 1 -> acks=all succeeds; min ISR 2 -> NOT_ENOUGH_REPLICAS_AFTER_APPEND while waiting, NOT_ENOUGH_REPLICAS after', async () => {
    for (const minIsr of [1, 2]) {
      sim = new SimCluster({ minInsyncReplicas: minIsr, replicaLagTimeMaxMs: 5_000 });
      const l = sim.leader();
      sim.pause(2);
      sim.pause(3);
      const waiting = track(l.appendAsLeader(batchOf('w'), { acks: 'all', timeoutMs: 60_000 }));
      await settle();
      expect(waiting.state).toBe('pending');
      for (let i = 0; i < 60 && sim.controllerIsr.length > 1; i++) await sim.tick(100);
      await settle();
      expect(sim.controllerIsr).toEqual([1]);
      expect(l.isr).toEqual([1]);
      if (minIsr === 1) {
        expect(waiting.state).toBe('resolved');
        const now = await l.appendAsLeader(batchOf('n'), { acks: 'all', timeoutMs: 1000 });
        expect(now).toMatchObject({ baseOffset: 1, hw: 2 });
      } else {
        expect(waiting.state).toBe('rejected');
        expect(codeOf(waiting.error)).toBe('NOT_ENOUGH_REPLICAS_AFTER_APPEND');
        const leo = l.logEndOffset;
        const err = await l.appendAsLeader(batchOf('n'), { acks: 'all', timeoutMs: 1000 }).catch((e) => e);
        expect(codeOf(err)).toBe('NOT_ENOUGH_REPLICAS');
        expect(l.logEndOffset).toBe(leo); // rejected before the append
        expect(l.metrics().errors).toMatchObject({ NOT_ENOUGH_REPLICAS: 1, NOT_ENOUGH_REPLICAS_AFTER_APPEND: 1 });
        // acks=1 still works, but below min ISR the HW does not advance over it (Kafka's isUnderMinIsr, KIP-966)
        const hw = l.highWatermark;
        await expect(l.appendAsLeader(batchOf('n'), { acks: 1, timeoutMs: 1000 })).resolves.toMatchObject({ baseOffset: leo });
        expect(l.highWatermark).toBe(hw);
        expect(l.logEndOffset).toBeGreaterThan(hw);
        // the followers come back and rejoin: the ISR is at the minimum again, and the HW reaches the log's end
        sim.resume(2);
        sim.resume(3);
        for (let i = 0; i < 20 && l.highWatermark < l.logEndOffset; i++) {
          await sim.tick(100); // heartbeats: the controller unfences them
          await sim.replicate();
          await settle();
        }
        expect(l.isr.length).toBeGreaterThanOrEqual(2);
        expect(l.highWatermark).toBe(l.logEndOffset);
      }
      sim.close();
      sim = null;
    }
  });

  it('purgatory timeout: REQUEST_TIMED_OUT, no waiter left', async () => {
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l = sim.leader();
    const t0 = Date.now();
    const err = await l.appendAsLeader(batchOf('t'), { acks: 'all', timeoutMs: 80 }).catch((e) => e);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(70);
    expect(codeOf(err)).toBe('REQUEST_TIMED_OUT');
    expect(l.metrics()).toMatchObject({ purgatorySize: 0, purgatoryExpired: 1 });
    // the record was appended all the same (Kafka: a timeout is not a rollback)
    expect(l.logEndOffset).toBe(1);
  });

  it('a leader that loses leadership fails waiting acks=all with NOT_LEADER_OR_FOLLOWER', async () => {
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l = sim.leader();
    const w = track(l.appendAsLeader(batchOf('w'), { acks: 'all', timeoutMs: 60_000 }));
    sim.pause(1);
    for (let i = 0; i < 17; i++) await sim.tick(100);
    expect(sim.leaderId).toBe(2);
    sim.resume(1);
    sim.heartbeat(1);
    await settle();
    expect(l.role).toBe('follower');
    expect(w.state).toBe('rejected');
    expect(codeOf(w.error)).toBe('NOT_LEADER_OR_FOLLOWER');
    expect((w.error as BrokerError).details).toMatchObject({ leader: 2, leaderEpoch: 1 });
  });

  it('failover: new leader from the ISR with epoch+1, no acks=all record lost; the old leader truncates its unreplicated acks=1 tail and converges byte for byte', async () => {
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l1 = sim.leader();
    const acked: ProduceResult[] = [];
    for (let i = 0; i < 5; i++) {
      const p = l1.appendAsLeader(batchOf(`all-${i}-a`, `all-${i}-b`), { acks: 'all', timeoutMs: 30_000 });
      await sim.replicate();
      acked.push(await p);
    }
    expect(l1.highWatermark).toBe(10);
    const hashBefore = l1.logHash().hash;
    // acks=1 batches the followers never fetch
    for (let i = 0; i < 3; i++) await l1.appendAsLeader(batchOf(`one-${i}`), { acks: 1, timeoutMs: 1000 });
    expect(l1.logEndOffset).toBe(13);
    // broker 1 dies
    sim.stop(1);
    for (let i = 0; i < 16; i++) await sim.tick(100);
    expect(sim.controller.assignment(sim.topic, 0)).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2, 3] });
    const l2 = sim.leader();
    expect(l2.role).toBe('leader');
    expect(l2.leaderEpoch).toBe(1);
    // every acknowledged acks=all record is on the new leader, same bytes
    expect(l2.logEndOffset).toBe(10);
    expect(l2.logHash(10).hash).toBe(hashBefore);
    for (const a of acked) expect(l2.log.read(a.baseOffset, 1 << 20).data.length).toBeGreaterThan(0);
    // new writes in epoch 1
    const p = l2.appendAsLeader(batchOf('epoch1-a'), { acks: 'all', timeoutMs: 30_000 });
    await sim.replicate();
    await expect(p).resolves.toMatchObject({ baseOffset: 10 });
    // broker 1 restarts: follower, truncates 10..12 (acks=1, never replicated), catches up
    sim.start(1);
    sim.heartbeat(1);
    const old = sim.p(1);
    expect(old.role).toBe('follower');
    expect(old.needsTruncation).toBe(true);
    expect(old.latestLogEpoch).toBe(0);
    expect(l2.endOffsetForEpoch(0)).toEqual({ leaderEpoch: 0, endOffset: 10 });
    const t = old.truncateByLeaderEpoch(l2.endOffsetForEpoch(old.latestLogEpoch));
    expect(t.truncatedTo).toBe(10);
    expect(t.bytesTruncated).toBeGreaterThan(0);
    expect(old.needsTruncation).toBe(false);
    await sim.replicate();
    await settle();
    await sim.replicate();
    expect(sim.controllerIsr).toEqual([1, 2, 3]);
    const hashes = [1, 2, 3].map((id) => sim!.p(id).logHash(l2.highWatermark));
    expect(new Set(hashes.map((h) => h.hash)).size).toBe(1);
    expect(hashes.map((h) => h.leo)).toEqual([11, 11, 11]);
    expect(old.epochCache.entries).toEqual(l2.epochCache.entries);
  });

  it('KIP-101 scenario 1: a follower restarted with a stale HW keeps acked data and can take over', async () => {
    // Broker 2 holds the acked batch but its HW (and HW checkpoint) is still 0 when it
    // restarts. Truncating to the HW (pre-KIP-101) would drop the batch; if 2 is then elected,
    // an acknowledged write is gone. Truncating by leader epoch keeps it.
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l = sim.leader();
    const p = l.appendAsLeader(batchOf('acked'), { acks: 'all', timeoutMs: 30_000 });
    sim.fetch(2);
    sim.fetch(3);
    sim.fetch(2); // leader: HW still 0 (3 has not reported offset 1 yet), so 2 learns HW 0
    sim.fetch(3); // HW 1: acknowledged
    await expect(p).resolves.toMatchObject({ baseOffset: 0, hw: 1 });
    expect(sim.p(2).highWatermark).toBe(0);
    sim.stop(2);
    sim.start(2);
    sim.heartbeat(2);
    expect(sim.p(2).highWatermark).toBe(0);
    expect(sim.fetch(2, 1 << 20, true)).toBe(0); // truncation only, then the broker stalls
    expect(sim.p(2).logEndOffset).toBe(1);
    sim.stop(1);
    for (let i = 0; i < 16; i++) await sim.tick(100);
    expect(sim.leaderId).toBe(2);
    await sim.replicate();
    const h = sim.p(2).logHash(1);
    expect(sim.p(3).logHash(1).hash).toBe(h.hash);
    expect([...recordsOf(sim.p(2).log.read(0, 1 << 20).data)].map((r) => r.value!.toString())).toEqual(['acked']);
  });

  it('KIP-101 scenario 2: replicas with different batches at the same offset in different epochs converge', async () => {
    // A (1) leads epoch 0: m1, m2 both replicated to B (2), A's HW 2. Power fails on both; B's
    // page cache held m2 unflushed, so B comes back with m1 only. B, the last ISR member, is
    // elected (epoch 2) and writes m3 at offset 1. A returns with HW 2: truncating to its HW
    // would keep m2 at offset 1 where B has m3. The epoch answer (epoch 0 ends at 1) cuts it.
    sim = new SimCluster({ brokers: [1, 2], minInsyncReplicas: 1 });
    const a = sim.p(1);
    for (const m of ['m1', 'm2']) {
      const p = a.appendAsLeader(batchOf(m), { acks: 'all', timeoutMs: 1000 });
      sim.fetch(2);
      sim.fetch(2);
      await p;
    }
    expect(a.highWatermark).toBe(2);
    sim.stop(1);
    sim.stop(2);
    const bLog = Log.open(path.join(sim.node(2).dataDir, 't-0'));
    bLog.truncateTo(1); // what the power cut took from B's page cache
    bLog.close();
    for (let i = 0; i < 16; i++) await sim.tick(100);
    expect(sim.leaderId).toBe(-1);
    sim.start(2);
    sim.heartbeat(2);
    const b = sim.p(2);
    expect(b.role).toBe('leader');
    expect(b.leaderEpoch).toBe(2);
    await b.appendAsLeader(batchOf('m3'), { acks: 1, timeoutMs: 1000 });
    sim.start(1);
    sim.heartbeat(1);
    const a2 = sim.p(1);
    // before: same offsets, different bytes; A's HW covers the divergent batch
    expect(a2.logEndOffset).toBe(2);
    expect(a2.highWatermark).toBe(2);
    expect(a2.log.read(1, 1 << 20).data.equals(b.log.read(1, 1 << 20).data)).toBe(false);
    expect(b.endOffsetForEpoch(a2.latestLogEpoch)).toEqual({ leaderEpoch: 0, endOffset: 1 });
    await sim.replicate();
    expect(a2.logHash(2).hash).toBe(b.logHash(2).hash);
    expect([...recordsOf(a2.log.read(0, 1 << 20).data)].map((r) => r.value!.toString())).toEqual(['m1', 'm3']);
    expect(a2.metrics().truncations).toBe(1);
    expect(a2.epochCache.entries).toEqual([
      { epoch: 0, startOffset: 0 },
      { epoch: 2, startOffset: 1 },
    ]);
  });

  it('unclean election picks an out-of-sync replica only when enabled and records it', async () => {
    for (const unclean of [false, true]) {
      sim = new SimCluster({ minInsyncReplicas: 1, replicaLagTimeMaxMs: 2_000, uncleanLeaderElection: unclean });
      const l = sim.leader();
      await l.appendAsLeader(batchOf('shared'), { acks: 1, timeoutMs: 1000 });
      await sim.replicate();
      // followers stall and leave the ISR; the leader keeps writing alone
      sim.pause(2);
      sim.pause(3);
      for (let i = 0; i < 25; i++) await sim.tick(100);
      // 2 and 3 missed heartbeats too: fenced, out of the ISR
      expect(sim.controllerIsr).toEqual([1]);
      await l.appendAsLeader(batchOf('only-on-1'), { acks: 'all', timeoutMs: 1000 });
      sim.stop(1);
      sim.resume(2);
      sim.resume(3);
      for (let i = 0; i < 20; i++) await sim.tick(100);
      const st = sim.controller.state();
      if (!unclean) {
        expect(sim.leaderId).toBe(-1);
        expect(st.events.some((e) => e.unclean)).toBe(false);
        expect(sim.p(2).role).toBe('none');
        const err = await sim.p(2).appendAsLeader(batchOf('x'), { acks: 1, timeoutMs: 1000 }).catch((e) => e);
        expect(codeOf(err)).toBe('NOT_LEADER_OR_FOLLOWER');
        // the last ISR member returns and is elected: nothing lost
        sim.start(1);
        sim.heartbeat(1);
        expect(sim.leaderId).toBe(1);
        expect(sim.p(1).logEndOffset).toBe(2);
      } else {
        expect(sim.leaderId).toBe(2);
        const ev = st.events.find((e) => e.unclean);
        expect(ev).toMatchObject({ kind: 'election', leader: 2, isr: [2], unclean: true });
        // the acknowledged 'only-on-1' is lost: that is what unclean election trades away
        const l2 = sim.p(2);
        expect(l2.logEndOffset).toBe(1);
        await l2.appendAsLeader(batchOf('after-unclean'), { acks: 1, timeoutMs: 1000 });
        sim.start(1);
        await sim.tick(100);
        await sim.replicate();
        expect(sim.p(1).logHash(2).hash).toBe(l2.logHash(2).hash);
      }
      sim.close();
      sim = null;
    }
  });

  it('epoch cache and HW checkpoints survive a restart', async () => {
    sim = new SimCluster({ minInsyncReplicas: 2 });
    const l = sim.leader();
    const p = l.appendAsLeader(batchOf('a', 'b'), { acks: 'all', timeoutMs: 10_000 });
    await sim.replicate();
    await p;
    await sim.tick(1000); // HW checkpoint (at most once a second)
    const f = sim.p(3);
    expect(f.highWatermark).toBe(2);
    const entries = f.epochCache.entries;
    expect(entries).toEqual([{ epoch: 0, startOffset: 0 }]);
    sim.stop(3);
    sim.start(3);
    expect(sim.p(3).epochCache.entries).toEqual(entries);
    expect(sim.p(3).highWatermark).toBe(2);
    expect(sim.p(3).latestLogEpoch).toBe(0);
  });
});
