// A planned leader move (fault kind move-leader) under load, end to end through the CLI on
// durolab's broker and on Apache Kafka: the leadership moves to an in-sync follower with a
// higher epoch through AlterPartitionReassignments + ElectLeaders, no broker restarts, and with
// acks=all nothing acknowledged is lost; planMoves picks the follower and refuses what it cannot do.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';
import { requireKafka } from '../targets/kafka/kafka-requirements.ts';
import { planMoves } from './move-leader.ts';
import type { ClusterMetadata } from '../drivers/kafka/wire.ts';
import { compileScenario } from '../scenario/index.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-move-leader-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const md = (partitions: Array<{ partition: number; leader: number; replicas: number[]; isr: number[] }>): ClusterMetadata => ({
  brokers: [],
  controllerId: 0,
  topicErrors: {},
  partitions: partitions.map((p) => ({ ...p, topic: 't', error: null, leaderEpoch: 4 })),
});

describe('fault move-leader', () => {
  it('moves each partition the victim leads to its first in-sync follower, and refuses a move it cannot make', () => {
    const moves = planMoves(md([{ partition: 0, leader: 1, replicas: [1, 2, 3], isr: [1, 3] }, { partition: 1, leader: 2, replicas: [2, 3, 1], isr: [2, 3, 1] }]), 't', [1]);
    expect(moves).toEqual([{ partition: 0, from: 1, to: 3, leaderEpochBefore: 4 }]);
    expect(() => planMoves(md([{ partition: 0, leader: 1, replicas: [1, 2], isr: [1] }]), 't', [1])).toThrow('t-0 (leader 1, replicas [1,2], ISR [1]) has no in-sync follower to move to');
    expect(() => planMoves(md([{ partition: 0, leader: 2, replicas: [1, 2], isr: [1, 2] }]), 't', [1])).toThrow('broker(s) 1 lead no partition of t');
  });

  it('is refused at scenario check where no follower can take over, and on a target without the admin API', () => {
    const compile = (cluster: string, target = 'leader', extra = '') =>
      compileScenario(`question: q\n${extra}cluster: ${cluster}\nworkload: { duration: 5s }\nfaults:\n  - kind: move-leader\n    target: ${target}\n    when: { at: 2s }\n`, 'm.yaml', { defaultName: 'm' });
    expect(() => compile('{ brokers: 3, replicationFactor: 1 }')).toThrow(/cluster\.replicationFactor: expected replicationFactor >= 2 with a move-leader fault/);
    expect(() => compile('{ brokers: 1 }')).toThrow(/cluster\.brokers: expected at least 2 brokers with a move-leader fault/);
    expect(() => compile('{ brokers: 3 }', 'all')).toThrow(/faults\[0\]\.target: expected leader or \{ broker: N \} with a move-leader fault/);
    expect(() => compile('{ brokers: 3 }', 'leader', 'target: vm\n')).toThrow(/move-leader needs target: process \| kafka \| external/);
    expect(compile('{ brokers: 3 }').faults[0]!.kind).toBe('move-leader');
  });

  it('on durolab and on Kafka: the leader moves under an acks=all load, nothing restarts, nothing acknowledged is lost', async (ctx) => {
    await requireKafka(ctx);
    const file = path.join(work, 'move.yaml');
    writeFileSync(
      file,
      `question: Does a planned leader move lose acknowledged records with acks=all?
cluster: { brokers: 3, topic: mv, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { io: buffered, flush: never, acks: all }
matrix: { target: [durolab, kafka] }
workload: { driver: kafka, recordBytes: 512, recordsPerBatch: 8, connections: 4, warmup: 0s, duration: 8s, repetitions: 1, producer: { retries: 0 } }
faults:
  - kind: move-leader
    target: leader
    when: { afterAcked: 2000 }
expectations:
  - ackedLost == 0 in every trial
`,
    );
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report'], { reject: false, timeout: 150_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const run = JSON.parse(readFileSync(path.join(results, 'move', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.cells.map((c) => c.id)).toEqual(['target=durolab', 'target=kafka']);
    for (const cell of run.cells) {
      const t = cell.trials![0]!;
      const moves = t.fault!.leaderMoves!;
      expect(moves).toHaveLength(1);
      expect(moves[0]!.from).toBe(t.fault!.targets[0]);
      expect(moves[0]!.to).not.toBe(moves[0]!.from);
      // No broker went down: nothing restarted, nothing recovered a log.
      expect(t.fault!.recovery).toEqual([]);
      expect(t.fault!.recoverySteps!.restartMs).toBeLessThan(50);
      expect(t.fault!.ackedBeforeCut).toBeGreaterThanOrEqual(2000);
      expect(t.ledger).toMatchObject({ ackedLost: 0, corrupt: 0, inconsistentOffsets: 0, hwWentBack: 0, replicasDisagree: 0 });
      expect(t.ledger.acked).toBeGreaterThan(t.fault!.ackedBeforeCut);
      expect(t.replicas).toMatchObject({ replicas: 2, diverged: 0 });
      console.log(`${cell.id}: move ${moves[0]!.from} -> ${moves[0]!.to} at epoch ${moves[0]!.leaderEpochBefore}+, acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}, duplicates ${t.ledger.duplicates}, recovery ${JSON.stringify(t.fault!.recoverySteps)}`);
    }
  }, 160_000);
});
