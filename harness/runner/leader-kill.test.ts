// Replication through a leader crash, end to end through the real CLI: 3 brokers, RF 3,
// acks=all; the leader is SIGKILLed mid-load, the controller elects another, the old leader
// restarts, truncates to the new leader's epoch and catches up; the checker then compares the
// ledger with the new leader and every replica's log hash up to the lowest HW.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-leader-kill-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('durolab bench with a leader kill under acks=all', () => {
  it('loses no acknowledged record and leaves the three replicas agreeing', async () => {
    const file = path.join(work, 'leader.yaml');
    writeFileSync(
      file,
      `question: Does acks=all survive a leader crash?
target: process
cluster: { brokers: 3, topic: lk, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { io: buffered, flush: never, acks: all }
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 8, warmup: 0s, duration: 3s, repetitions: 1 }
faults:
  - kind: process-kill
    target: leader
    when: { afterAcked: 2000 }
expectations:
  - ackedLost == 0 in every trial
`,
    );
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report'], { reject: false, timeout: 60_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const run = JSON.parse(readFileSync(path.join(results, 'leader', 'latest', 'run.json'), 'utf8')) as RunResult;
    const t = run.cells[0].trials![0];
    expect(t.fault!.when).toBe('after 2000 acknowledged records');
    expect(t.fault!.targets).toHaveLength(1);
    // fired as soon as 2,000 were acknowledged: within one 20 ms poll's worth of acks
    expect(t.fault!.ackedBeforeCut).toBeGreaterThanOrEqual(2000);
    expect(t.fault!.ackedBeforeCut).toBeLessThan(6000);
    expect(t.ledger).toMatchObject({ ackedLost: 0, corrupt: 0, replicasDisagree: 0, hwWentBack: 0, offsetChanged: 0, inconsistentOffsets: 0 });
    const check = JSON.parse(readFileSync(path.join(results, 'leader', 'latest', 'cells', '01-base', 'rep-1', 'check.json'), 'utf8')) as {
      recovery: { caughtUp: boolean };
      check: { partitions: Array<{ hashes: Record<string, string>; upTo: number; leaderHw: number }> };
    };
    expect(check.recovery.caughtUp).toBe(true);
    const p = check.check.partitions[0];
    expect(Object.keys(p.hashes)).toHaveLength(3);
    expect(new Set(Object.values(p.hashes)).size).toBe(1);
    expect(p.upTo).toBeGreaterThanOrEqual(t.fault!.ackedBeforeCut);
    console.log(`leader kill acks=all: acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}, hashes equal up to offset ${p.upTo}, recovery ${t.fault!.recoverMs} ms, cycle ${t.cycleMs} ms`);
  }, 70_000);
});
