import { describe, expect, it } from 'vitest';
import { Controller } from './controller.ts';
import { BrokerError } from './errors.ts';

/** eligible.leader.replicas off unless asked: most of these tests are about the rules without it (controller-elr.test.ts has its own). */
function setup(opts: { unclean?: boolean; brokers?: number[] } = {}) {
  let t = 1000;
  const clock = { now: () => t, advance: (ms: number) => (t += ms) };
  const c = new Controller({ sessionTimeoutMs: 1500, uncleanLeaderElection: opts.unclean ?? false, eligibleLeaderReplicas: false, now: clock.now });
  const ids = opts.brokers ?? [1, 2, 3];
  for (const id of ids) c.registerBroker(id, `http://127.0.0.1:${9000 + id}`);
  return { c, clock, beatAll: (except: number[] = []) => ids.filter((i) => !except.includes(i)).forEach((i) => c.heartbeat(i, `http://127.0.0.1:${9000 + i}`)) };
}

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof BrokerError) return e.code;
    throw e;
  }
  return 'no error';
}

describe('Controller', () => {
  it('creates topics with Kafka round-robin placement, leader = first replica, epoch 0', () => {
    const { c } = setup();
    c.createTopic('t', 6, 3, [3, 1, 2]);
    const ps = c.state().partitions;
    expect(ps.map((p) => p.replicas)).toEqual([
      [1, 2, 3],
      [2, 3, 1],
      [3, 1, 2],
      [1, 3, 2],
      [2, 1, 3],
      [3, 2, 1],
    ]);
    expect(ps.every((p) => p.leader === p.replicas[0] && p.leaderEpoch === 0 && p.isr.join() === p.replicas.join())).toBe(true);
    // leaders spread evenly
    expect(ps.map((p) => p.leader).sort()).toEqual([1, 1, 2, 2, 3, 3]);
    c.createTopic('u', 2, 1, [1, 2, 3]);
    expect(c.state().partitions.filter((p) => p.topic === 'u').map((p) => p.replicas)).toEqual([[1], [2]]);
  });

  it('rejects bad topic requests with Kafka error names', () => {
    const { c } = setup();
    c.createTopic('t', 1, 1, [1]);
    expect(code(() => c.createTopic('t', 1, 1, [1]))).toBe('TOPIC_ALREADY_EXISTS');
    expect(code(() => c.createTopic('bad name', 1, 1, [1]))).toBe('INVALID_TOPIC_EXCEPTION');
    expect(code(() => c.createTopic('x', 0, 1, [1]))).toBe('INVALID_PARTITIONS');
    expect(code(() => c.createTopic('x', 1, 4, [1, 2, 3]))).toBe('INVALID_REPLICATION_FACTOR');
    expect(code(() => c.createTopic('x', 1, 1, [1, 1]))).toBe('INVALID_REQUEST');
  });

  it('heartbeat answers the partitions a broker replicates and the broker list', () => {
    const { c } = setup();
    c.createTopic('t', 3, 2, [1, 2, 3]);
    const a = c.heartbeat(2, 'http://127.0.0.1:9102');
    expect(a.assignments.map((p) => p.partition).sort()).toEqual([0, 1]);
    expect(a.brokers.find((b) => b.id === 2)?.url).toBe('http://127.0.0.1:9102');
    expect(a.brokers.every((b) => b.alive)).toBe(true);
  });

  it('fences a silent leader, elects the first alive ISR replica with leaderEpoch+1, records it', () => {
    const { c, clock, beatAll } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    clock.advance(1000);
    beatAll([1]);
    clock.advance(600); // broker 1 silent for 1600 ms > 1500
    c.tick();
    const p = c.assignment('t', 0)!;
    expect(p).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2, 3] });
    expect(p.partitionEpoch).toBeGreaterThan(0);
    const ev = c.state().events;
    expect(ev.find((e) => e.kind === 'fenced')).toMatchObject({ brokerId: 1 });
    expect(ev.at(-1)).toMatchObject({ kind: 'election', leader: 2, leaderEpoch: 1, isr: [2, 3] });
    expect(ev.at(-1)!.unclean).toBeUndefined();
    // the old leader comes back: alive, but not in the ISR until the leader proposes it
    c.heartbeat(1, 'http://127.0.0.1:9001');
    expect(c.assignment('t', 0)).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2, 3] });
    expect(c.state().brokers.find((b) => b.id === 1)!.alive).toBe(true);
  });

  it('a leader back as a new process within its session (a crash and a fast restart) is fenced first and rejoins as a follower (KIP-966)', () => {
    const { c, clock } = setup();
    const url = (id: number) => `http://127.0.0.1:${9000 + id}`;
    for (const id of [1, 2, 3]) c.heartbeat(id, url(id), undefined, `inc-${id}-a`);
    c.createTopic('t', 1, 3, [1, 2, 3]);
    clock.advance(300);
    // The same incarnation: nothing changes.
    c.heartbeat(1, url(1), undefined, 'inc-1-a');
    expect(c.assignment('t', 0)).toMatchObject({ leader: 1, leaderEpoch: 0, isr: [1, 2, 3] });
    // Broker 1 crashed and its new process registers 600 ms later, before the 1500 ms session ends.
    clock.advance(600);
    c.heartbeat(1, url(1), undefined, 'inc-1-b');
    const p = c.assignment('t', 0)!;
    expect(p).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2, 3] });
    const ev = c.state().events;
    const fenced = ev.find((e) => e.kind === 'fenced')!;
    expect(fenced.brokerId).toBe(1);
    expect(fenced.reason).toBe('broker 1 fenced: a new process (incarnation inc-1-a -> inc-1-b) registered 600 ms after the last heartbeat, within the session timeout of 1500 ms');
    expect(ev.find((e) => e.kind === 'unfenced')).toMatchObject({ brokerId: 1 });
    const b1 = c.state().brokers.find((b) => b.id === 1)!;
    expect(b1).toMatchObject({ alive: true, incarnation: 'inc-1-b' });
    // The new process heartbeats on: no more fencing, and it stays out of the ISR until the leader adds it.
    clock.advance(100);
    c.heartbeat(1, url(1), undefined, 'inc-1-b');
    c.tick();
    expect(c.assignment('t', 0)).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2, 3] });
    expect(c.state().events.filter((e) => e.kind === 'fenced')).toHaveLength(1);
  });

  it('a last ISR member back as a new process: offline for a moment, then elected again at a new epoch; no incarnation sent: nothing seen', () => {
    const { c, clock } = setup({ brokers: [1] });
    c.heartbeat(1, 'http://127.0.0.1:9001', undefined, 'a');
    c.createTopic('solo', 1, 1, [1]);
    clock.advance(200);
    c.heartbeat(1, 'http://127.0.0.1:9001', undefined, 'b');
    expect(c.assignment('solo', 0)).toMatchObject({ leader: 1, leaderEpoch: 2, isr: [1] });
    // It sent no proof of a clean shutdown: recorded; with eligible leader replicas off it changes nothing more (controller-elr.test.ts).
    expect(c.state().events.map((e) => `${e.kind}:${e.leader}:${e.leaderEpoch}`)).toEqual(['election:1:0', 'fenced:-1:-1', 'election:-1:1', 'unclean-shutdown:-1:-1', 'unfenced:-1:-1', 'election:1:2']);
    // A broker that sends no incarnation (an older one) is only fenced when its session expires.
    const legacy = setup();
    legacy.c.createTopic('t', 1, 3, [1, 2, 3]);
    legacy.clock.advance(300);
    legacy.c.heartbeat(1, 'http://127.0.0.1:9001');
    expect(legacy.c.assignment('t', 0)).toMatchObject({ leader: 1, leaderEpoch: 0 });
  });

  it('a fenced follower leaves the ISR without a leader epoch bump', () => {
    const { c, clock, beatAll } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    clock.advance(1000);
    beatAll([3]);
    clock.advance(600);
    c.tick();
    expect(c.assignment('t', 0)).toMatchObject({ leader: 1, leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2] });
    expect(c.state().events.at(-1)).toMatchObject({ kind: 'isr-change', isr: [1, 2] });
  });

  it('alterPartition: accepted only from the current leader at the current epochs; bumps partitionEpoch', () => {
    const { c } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    const req = { topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1, 2] };
    expect(code(() => c.alterPartition({ ...req, brokerId: 2 }))).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(code(() => c.alterPartition({ ...req, leaderEpoch: 1 }))).toBe('FENCED_LEADER_EPOCH');
    expect(code(() => c.alterPartition({ ...req, isr: [2, 3] }))).toBe('INVALID_REQUEST');
    expect(code(() => c.alterPartition({ ...req, isr: [1, 4] }))).toBe('INVALID_REQUEST');
    expect(code(() => c.alterPartition({ ...req, partition: 7 }))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    const r = c.alterPartition(req);
    expect(r).toMatchObject({ leader: 1, leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2] });
    // the same request again is stale now
    expect(code(() => c.alterPartition(req))).toBe('FENCED_LEADER_EPOCH');
    const back = c.alterPartition({ ...req, partitionEpoch: 1, isr: [3, 1, 2] });
    expect(back).toMatchObject({ partitionEpoch: 2, isr: [1, 2, 3] });
    expect(c.state().events.filter((e) => e.kind === 'isr-change').map((e) => e.isr)).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
  });

  it('alterPartition refuses to add a fenced broker (KIP-841)', () => {
    const { c, clock, beatAll } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    clock.advance(1600);
    beatAll([3]);
    c.tick(); // 3 fenced, removed from ISR: partitionEpoch 1
    expect(code(() => c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2, 3] }))).toBe(
      'INELIGIBLE_REPLICA',
    );
  });

  it('last ISR member dies: offline without unclean election; it is elected when it returns', () => {
    const { c, clock, beatAll } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    clock.advance(1600);
    beatAll([1]);
    c.tick();
    expect(c.assignment('t', 0)).toMatchObject({ leader: -1, leaderEpoch: 1, isr: [1] });
    const offline = c.state().events.at(-1)!;
    expect(offline.reason).toMatch(/unclean election disabled/);
    // more ticks do not churn epochs
    clock.advance(100);
    beatAll([1]);
    c.tick();
    expect(c.assignment('t', 0)!.leaderEpoch).toBe(1);
    c.heartbeat(1, 'http://127.0.0.1:9001');
    expect(c.assignment('t', 0)).toMatchObject({ leader: 1, leaderEpoch: 2, isr: [1] });
    expect(c.state().events.at(-1)).toMatchObject({ kind: 'election', leader: 1, leaderEpoch: 2 });
  });

  it('unclean election picks an out-of-sync replica only when enabled, and records it', () => {
    for (const unclean of [false, true]) {
      const { c, clock, beatAll } = setup({ unclean });
      c.createTopic('t', 1, 3, [1, 2, 3]);
      c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
      clock.advance(1600);
      beatAll([1]);
      c.tick();
      const p = c.assignment('t', 0)!;
      const last = c.state().events.at(-1)!;
      if (unclean) {
        expect(p).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2] });
        expect(last).toMatchObject({ kind: 'election', leader: 2, unclean: true });
        expect(last.reason).toMatch(/unclean election of out-of-sync replica 2/);
      } else {
        expect(p.leader).toBe(-1);
        expect(c.state().events.some((e) => e.unclean)).toBe(false);
      }
    }
  });

  it('is deterministic: the same calls at the same times give the same events', () => {
    const run = () => {
      const { c, clock, beatAll } = setup({ unclean: true });
      c.createTopic('t', 4, 3, [1, 2, 3]);
      for (let i = 0; i < 20; i++) {
        clock.advance(400);
        beatAll(i % 7 < 4 ? [((i % 3) + 1) as number] : []);
        c.tick();
      }
      return JSON.stringify(c.state());
    };
    expect(run()).toBe(run());
  });
  it('moves a leadership as planned: a new replica order, then the preferred replica elected at epoch+1', () => {
    const { c, clock, beatAll } = setup();
    c.createTopic('t', 1, 3, [1, 2, 3]);
    expect(c.assignment('t', 0)).toMatchObject({ leader: 1, leaderEpoch: 0, replicas: [1, 2, 3] });
    // The leader stays until the election; the reorder only bumps the partition epoch.
    expect(c.reorderReplicas('t', 0, [2, 1, 3])).toMatchObject({ leader: 1, leaderEpoch: 0, partitionEpoch: 1, replicas: [2, 1, 3], isr: [2, 1, 3] });
    expect(c.electPreferred('t', 0)).toMatchObject({ leader: 2, leaderEpoch: 1, partitionEpoch: 2 });
    expect(c.state().events.at(-1)).toMatchObject({ kind: 'election', leader: 2, reason: 'preferred election: 2 replaces 1 (planned move)' });
    expect(code(() => c.electPreferred('t', 0))).toBe('ELECTION_NOT_NEEDED');
    // Another replica set, a duplicate or an unknown partition: refused, nothing changes.
    expect(code(() => c.reorderReplicas('t', 0, [2, 1, 4]))).toBe('INVALID_REPLICA_ASSIGNMENT');
    expect(code(() => c.reorderReplicas('t', 0, [2, 2, 3]))).toBe('INVALID_REPLICA_ASSIGNMENT');
    expect(code(() => c.reorderReplicas('t', 7, [1, 2, 3]))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    // A preferred replica that is fenced (and so out of the ISR) cannot be elected.
    c.reorderReplicas('t', 0, [3, 2, 1]);
    clock.advance(1000);
    beatAll([3]);
    clock.advance(1000);
    c.tick();
    expect(code(() => c.electPreferred('t', 0))).toBe('PREFERRED_LEADER_NOT_AVAILABLE');
    expect(c.assignment('t', 0)).toMatchObject({ leader: 2, leaderEpoch: 1 });
  });
});
