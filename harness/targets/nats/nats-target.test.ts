// Real NATS JetStream (nats-server v2.12.1 from `make nats`, three nodes with routes on
// loopback): the stream created R3 with file storage, a load through driver nats with the ack
// ledger, read back by the checker with nothing lost; a SIGKILL of one node under load and its
// restart on the same store dir (sync_interval always) loses nothing either.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { natsDriver } from '../../drivers/nats/driver.ts';
import { checkAfterFault } from '../../checker/after-fault.ts';
import { checkLedger } from '../../checker/checker.ts';
import { waitForReplicasCaughtUp } from '../../checker/replicas.ts';
import { recoverAfterFault } from '../../faults/recover.ts';
import { resolveSettings } from '../../model/settings.ts';
import type { AckLedger } from '../../history/ledger.ts';
import { isAlive } from '../../vm/process-registry.ts';
import { produceFor } from '../lab-cluster-test-helpers.ts';
import type { NatsInstall } from './install.ts';
import { requireNats } from '../../../test/requirements.ts';
import { startNatsCluster } from './nats-target.ts';
import type { NatsCluster } from './nats-cluster.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-target-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Three nodes, an R3 stream of `topic`, the cell's flush; under the test's work dir. */
async function threeNodes(install: NatsInstall, topic: string, flush: string, dir: string): Promise<NatsCluster> {
  return startNatsCluster(install, {
    cluster: { brokers: 3, topic, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 },
    settings: resolveSettings({ flush }, 2),
    workDir: path.join(work, dir),
  });
}

