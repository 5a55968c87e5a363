// Leader failure with real processes: SIGKILL the leader of an RF 3 partition, the controller
// elects a new leader from the ISR, no acks=all record is lost (acks=1 records may be: they
// are counted and printed), and the old leader, restarted, truncates by leader epoch and ends
// byte-identical to the others.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from './cluster.ts';
import { brokerCommand, logHash, partitionMetrics, produce, readAllValues, tempDir, waitFor } from './test-support.ts';

describe('leader failover (3 brokers, RF 3, min.insync.replicas=2)', () => {
  let dir: string;
  let c: Cluster;
  beforeAll(async () => {
    dir = tempDir('failover');
    c = await startCluster({
      brokers: 3,
      dir,
      port: 0,
      brokerCommand: brokerCommand(),
      topics: [{ name: 't', partitions: 1, replicationFactor: 3 }],
      set: ['replica.lag.time.max.ms=1000', 'min.insync.replicas=2'],
      controller: { sessionTimeoutMs: 1000 },
    });
  });
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('elects a new leader from the ISR, loses no acks=all record, and the old leader rejoins byte-identical', async () => {
    const old = c.leaderOf('t', 0)!;
    const ackedAll: string[] = [];
    for (let i = 0; i < 30; i++) {
      const a = await produce(old.url, 't', [`all-${i}`], 'all');
      expect(a.status).toBe(200);
      ackedAll.push(`all-${i}`);
    }
    // A burst of acks=1 produces; the leader dies as soon as the last answer is in, so some of
    // them may not have reached a follower yet.
    const ackedOne: string[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const a = await produce(old.url, 't', [`one-${i}`], '1');
        if (a.status === 200) ackedOne.push(`one-${i}`);
      }),
    );
    const leoAtKill = (await partitionMetrics(old.url, 't')).leo;
    await c.killBroker(old.id, 'SIGKILL');
    const t0 = Date.now();

    const next = await waitFor('a new leader', async () => {
      const l = c.leaderOf('t', 0);
      return l && l.id !== old.id ? l : null;
    });
    await c.waitForLeaders(10_000);
    const electionMs = Date.now() - t0;
    expect(old.isr).toContain(next.id);
    expect(next.leaderEpoch).toBeGreaterThan(old.leaderEpoch);
    const election = c.controller.state().events.find((e) => e.kind === 'election' && e.leaderEpoch === next.leaderEpoch);
    expect(election?.unclean).toBeUndefined();

    const afterFailover = await readAllValues(next.url, 't');
    const have = new Set(afterFailover);
    expect(ackedAll.filter((v) => !have.has(v))).toEqual([]);
    const lostOne = ackedOne.filter((v) => !have.has(v));
    console.log(
      `failover: new leader ${next.id} (epoch ${next.leaderEpoch}) serving ${electionMs} ms after SIGKILL; ` +
        `acks=all lost 0 of ${ackedAll.length}; acks=1 lost ${lostOne.length} of ${ackedOne.length} (old leader LEO ${leoAtKill}; ${afterFailover.length} records up to the new leader's HW)`,
    );

    // New writes under the new epoch, then bring the old leader back.
    for (let i = 0; i < 10; i++) expect((await produce(next.url, 't', [`after-${i}`], 'all')).status).toBe(200);
    await c.restartBroker(old.id);
    const restarted = c.broker(old.id);
    await waitFor('old leader back in the ISR', async () => (await partitionMetrics(next.url, 't')).isr.includes(old.id), 15_000);
    expect((await produce(next.url, 't', ['final'], 'all')).status).toBe(200);

    const leaderM = await partitionMetrics(next.url, 't');
    const ids = c.brokers.map((b) => b.id);
    // Every replica has the same log up to the leader's HW, byte for byte (batches with their offsets and epochs).
    const hashes = await waitFor(
      'all replicas at the leader HW',
      async () => {
        const hs = await Promise.all(ids.map((id) => logHash(c.broker(id).url, 't', 0, leaderM.hw)));
        return hs.every((h) => h.leo >= leaderM.hw && h.hw >= leaderM.hw) ? hs : null;
      },
      10_000,
    );
    expect(new Set(hashes.map((h) => h.hash)).size).toBe(1);
    const oldM = await partitionMetrics(restarted.url, 't');
    expect(oldM.role).toBe('follower');
    expect(oldM.leaderEpoch).toBe(next.leaderEpoch);
    const values = await readAllValues(next.url, 't');
    expect(values.slice(-1)).toEqual(['final']);
    expect(ackedAll.every((v) => values.includes(v))).toBe(true);
  });
});

