// A crash is not a power failure, end to end through the real CLI bundle: real broker
// processes SIGKILLed mid-load, restarted on the same data directory, recovered and checked.
// The host page cache survives a process kill, so no flush policy loses an acknowledged record.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-process-kill-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function brokerPids(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes('\0broker\0') && cmd.includes(work)) out.push(Number(pid));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

describe('durolab bench with a process-kill fault', () => {
  it('kills the broker mid-load, restarts it, reads its recovery report and loses nothing acknowledged', async () => {
    const file = path.join(work, 'kill.yaml');
    writeFileSync(
      file,
      `question: Does a process crash lose acknowledged records?
target: process
cluster: { brokers: 1, topic: kill, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { io: buffered, acks: 1 }
matrix:
  flush: [never, per-batch]
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 4, warmup: 0s, duration: 3s, repetitions: 1 }
faults:
  - kind: process-kill
    target: all
    when: { between: [1s, 2s] }
expectations:
  - ackedLost == 0 in every trial
  - corrupt == 0 in every trial
`,
    );
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--no-report', '--seed', '7'], { reject: false, timeout: 100_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('PASS  ackedLost == 0 in every trial');
    expect(r.stdout).toMatch(/process-kill of broker 1 at \d\.\d\d s \(between 1 and 2 s, seed \d+\)/);
    expect(r.stdout).toContain('faults (per cell over its checked trials');
    expect(r.stdout).toMatch(/trial cycle s min\/med\/max/);
    const run = JSON.parse(readFileSync(path.join(results, 'kill', 'latest', 'run.json'), 'utf8')) as RunResult;
    expect(run.status).toBe('complete');
    expect(run.settings.faultSeed).toBe(7);
    for (const c of run.cells) {
      expect(c.status).toBe('ok');
      expect(c.trials).toHaveLength(1);
      const t = c.trials![0];
      const f = t.fault!;
      expect(f.kind).toBe('process-kill');
      expect(f.targets).toEqual([1]);
      expect(f.atMs).toBeGreaterThanOrEqual(1000);
      expect(f.atMs).toBeLessThan(2600);
      expect(f.ackedBeforeCut).toBeGreaterThan(0);
      expect(t.ledger.acked).toBeGreaterThanOrEqual(f.ackedBeforeCut);
      expect(t.ledger).toMatchObject({ ackedLost: 0, corrupt: 0, duplicates: 0, offsetChanged: 0, inconsistentOffsets: 0, replicasDisagree: 0, hwWentBack: 0 });
      // The recovery report came from the restarted broker's GET /v1/health.
      expect(f.recovery).toHaveLength(1);
      expect(f.recovery[0]).toMatchObject({ broker: 1, cleanShutdown: false });
      expect(f.recovery[0].restartMs).toBeGreaterThan(0);
      expect(f.recovery[0].durationMs).toBeGreaterThanOrEqual(0);
      expect(f.hwAfterRecovery).toBeGreaterThanOrEqual(f.hwBeforeCut!);
      expect(f.lastAckBeforeCutMs).toBeLessThan(1000);
      expect(t.suspect).toBeUndefined();
      expect(t.cycleMs).toBeGreaterThan(f.atMs);
      // A process target's trial has the steps that apply to it: no image, boot or restart boot.
      const tm = t.timing!;
      expect(Object.keys(tm.steps).filter((k) => k !== 'other').sort()).toEqual(['brokerStart', 'check', 'cut', 'leaders', 'load', 'recovery', 'stop']);
      for (const ms of Object.values(tm.steps)) expect(ms).toBeGreaterThanOrEqual(0);
      expect(tm.steps.brokerStart).toBeGreaterThan(0);
      expect(tm.steps.recovery).toBeGreaterThan(0);
      expect(tm.totalMs).toBe(t.cycleMs);
      expect(f.lossTimeline!.bins.reduce((a, b) => a + b.acked, 0)).toBe(t.ledger.acked);
      expect(c.ledger.acked).toBe(t.ledger.acked);
      console.log(`process-kill ${c.id}: acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}, cut at ${f.atMs} ms, restart ${f.recovery[0].restartMs} ms, trial cycle ${t.cycleMs} ms`);
    }
    expect(brokerPids()).toEqual([]);
  }, 110_000);
});