async function waitForAcked(ledger: AckLedger, records: number, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  while (ledger.counts().ackedRecords < records && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

describe('target: nats', () => {
  it('starts 3 nodes with an R3 stream, takes a ledger load through driver nats and serves every acknowledged record back', async (ctx) => {
    const install = await requireNats(ctx);
    const topic = 'ci.nats';
    const t0 = Date.now();
    const cluster: NatsCluster = await threeNodes(install, topic, 'per-batch', 'load');
    try {
      console.log(`nats-server ${install.version}: 3 nodes and an R3 stream ready in ${Date.now() - t0} ms`);
      const leader = cluster.leaderId(topic, 0)!;
      expect([0, 1, 2]).toContain(leader);
      const client = natsDriver().connect(cluster, { dataOnHost: true });
      const { ledger, result } = produceFor(client, topic, leader, 10, 5000);
      const r = await result;
      expect(r.measuredRequests).toBeGreaterThan(0);
      expect(r.latencyUs.totalCount).toBe(r.measuredRequests);
      expect(r.errors).toEqual({});
      const served = await client.consume({ topic, partition: 0 });
      const report = checkLedger(ledger, [served]);
      console.log(`driver nats: ${report.acked} records acknowledged in 10 s (p50 ${r.latencyUs.getValueAtPercentile(50)} µs per 8-record batch), ${report.ackedLost} lost`);
      expect(report.acked).toBeGreaterThanOrEqual(2000);
      expect(report.ackedLost).toBe(0);
      expect(report.duplicates).toBe(0);
      expect(report.inconsistentOffsets).toBe(0);
      expect(report.corrupt).toBe(0);
      // Offsets are stream sequences from 1: the HW is the sequence after the last one.
      expect(served.highWatermark).toBe(report.acked + 1);
      const isr = await client.inSyncReplicas(topic, 0);
      expect(isr?.slice().sort()).toEqual([0, 1, 2]);
      // Every replica's stored messages, read from its block files, are the leader's.
      const caught = await waitForReplicasCaughtUp(client, topic, [0], 10_000, 0);
      expect(caught).toEqual({ caughtUp: true, detail: '' });
      const digests = await Promise.all([0, 1, 2].map((id) => client.replicaDigest(id, topic, 0, served.highWatermark)));
      expect(new Set(digests.map((d) => d!.hash)).size).toBe(1);
      const leaderLog = await client.readReplicaLog(leader, topic, 0, served.highWatermark);
      expect(leaderLog!.batches).toHaveLength(report.acked);
      expect(leaderLog!.corrupt).toBe(0);
    } finally {
      await cluster.stop();
    }
    for (const b of cluster.brokers) expect(b.pid).toBeNull();
  }, 60_000);

  it('a SIGKILL of one node under load and its restart on the same store dir lose nothing (sync_interval always)', async (ctx) => {
    const install = await requireNats(ctx);
    const topic = 'ci-kill';
    const cluster = await threeNodes(install, topic, 'per-batch', 'kill');
    const pids = cluster.brokers.map((b) => b.pid!);
    try {
      const client = natsDriver().connect(cluster, { dataOnHost: true });
      const leader = cluster.leaderId(topic, 0)!;
      const stop = new AbortController();
      const { ledger, result } = produceFor(client, topic, leader, 30, 5000, stop.signal);
      await waitForAcked(ledger, 2000, 20_000);
      const victim = leader;
      const cut = await cluster.processKill([victim]);
      expect(isAlive(pids[victim]!)).toBe(false);
      // The load goes on against the other two: the stream elects a new leader.
      const before = ledger.counts().ackedRecords;
      await waitForAcked(ledger, before + 1000, 20_000);
      stop.abort();
      await result;
      const recovery = await recoverAfterFault(cluster, client, [victim], { topic, partitions: [0], replicationFactor: 3, timeoutMs: 60_000 });
      expect(recovery.caughtUp).toBe(true);
      const check = await checkAfterFault({ source: client, topic, ledger, cutMs: cut.atMs });
      console.log(`nats kill of leader ${victim}: ${check.report.acked} acknowledged (${ledger.counts().ackedRecords - before} after the kill), ${check.report.ackedLost} lost, replicas ${check.replicasDisagree === 0 ? 'agree' : 'DISAGREE'}`);
      expect(check.report.acked).toBeGreaterThan(before);
      expect(check.report.ackedLost).toBe(0);
      expect(check.report.inconsistentOffsets).toBe(0);
      expect(check.report.corrupt).toBe(0);
      expect(check.replicasDisagree).toBe(0);
      expect(check.hwWentBack).toBe(0);
    } finally {
      await cluster.stop();
    }
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  }, 90_000);

  it('a pause (SIGSTOP) of the stream leader under load moves the leadership; after SIGCONT nothing acknowledged is lost', async (ctx) => {
    const install = await requireNats(ctx);
    const topic = 'ci-pause';
    const cluster = await threeNodes(install, topic, 'never', 'pause');
    try {
      const client = natsDriver().connect(cluster, { dataOnHost: true });
      const leader = cluster.leaderId(topic, 0)!;
      const stop = new AbortController();
      const { ledger, result } = produceFor(client, topic, leader, 30, 5000, stop.signal);
      await waitForAcked(ledger, 1000, 20_000);
      const cut = await cluster.pause([leader]);
      const before = ledger.counts().ackedRecords;
      // The other two elect a new stream leader and take the load on.
      await waitForAcked(ledger, before + 1000, 20_000);
      await cluster.resume([leader]);
      stop.abort();
      await result;
      await cluster.waitForLeaders(topic, 30_000);
      const caught = await waitForReplicasCaughtUp(client, topic, [0], 30_000);
      expect(caught.caughtUp).toBe(true);
      const check = await checkAfterFault({ source: client, topic, ledger, cutMs: cut.atMs });
      console.log(`nats pause of leader ${leader}: ${check.report.acked} acknowledged (${ledger.counts().ackedRecords - before} during the pause), ${check.report.ackedLost} lost; leader now ${cluster.leaderId(topic, 0)}`);
      expect(ledger.counts().ackedRecords - before).toBeGreaterThanOrEqual(1000);
      expect(check.report.ackedLost).toBe(0);
      expect(check.report.inconsistentOffsets).toBe(0);
      expect(check.replicasDisagree).toBe(0);
    } finally {
      await cluster.stop();
    }
  }, 90_000);
});