describe('unclean leader election (2 brokers, RF 2, unclean.leader.election.enable=true)', () => {
  let dir: string;
  let c: Cluster;
  beforeAll(async () => {
    dir = tempDir('unclean');
    c = await startCluster({
      brokers: 2,
      dir,
      port: 0,
      brokerCommand: brokerCommand(),
      topics: [{ name: 'u', partitions: 1, replicationFactor: 2 }],
      set: ['replica.lag.time.max.ms=800', 'min.insync.replicas=1'],
      controller: { sessionTimeoutMs: 1000, uncleanLeaderElection: true },
    });
  });
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('elects the out-of-sync replica, records it as unclean, and the old leader truncates its divergent tail on return', async () => {
    const old = c.leaderOf('u', 0)!;
    const f = c.brokers.find((b) => b.id !== old.id)!;
    for (let i = 0; i < 5; i++) expect((await produce(old.url, 'u', [`committed-${i}`], 'all')).status).toBe(200);
    await c.killBroker(f.id, 'SIGSTOP');
    await waitFor('ISR = [old leader]', async () => (await partitionMetrics(old.url, 'u')).isr.length === 1, 10_000);
    for (let i = 0; i < 10; i++) expect((await produce(old.url, 'u', [`only-on-old-${i}`], 'all')).status).toBe(200);
    await c.killBroker(old.id, 'SIGKILL');
    await c.killBroker(f.id, 'SIGCONT');

    const next = await waitFor('unclean leader', async () => {
      const l = c.leaderOf('u', 0);
      return l && l.id === f.id ? l : null;
    }, 10_000);
    await c.waitForLeaders(10_000);
    expect(c.controller.state().events.some((e) => e.kind === 'election' && e.unclean === true && e.leader === f.id)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await produce(next.url, 'u', [`after-unclean-${i}`], 'all')).status).toBe(200);
    const values = await readAllValues(next.url, 'u');
    const lost = Array.from({ length: 10 }, (_, i) => `only-on-old-${i}`).filter((v) => !values.includes(v));
    console.log(`unclean election: leader ${next.id} at epoch ${next.leaderEpoch}; ${lost.length} of 10 acks=all records acknowledged with ISR [old leader] are gone`);
    expect(values.slice(0, 5)).toEqual(Array.from({ length: 5 }, (_, i) => `committed-${i}`));

    await c.restartBroker(old.id);
    await waitFor('old leader back in the ISR', async () => (await partitionMetrics(next.url, 'u')).isr.length === 2, 15_000);
    const hw = (await partitionMetrics(next.url, 'u')).hw;
    const hashes = await waitFor('both replicas at the HW', async () => {
      const hs = await Promise.all(c.brokers.map((b) => logHash(b.url, 'u', 0, hw)));
      return hs.every((h) => h.leo >= hw) ? hs : null;
    });
    expect(hashes[0].hash).toBe(hashes[1].hash);
    expect(await readAllValues(next.url, 'u')).toEqual(values);
  });
});

describe('a leader that crashes and restarts within its session timeout (3 brokers, RF 3)', () => {
  let dir: string;
  let c: Cluster;
  beforeAll(async () => {
    dir = tempDir('fast-restart');
    c = await startCluster({
      brokers: 3,
      dir,
      port: 0,
      brokerCommand: brokerCommand(),
      topics: [{ name: 'r', partitions: 1, replicationFactor: 3 }],
      set: ['replica.lag.time.max.ms=1000', 'min.insync.replicas=2'],
      // Far longer than the restart takes: only the new incarnation can tell the controller.
      controller: { sessionTimeoutMs: 60_000 },
    });
  });
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is fenced when its new process registers: another ISR member leads at a new epoch, the restarted one follows', async () => {
    const old = c.leaderOf('r', 0)!;
    const acked: string[] = [];
    for (let i = 0; i < 20; i++) {
      expect((await produce(old.url, 'r', [`v-${i}`], 'all')).status).toBe(200);
      acked.push(`v-${i}`);
    }
    await c.killBroker(old.id, 'SIGKILL');
    await c.restartBroker(old.id);
    const next = await waitFor('a leader other than the restarted broker', async () => {
      const l = c.leaderOf('r', 0);
      return l && l.id !== old.id ? l : null;
    });
    expect(next.leaderEpoch).toBeGreaterThan(old.leaderEpoch);
    const fenced = c.controller.state().events.find((e) => e.kind === 'fenced' && e.brokerId === old.id);
    expect(fenced?.reason).toMatch(new RegExp(`^broker ${old.id} fenced: a new process \\(incarnation .+ -> .+\\) registered \\d+ ms after the last heartbeat, within the session timeout of 60000 ms$`));
    await c.waitForLeaders(10_000);
    const restarted = c.broker(old.id);
    await waitFor('the restarted broker following the new leader', async () => {
      const m = await partitionMetrics(restarted.url, 'r');
      return m.role === 'follower' && m.leaderEpoch === next.leaderEpoch ? m : null;
    });
    // A new leader keeps the HW it had as a follower until the ISR fetches from it: one more
    // acks=all record moves it past everything acknowledged before the crash.
    expect((await produce(next.url, 'r', ['after'], 'all')).status).toBe(200);
    const values = await readAllValues(next.url, 'r');
    expect(acked.filter((v) => !values.includes(v))).toEqual([]);
    expect(values.at(-1)).toBe('after');
  });
});
