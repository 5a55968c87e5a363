// The fault's broker figures: in mode fresh a read at the moment when it answers in time; in
// mode latest, or when the fresh read is late, the latest read made during the load; with none
// yet, the first to answer. The reads here are a seam (a
// function answering after a set delay); the real reads are in harness/runner/power-cut.vm.test.ts
// (a TCG guest) and leader-kill.test.ts (broker processes).
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { BrokerFiguresWatch, WATCH_PACE, summarizeBrokers } from './broker-figures.ts';
import type { BrokerSummary } from '../results/types.ts';

/** A read answering after `ms(n)` for the n-th read (0-based) with flushes = n, or failing where `fails(n)`. */
function reads(ms: (n: number) => number, fails: (n: number) => boolean = () => false) {
  const sent: number[] = [];
  const read = async (log: (line: string) => void): Promise<BrokerSummary> => {
    const n = sent.length;
    sent.push(Date.now());
    await delay(ms(n));
    if (fails(n)) throw new Error(`read ${n} failed`);
    log(`read ${n} answered`);
    return { ...summarizeBrokers([], []), flushes: n };
  };
  return { read, sent };
}

describe('BrokerFiguresWatch', () => {
  it('reads during the load, one read at a time, and takes a fresh read at the moment when it answers in time', async () => {
    const r = reads(() => 20);
    const watch = new BrokerFiguresWatch(r.read);
    await delay(700);
    // 20 ms reads, then a 250 ms pause: two or three reads in 700 ms, never two at once.
    expect(r.sent.length).toBeGreaterThanOrEqual(2);
    expect(r.sent.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < r.sent.length; i++) expect(r.sent[i] - r.sent[i - 1]).toBeGreaterThanOrEqual(250);
    const momentMs = Date.now();
    const got = await watch.atFault({ mode: 'fresh', freshWithinMs: 2000, waitMs: 10_000 });
    expect('missing' in got).toBe(false);
    if ('missing' in got) return;
    expect(got.figures.flushes).toBe(r.sent.length - 1);
    expect(got.startedMs).toBeGreaterThanOrEqual(momentMs);
    expect(got.answeredMs).toBeLessThan(momentMs + 200);
    expect(got.notes).toEqual([`read ${got.figures.flushes} answered`]);
    // Stopped: no read after the fresh one.
    const count = r.sent.length;
    await delay(400);
    expect(r.sent.length).toBe(count);
  });

  it('paces a fallback watch (fresh mode) at one read a second or less', async () => {
    const r = reads(() => 20);
    const watch = new BrokerFiguresWatch(r.read, WATCH_PACE.fresh);
    await delay(1500);
    watch.stop();
    expect(r.sent.length).toBe(2);
    expect(r.sent[1]! - r.sent[0]!).toBeGreaterThanOrEqual(1000);
  });

  it('takes the latest read of the load when the fresh read is late, without waiting past freshWithinMs', async () => {
    // Reads 0 and 1 answer at once; the fresh read (2) takes 3 s.
    const r = reads((n) => (n < 2 ? 5 : 3000));
    const watch = new BrokerFiguresWatch(r.read);
    await delay(300);
    expect(r.sent.length).toBe(2);
    const momentMs = Date.now();
    const got = await watch.atFault({ mode: 'fresh', freshWithinMs: 200, waitMs: 10_000 });
    const waited = Date.now() - momentMs;
    expect('missing' in got).toBe(false);
    if ('missing' in got) return;
    expect(got.figures.flushes).toBe(1);
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(1000);
  });

  it('in mode latest, takes the latest read at once and sends none at the moment', async () => {
    const r = reads(() => 150);
    const watch = new BrokerFiguresWatch(r.read);
    await delay(600);
    const sent = r.sent.length;
    expect(sent).toBeGreaterThanOrEqual(2);
    const momentMs = Date.now();
    const got = await watch.atFault({ mode: 'latest', freshWithinMs: 2000, waitMs: 10_000 });
    expect(Date.now() - momentMs).toBeLessThan(50);
    expect('missing' in got).toBe(false);
    if ('missing' in got) return;
    expect(got.figures.flushes).toBeLessThan(sent);
    await delay(400);
    expect(r.sent.length).toBe(sent);
  });

  it('in mode latest with no read answered yet, waits for the first', async () => {
    const r = reads(() => 400);
    const watch = new BrokerFiguresWatch(r.read);
    await delay(50);
    const momentMs = Date.now();
    const got = await watch.atFault({ mode: 'latest', freshWithinMs: 2000, waitMs: 10_000 });
    expect('missing' in got).toBe(false);
    if ('missing' in got) return;
    // The read sent at the start (0) or the one sent at the moment (1), whichever answers first.
    expect(got.figures.flushes).toBe(0);
    expect(Date.now() - momentMs).toBeLessThan(400);
  });

  it('without any read yet, waits for the first to answer, the one sent before the moment included', async () => {
    // Read 0 (sent at the start) answers at 600 ms, the fresh one (1) at moment + 2 s.
    const r = reads((n) => (n === 0 ? 600 : 2000));
    const watch = new BrokerFiguresWatch(r.read);
    await delay(100);
    const momentMs = Date.now();
    const got = await watch.atFault({ mode: 'fresh', freshWithinMs: 100, waitMs: 10_000 });
    expect('missing' in got).toBe(false);
    if ('missing' in got) return;
    expect(got.figures.flushes).toBe(0);
    expect(Date.now() - momentMs).toBeLessThan(1500);
  });

  it('says why when no read answers: the last failure, or the wait that ran out', async () => {
    const failing = reads(() => 5, () => true);
    const a = new BrokerFiguresWatch(failing.read);
    await delay(50);
    const startA = Date.now();
    expect(await a.atFault({ mode: 'fresh', freshWithinMs: 500, waitMs: 2000 })).toEqual({ missing: expect.stringMatching(/^read \d failed$/) });
    // Every read failed and none is out: no reason to wait the whole 2 s.
    expect(Date.now() - startA).toBeLessThan(1000);

    const stuck = reads(() => 5000);
    const b = new BrokerFiguresWatch(stuck.read);
    const startB = Date.now();
    expect(await b.atFault({ mode: 'fresh', freshWithinMs: 100, waitMs: 400 })).toEqual({ missing: 'no answer within 400 ms' });
    expect(Date.now() - startB).toBeLessThan(1000);
  });
});
