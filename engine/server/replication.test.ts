// Three real broker processes (RF 3) and the controller over HTTP: acks=all waits for the
// followers; a stopped (SIGSTOP) follower leaves the ISR after replica.lag.time.max.ms and
// acks=all then follows min.insync.replicas.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from './cluster.ts';
import { request } from './http-client.ts';
import { brokerCommand, partitionMetrics, produce, tempDir, waitFor } from './test-support.ts';

const LAG_MS = 1000;

async function startRf3(dir: string, minIsr: number): Promise<Cluster> {
  return startCluster({
    brokers: 3,
    dir,
    port: 0,
    brokerCommand: brokerCommand(),
    topics: [{ name: 't', partitions: 1, replicationFactor: 3 }],
    set: [`replica.lag.time.max.ms=${LAG_MS}`, `min.insync.replicas=${minIsr}`, 'replica.fetch.wait.max.ms=500'],
    // Longer than the lag time, so the ISR shrinks because the leader saw the follower lag,
    // not because the controller fenced a broker that stopped heartbeating.
    controller: { sessionTimeoutMs: 10_000 },
  });
}

function followersOf(c: Cluster): number[] {
  const l = c.leaderOf('t', 0)!;
  return c.brokers.map((b) => b.id).filter((id) => id !== l.id);
}

describe('replication over HTTP, min.insync.replicas=1', () => {
  let dir: string;
  let c: Cluster;
  beforeAll(async () => {
    dir = tempDir('repl-min1');
    c = await startRf3(dir, 1);
  });
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('acks=all answers only after every ISR follower has the batch, and the HW moves on all replicas', async () => {
    const leader = c.leaderOf('t', 0)!;
    expect(leader.isr).toHaveLength(3);
    let last = -1;
    for (let i = 0; i < 20; i++) {
      const a = await produce(leader.url, 't', [`all-${i}`, `all-${i}b`], 'all');
      expect(a.status).toBe(200);
      expect(a.latencyUs).toBeGreaterThan(0);
      last = a.body.lastOffset as number;
      expect(a.body.hw as number).toBeGreaterThan(last);
      // The leader answered because both followers fetched past the batch: their LEO shows it now.
      for (const id of followersOf(c)) expect((await partitionMetrics(c.broker(id).url, 't')).leo).toBeGreaterThan(last);
    }
    // Followers learn the HW from their next fetch.
    for (const b of c.brokers) await waitFor(`HW > ${last} on broker ${b.id}`, async () => (await partitionMetrics(b.url, 't')).hw > last);
  });

  it('answers a produce to a follower with 421 NOT_LEADER_OR_FOLLOWER naming the leader, appending nothing', async () => {
    const leader = c.leaderOf('t', 0)!;
    const f = c.broker(followersOf(c)[0]);
    const before = await partitionMetrics(f.url, 't');
    const a = await produce(f.url, 't', ['misdirected'], '1');
    expect(a.status).toBe(421);
    expect(a.body).toMatchObject({ error: 'NOT_LEADER_OR_FOLLOWER', leader: leader.id, leaderUrl: leader.url });
    expect((await partitionMetrics(f.url, 't')).leo).toBe(before.leo);
  });

  it('a SIGSTOPped follower leaves the ISR after replica.lag.time.max.ms; acks=all then succeeds with min ISR 1 even with both followers stopped', async () => {
    const leader = c.leaderOf('t', 0)!;
    const [f1, f2] = followersOf(c);
    await c.killBroker(f1, 'SIGSTOP');
    await c.killBroker(f2, 'SIGSTOP');
    try {
      const t0 = Date.now();
      const a = await produce(leader.url, 't', ['while-stopped'], 'all', 0, 15_000);
      const waited = Date.now() - t0;
      expect(a.status).toBe(200);
      // It waited for the shrink: at least the lag time, but far less than the request timeout.
      expect(waited).toBeGreaterThanOrEqual(LAG_MS * 0.8);
      expect(waited).toBeLessThan(10_000);
      await waitFor('ISR = [leader]', async () => (await partitionMetrics(leader.url, 't')).isr.length === 1);
      const events = c.controller.state().events.filter((e) => e.kind === 'isr-change' && e.topic === 't');
      expect(events.some((e) => e.reason.includes('alter-partition') && e.reason.includes('shrink'))).toBe(true);
      const fast = await produce(leader.url, 't', ['isr-of-one'], 'all');
      expect(fast.status).toBe(200);
    } finally {
      await c.killBroker(f1, 'SIGCONT');
      await c.killBroker(f2, 'SIGCONT');
    }
    // Resumed followers catch up and the leader proposes them back.
    await waitFor('ISR back to 3', async () => (await partitionMetrics(leader.url, 't')).isr.length === 3, 15_000);
  });
});

describe('replication over HTTP, min.insync.replicas=2', () => {
  let dir: string;
  let c: Cluster;
  beforeAll(async () => {
    dir = tempDir('repl-min2');
    c = await startRf3(dir, 2);
  });
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with one follower stopped acks=all succeeds (ISR 2); with both stopped it fails NOT_ENOUGH_REPLICAS and appends nothing', async () => {
    const leader = c.leaderOf('t', 0)!;
    const [f1, f2] = followersOf(c);
    await c.killBroker(f1, 'SIGSTOP');
    try {
      const a = await produce(leader.url, 't', ['one-stopped'], 'all', 0, 15_000);
      expect(a.status).toBe(200);
      await waitFor('ISR of 2', async () => (await partitionMetrics(leader.url, 't')).isr.length === 2);
      await c.killBroker(f2, 'SIGSTOP');
      // The waiting request fails once the ISR shrinks below the minimum (after its append).
      const b = await produce(leader.url, 't', ['both-stopped'], 'all', 0, 15_000);
      expect(b.status).toBe(503);
      expect(b.body.error).toBe('NOT_ENOUGH_REPLICAS_AFTER_APPEND');
      await waitFor('ISR of 1', async () => (await partitionMetrics(leader.url, 't')).isr.length === 1);
      // Now the check happens before the append: nothing is written.
      const leo = (await partitionMetrics(leader.url, 't')).leo;
      const r = await produce(leader.url, 't', ['rejected'], 'all');
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ error: 'NOT_ENOUGH_REPLICAS', minInsyncReplicas: 2 });
      expect((await partitionMetrics(leader.url, 't')).leo).toBe(leo);
      // acks=1 does not care about the ISR.
      expect((await produce(leader.url, 't', ['acks1'], '1')).status).toBe(200);
    } finally {
      await c.killBroker(f1, 'SIGCONT');
      await c.killBroker(f2, 'SIGCONT');
    }
    await waitFor('ISR back to 3', async () => (await partitionMetrics(leader.url, 't')).isr.length === 3, 15_000);
    expect((await produce(leader.url, 't', ['recovered'], 'all')).status).toBe(200);
    const m = JSON.parse((await request(`${leader.url}/v1/metrics`)).body.toString()) as { http: { errors: Record<string, number> } };
    expect(m.http.errors.NOT_ENOUGH_REPLICAS).toBeGreaterThanOrEqual(1);
  });
});
