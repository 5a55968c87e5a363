// KIP-966 with real broker processes (issue 35's isr-shrink-power-cut, on durolab): 3 brokers,
// RF 3, min.insync.replicas 2, flush never. acks=all records are acknowledged by all three; the
// followers are paused (SIGSTOP) until they are fenced, so the ISR is the leader alone; the
// leader is SIGKILLed and its unflushed tail is lost; it restarts, then the followers resume.
//
// The lost tail is a test seam: the leader's segment file is truncated to 0 bytes between the
// SIGKILL and the restart, what a power cut does to records still in the page cache (flush never,
// nothing written back within the test's few seconds). A real page-cache loss needs the lab's
// fault disk (harness/disk), which the isr-shrink-power-cut scenario uses; the controller's part,
// the subject here, sees the same thing: a broker back without a clean shutdown.
import { rmSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { segmentFileName } from '../storage/index.ts';
import { startCluster, type Cluster } from './cluster.ts';
import { brokerCommand, partitionMetrics, produce, readAllValues, tempDir, waitFor } from './test-support.ts';

interface Outcome {
  leaderAfter: number;
  oldLeader: number;
  /** The controller's eligible leader replicas just before the leader's power cut (absent with ELR off). */
  elrAtCut: number[] | undefined;
  lost: string[];
  electionReason: string;
}

let cleanup: (() => Promise<void>) | null = null;

/** A cluster for the run (stopped and removed after the test); `run` does the steps above. */
async function leaderPowerCutWithIsrShrunk(elr: boolean): Promise<{ c: Cluster; run: () => Promise<Outcome> }> {
  const dir = tempDir(`elr-${elr ? 'on' : 'off'}`);
  const c = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    brokerCommand: brokerCommand(),
    topics: [{ name: 'e', partitions: 1, replicationFactor: 3 }],
    set: ['min.insync.replicas=2', 'replica.lag.time.max.ms=1000', 'flush=never', `eligible.leader.replicas=${elr}`],
    controller: { sessionTimeoutMs: 1000 },
  });
  cleanup = async () => {
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const run = async (): Promise<Outcome> => {
    const old = c.leaderOf('e', 0)!;
    const followers = c.brokers.filter((b) => b.id !== old.id).map((b) => b.id);
    const acked: string[] = [];
    for (let i = 0; i < 20; i++) {
      expect((await produce(old.url, 'e', [`acked-${i}`], 'all')).status).toBe(200);
      acked.push(`acked-${i}`);
    }
    for (const id of followers) await c.killBroker(id, 'SIGSTOP');
    // The leader learns the ISR the controller shrank when it fenced them, with its next heartbeat.
    await waitFor('the ISR shrunk to the leader alone', async () => (await partitionMetrics(old.url, 'e')).isr.length === 1, 10_000);
    // min.insync.replicas 2 holds: acks=all is refused while the leader is alone.
    const refused = await produce(old.url, 'e', ['refused'], 'all');
    expect(refused.body.error).toBe('NOT_ENOUGH_REPLICAS');

    const elrAtCut = c.controller.assignment('e', 0)!.elr;
    await c.killBroker(old.id, 'SIGKILL');
    truncateSync(path.join(c.broker(old.id).dataDir, 'e-0', segmentFileName(0, '.log')), 0);
    await c.restartBroker(old.id);
    for (const id of followers) await c.killBroker(id, 'SIGCONT');

    const next = await waitFor('a leader that serves', async () => {
      const l = c.leaderOf('e', 0);
      return l && (await partitionMetrics(l.url, 'e')).role === 'leader' ? l : null;
    }, 15_000);
    // A second replica back in the ISR, then one more acks=all record moves the HW past what the leader holds.
    await waitFor('two replicas in the ISR', async () => (await partitionMetrics(next.url, 'e')).isr.length >= 2, 15_000);
    expect((await produce(next.url, 'e', ['after'], 'all')).status).toBe(200);
    const values = await readAllValues(next.url, 'e');
    expect(values.at(-1)).toBe('after');
    const election = c.controller.state().events.find((e) => e.kind === 'election' && e.leaderEpoch === next.leaderEpoch)!;
    return { leaderAfter: next.id, oldLeader: old.id, elrAtCut, lost: acked.filter((v) => !values.includes(v)), electionReason: election.reason };
  };
  return { c, run };
}

describe('eligible leader replicas with real brokers: ISR shrunk to the leader, then its power cut (3 brokers, RF 3, min.insync.replicas 2)', () => {
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  it('on: the follower that left the ISR at the minimum leads, and no acknowledged record is lost', async () => {
    const { c, run } = await leaderPowerCutWithIsrShrunk(true);
    const o = await run();
    const events = c.controller.state().events;
    console.log(`ELR on: leader ${o.oldLeader} -> ${o.leaderAfter} (${o.electionReason}); acknowledged acks=all lost: ${o.lost.length} of 20`);
    // The follower fenced second left an ISR at min.insync.replicas: it alone is eligible, and leads.
    expect(o.elrAtCut).toHaveLength(1);
    expect(o.leaderAfter).toBe(o.elrAtCut![0]);
    expect(o.electionReason).toMatch(/elected \d from the eligible leader replicas \(KIP-966\)/);
    expect(events.find((e) => e.kind === 'unclean-shutdown')).toMatchObject({ brokerId: o.oldLeader });
    // The restarted leader, which lost its tail, never led again.
    expect(events.filter((e) => e.kind === 'election' && e.leader === o.oldLeader && e.leaderEpoch > 0)).toEqual([]);
    expect(o.lost).toEqual([]);
  });

  it('off: the restarted leader, the last ISR member, leads again and what it lost is lost', async () => {
    const { c, run } = await leaderPowerCutWithIsrShrunk(false);
    const o = await run();
    console.log(`ELR off: leader ${o.oldLeader} -> ${o.leaderAfter} (${o.electionReason}); acknowledged acks=all lost: ${o.lost.length} of 20`);
    expect(o.leaderAfter).toBe(o.oldLeader);
    expect(o.lost).toHaveLength(20);
  });
});
