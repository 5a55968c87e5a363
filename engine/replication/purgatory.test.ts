import { afterEach, describe, expect, it, vi } from 'vitest';
import { BrokerError } from './errors.ts';
import { DelayedProducePurgatory } from './purgatory.ts';

function settled<T>(p: Promise<T>): { state: () => 'pending' | 'resolved' | 'rejected'; error: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  p.then(
    () => (state = 'resolved'),
    (e) => {
      state = 'rejected';
      error = e;
    },
  );
  return { state: () => state, error: () => error };
}
const tickOnce = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('DelayedProducePurgatory', () => {
  it('completes exactly the requests whose required offset the HW reached, in order', async () => {
    const pg = new DelayedProducePurgatory();
    const a = settled(pg.add(5, 10_000));
    const b = settled(pg.add(9, 10_000));
    const c = settled(pg.add(12, 10_000));
    expect(pg.size).toBe(3);
    expect(pg.complete(4, () => null)).toBe(0);
    expect(pg.complete(9, () => null)).toBe(2);
    await tickOnce();
    expect([a.state(), b.state(), c.state()]).toEqual(['resolved', 'resolved', 'pending']);
    expect(pg.size).toBe(1);
    pg.complete(100, () => new BrokerError('NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'isr 1 < 2'));
    await tickOnce();
    expect(c.state()).toBe('rejected');
    expect((c.error() as BrokerError).code).toBe('NOT_ENOUGH_REPLICAS_AFTER_APPEND');
    expect(pg.size).toBe(0);
  });

  it('times out with REQUEST_TIMED_OUT and leaves no timer behind', async () => {
    const pg = new DelayedProducePurgatory();
    const t0 = Date.now();
    const err = await pg.add(3, 30).catch((e) => e);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    expect(err).toBeInstanceOf(BrokerError);
    expect(err.code).toBe('REQUEST_TIMED_OUT');
    expect(pg.size).toBe(0);
    expect(pg.expired).toBe(1);
    // a later HW advance must not touch the expired request again
    expect(pg.complete(10, () => null)).toBe(0);
  });

  it('failAll rejects everything and clears the timers (the process can exit)', async () => {
    const pg = new DelayedProducePurgatory();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const ps = [pg.add(1, 60_000), pg.add(2, 60_000)].map((p) => p.catch((e: BrokerError) => e.code));
    expect(vi.getTimerCount()).toBe(2);
    expect(pg.failAll(() => new BrokerError('NOT_LEADER_OR_FOLLOWER', 'lost leadership'))).toBe(2);
    expect(await Promise.all(ps)).toEqual(['NOT_LEADER_OR_FOLLOWER', 'NOT_LEADER_OR_FOLLOWER']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects a required offset below the last one (offsets are assigned monotonically)', () => {
    const pg = new DelayedProducePurgatory();
    void pg.add(10, 1000).catch(() => {});
    expect(() => pg.add(9, 1000)).toThrow(/below the last one parked/);
    pg.failAll(() => new BrokerError('NOT_LEADER_OR_FOLLOWER', 'x'));
  });

  it('handles many requests with O(completed) work per HW advance', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const pg = new DelayedProducePurgatory();
    const n = 50_000;
    const ps: Promise<void>[] = [];
    for (let i = 1; i <= n; i++) ps.push(pg.add(i, 60_000));
    let checks = 0;
    for (let hw = 1000; hw <= n; hw += 1000) pg.complete(hw, () => (checks++, null));
    await Promise.all(ps);
    expect(pg.size).toBe(0);
    expect(pg.completed).toBe(n);
    // the completion check runs once per advance, not per request
    expect(checks).toBe(n / 1000);
    expect(vi.getTimerCount()).toBe(0);
  });
});
