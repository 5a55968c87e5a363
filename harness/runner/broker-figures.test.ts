// The fault's broker figures: a warm-up read before the load, a watch during it where the
// target allows one, and at the moment a fresh read when it answers in time, else the watch's
// latest. The reads here are a seam (a function answering after a set delay); the real reads are
// in harness/runner/power-cut.vm.test.ts (a TCG guest, no watch) and leader-kill.test.ts
// (broker processes, watched).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { BrokerFiguresWatch, WATCH_PACE, brokerFigures, summarizeBrokers } from './broker-figures.ts';
import type { BrokerSummary } from '../results/types.ts';
import type { ClusterClient, PartitionFigures } from '../drivers/types.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { TargetCapabilities } from '../targets/registry.ts';
import { KAFKA_STYLE_LOG_FILES } from '../targets/log-files.ts';
import { NATS_KIND } from '../targets/nats/nats-kind.ts';

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
  it('warms up with one read before the load and keeps nothing of it; without start() it reads nothing more', async () => {
    const r = reads(() => 30);
    const watch = new BrokerFiguresWatch(r.read);
    const warm = await watch.warmUp(1000);
    expect('tookMs' in warm && warm.tookMs >= 25).toBe(true);
    await delay(300);
    expect(r.sent.length).toBe(1);
    // The fault's read is the second; the warm-up's figures (read 0) are never the answer.
    const got = await watch.atFault(1000);
    expect('missing' in got ? null : got.figures.flushes).toBe(1);
  });

  it('says why a warm-up failed or ran out', async () => {
    expect(await new BrokerFiguresWatch(reads(() => 5, () => true).read).warmUp(500)).toEqual({ missing: 'read 0 failed' });
    expect(await new BrokerFiguresWatch(reads(() => 2000).read).warmUp(100)).toEqual({ missing: 'no answer within 100 ms' });
  });

  it('watches one read at a time at its pace, and at the moment takes a fresh read that answers in time', async () => {
    const r = reads(() => 20);
    const watch = new BrokerFiguresWatch(r.read);
    watch.start({ minPauseMs: 250, factor: 1 });
    await delay(700);
    // 20 ms reads, then a 250 ms pause: two or three reads in 700 ms, never two at once.
    expect(r.sent.length).toBeGreaterThanOrEqual(2);
    expect(r.sent.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < r.sent.length; i++) expect(r.sent[i]! - r.sent[i - 1]!).toBeGreaterThanOrEqual(250);
    const momentMs = Date.now();
    const got = await watch.atFault(2000);
    if ('missing' in got) throw new Error(got.missing);
    expect(got.figures.flushes).toBe(r.sent.length - 1);
    expect(got.startedMs).toBeGreaterThanOrEqual(momentMs);
    expect(got.answeredMs).toBeLessThan(momentMs + 200);
    expect(got.notes).toEqual([`read ${got.figures.flushes} answered`]);
    // Stopped: no read after the fresh one.
    const count = r.sent.length;
    await delay(400);
    expect(r.sent.length).toBe(count);
  });

  it('paces the watch of a trial (WATCH_PACE) at one read a second or less', async () => {
    const r = reads(() => 20);
    const watch = new BrokerFiguresWatch(r.read);
    watch.start(WATCH_PACE);
    await delay(1500);
    watch.stop();
    expect(r.sent.length).toBe(2);
    expect(r.sent[1]! - r.sent[0]!).toBeGreaterThanOrEqual(1000);
  });

  it("takes the watch's latest read when the fresh read is late, without waiting past freshWithinMs", async () => {
    // Reads 0 and 1 answer at once; the fresh read (2) takes 3 s.
    const r = reads((n) => (n < 2 ? 5 : 3000));
    const watch = new BrokerFiguresWatch(r.read);
    watch.start({ minPauseMs: 250, factor: 1 });
    await delay(350);
    expect(r.sent.length).toBe(2);
    const momentMs = Date.now();
    const got = await watch.atFault(200);
    const waited = Date.now() - momentMs;
    if ('missing' in got) throw new Error(got.missing);
    expect(got.figures.flushes).toBe(1);
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(1000);
  });

  it('says why when there is no figure: the fresh read failed, or ran out with no watch', async () => {
    const failing = new BrokerFiguresWatch(reads(() => 5, () => true).read);
    const startA = Date.now();
    expect(await failing.atFault(500)).toEqual({ missing: 'read 0 failed' });
    expect(Date.now() - startA).toBeLessThan(400);
    const stuck = new BrokerFiguresWatch(reads(() => 5000).read);
    const startB = Date.now();
    expect(await stuck.atFault(300)).toEqual({ missing: 'no answer within 300 ms' });
    expect(Date.now() - startB).toBeLessThan(1000);
  });
});

describe('summarizeBrokers', () => {
  const part = (over: Partial<PartitionFigures>): PartitionFigures => ({ topic: 't', partition: 0, role: 'leader', leaderEpoch: 1, hw: 10, leo: 10, isr: [1], bytes: 4096, ...over });
  const dirs = mkdtempSync(path.join(os.tmpdir(), 'durolab-broker-figures-'));
  afterAll(() => rmSync(dirs, { recursive: true, force: true }));
  const touch = (rel: string, bytes: number) => {
    mkdirSync(path.dirname(path.join(dirs, rel)), { recursive: true });
    writeFileSync(path.join(dirs, rel), Buffer.alloc(bytes));
  };

  it('sums what brokers report (durolab: flushes, times, rolls) and leaves out what none reports (Kafka, NATS), never 0', () => {
    const durolab = summarizeBrokers([{ brokerId: 1, partitions: [part({ flushes: 7, rolls: 1, flushTimeUs: { p50: 90, p99: 200, p999: 300, max: 400 } })] }], []);
    expect(durolab).toMatchObject({ flushes: 7, rolls: 1, flushTimeUs: { p99: 200 }, bytes: 4096 });
    const kafka = summarizeBrokers([{ brokerId: 1, partitions: [part({})] }, { brokerId: 2, partitions: [part({ role: 'follower' })] }], []);
    expect(kafka).toEqual({ bytes: 4096 });
  });

  it("counts segment files by the system's own names: Kafka's .log/.index beside NATS's message blocks", () => {
    touch('kafka/t-0/00000000000000000000.log', 100);
    touch('kafka/t-0/00000000000000000000.index', 10);
    touch('kafka/t-0/00000000000000000000.timeindex', 10);
    touch('kafka/t-0/00000000000000000100.log', 50);
    touch('nats/jetstream/$G/streams/s/msgs/1.blk', 300);
    touch('nats/jetstream/$G/streams/s/msgs/2.blk', 200);
    touch('nats/jetstream/$G/streams/s/meta.inf', 20);
    touch('nats/jetstream/$SYS/_js_/S-R3F-abc/msgs/1.blk', 4000);
    const kafka = summarizeBrokers([], [path.join(dirs, 'kafka')], KAFKA_STYLE_LOG_FILES);
    expect(kafka).toEqual({ segments: 2, indexFiles: 2, segmentsFrom: 'host-files', bytes: 150 });
    const nats = summarizeBrokers([], [path.join(dirs, 'nats')], NATS_KIND.capabilities.logFiles);
    expect(nats).toEqual({ segments: 2, segmentsFrom: 'host-files', bytes: 500 });
    // Kafka's names find nothing of NATS's store, nor NATS's of Kafka's: the names are the system's.
    expect(summarizeBrokers([], [path.join(dirs, 'nats')], KAFKA_STYLE_LOG_FILES).segments).toBe(0);
    // No names (a target whose data is not on this host): the brokers' own count, else nothing.
    expect(summarizeBrokers([{ brokerId: 1, partitions: [part({ segments: 3 })] }], [])).toMatchObject({ segments: 3, segmentsFrom: 'broker' });
    // No names and no broker figures: nothing was read, so not even the bytes (0 would claim an empty log).
    expect(summarizeBrokers([], [path.join(dirs, 'kafka')])).toEqual({});
  });

  it('claims no figure when no broker answered, and names the brokers that did not', async () => {
    const cluster = { brokers: [1, 2, 3].map((id) => ({ id, dataDir: path.join(dirs, `none-${id}`) })) } as unknown as RunningCluster;
    const caps = { dataOnHost: false } as TargetCapabilities;
    const down = [3, 1, 2].map((brokerId) => ({ brokerId, reason: 'ECONNREFUSED' }));
    const lines: string[] = [];
    const nobody = await brokerFigures({ brokerMetrics: async () => ({ brokers: [], down }) } as unknown as ClusterClient, cluster, caps, (l) => lines.push(l));
    expect(nobody).toEqual({ notAnswered: [1, 2, 3] });
    expect(nobody.bytes).toBeUndefined();
    expect(lines).toEqual(['broker 3: no figures (ECONNREFUSED)', 'broker 1: no figures (ECONNREFUSED)', 'broker 2: no figures (ECONNREFUSED)']);
    // Some answered: their sums, and who is missing from them.
    const some = await brokerFigures(
      { brokerMetrics: async () => ({ brokers: [{ brokerId: 1, partitions: [part({ bytes: 512, flushes: 4 })] }], down: down.filter((d) => d.brokerId !== 1) }) } as unknown as ClusterClient,
      cluster,
      caps,
      () => undefined,
    );
    expect(some).toEqual({ flushes: 4, bytes: 512, notAnswered: [2, 3] });
    // A leader that reported 0 bytes measured an empty log: 0 stays.
    expect(summarizeBrokers([{ brokerId: 1, partitions: [part({ bytes: 0 })] }], [])).toEqual({ bytes: 0 });
  });
});
