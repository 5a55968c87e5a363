// A fault schedule on real broker processes (durolab's, three of them): a pause's heal always
// runs, at once when a later entry fails mid-pause and on Ctrl-C, and the attempt's release wakes
// a broker something left stopped before it stops the cluster. Whether a process is stopped is
// read from /proc/<pid>/stat (state T), as ps shows it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compileScenario, cellSettings } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { loadDriver } from '../drivers/registry.ts';
import { AckLedger } from '../history/ledger.ts';
import { stoppedProcesses } from '../faults/pause.ts';
import { driveSchedule, lastingAt, scheduleLine, scheduleOutcome, type ScheduleOptions } from './fault-schedule.ts';
import { TrialResources } from './trial-resources.ts';
import { TrialEvidence } from './trial-evidence.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-fault-schedule-test-'));
const scenario = compileScenario('question: q\ntarget: process\ncluster: { brokers: 3, topic: fs, partitions: 1, replicationFactor: 3 }\n', 's.yaml', { defaultName: 's' });
let cluster: FaultableCluster;
let options: (faults: ScheduleOptions['faults'], extra?: Partial<ScheduleOptions>) => ScheduleOptions;
const pids = () => cluster.brokers.map((b) => b.pid);

beforeAll(async () => {
  cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]!), workDir: work })) as FaultableCluster;
  await cluster.leaders('fs');
  const client = (await loadDriver('http')).connect(cluster, { dataOnHost: true });
  options = (faults, extra = {}) => ({
    faults,
    seed: 1,
    cluster,
    topic: 'fs',
    ledger: new AckLedger({ recordsPerBatch: 1, producerIdBase: 1000, partitions: [0] }),
    loadStartMs: Date.now(),
    loadDone: new Promise(() => {}),
    stopLoad: () => undefined,
    signal: new AbortController().signal,
    client,
    ...extra,
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('fault schedule on durolab brokers', () => {
  it('heals a pause at once when a later entry fails mid-pause, and records start and heal', async () => {
    const stoppedWhilePaused: number[][] = [];
    const t0 = Date.now();
    const run = driveSchedule(
      options(
        [
          { kind: 'pause', target: 'followers', when: { at: 0.1 }, duration: 30 },
          // Broker index 7 of 3: scenario check refuses it; here it makes the second entry throw while the first lasts.
          { kind: 'pause', target: { broker: 7 }, when: { at: 0.5 } },
        ],
        { onLasting: () => void setTimeout(() => stoppedWhilePaused.push(stoppedProcesses(pids())), 100) },
      ),
    );
    await expect(run).rejects.toThrow('fault target broker 7: expected an index from 0 to 2');
    // The 30 s pause did not run its course: healed as the schedule failed.
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(stoppedWhilePaused).toEqual([[expect.any(Number), expect.any(Number)]]);
    expect(stoppedProcesses(pids())).toEqual([]);
  });

  it('heals at its time while the next entries wait, and at once on Ctrl-C', async () => {
    const ac = new AbortController();
    const o = options(
      [
        { kind: 'pause', target: 'leader', when: { at: 0.2 }, duration: 0.8 },
        { kind: 'pause', target: 'followers', when: { at: 0.4 }, duration: 30 },
        { kind: 'process-kill', target: 'leader', when: { at: 20 } },
      ],
      { signal: ac.signal },
    );
    setTimeout(() => ac.abort(), 1500);
    const out = await driveSchedule(o);
    const schedule = scheduleOutcome(out.entries, o.loadStartMs);
    const [leader, followers, kill] = schedule;
    expect(leader).toMatchObject({ kind: 'pause', durationMs: 800 });
    expect(leader!.startMs!).toBeGreaterThanOrEqual(190);
    expect(leader!.healMs! - leader!.startMs!).toBeGreaterThanOrEqual(790);
    expect(leader!.healMs! - leader!.startMs!).toBeLessThan(1300);
    // Ctrl-C at 1.5 s healed the 30 s pause then, and the kill never started.
    expect(followers!.targets).toHaveLength(2);
    expect(followers!.targets).not.toContain(leader!.targets![0]);
    expect(followers!.healMs!).toBeGreaterThanOrEqual(1450);
    expect(followers!.healMs!).toBeLessThan(2500);
    expect(kill).toMatchObject({ kind: 'process-kill', startMs: null, note: 'interrupted (Ctrl-C) before it started' });
    expect(out.unfired).toBe('at 20 s');
    expect(out.fired!.plan.fault.kind).toBe('pause');
    expect(out.restart).toEqual([]);
    // The followers' ISR comes from their leader: read once the leader's pause healed.
    expect(followers!.startMs!).toBeGreaterThanOrEqual(leader!.healMs!);
    expect(lastingAt(out.entries, o.loadStartMs + followers!.startMs! + 1).map((e) => e.plan.fault.target)).toEqual(['followers']);
    expect(scheduleLine(schedule)).toMatch(/^pause of broker \d \d\.\d\d-\d\.\d\d s; pause of broker \d, \d \d\.\d\d-\d\.\d\d s; process-kill \(at 20 s\) not started: interrupted/);
    expect(stoppedProcesses(pids())).toEqual([]);
  });

  it("the attempt's release wakes a broker left stopped before it stops the cluster", async () => {
    const lines: string[] = [];
    const res = new TrialResources();
    res.cluster = cluster;
    await cluster.pause!([cluster.brokers[1]!.id]);
    // The kernel stops it once the signal is delivered: the state shows T shortly after.
    for (let i = 0; i < 50 && stoppedProcesses(pids()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(stoppedProcesses(pids())).toHaveLength(1);
    const evidence = new TrialEvidence(work, { cell: 'base', trial: 0, topic: 'fs', driver: 'http' }, true);
    const t0 = Date.now();
    await res.release(evidence, null, true, (l) => lines.push(l));
    expect(lines.join('\n')).toMatch(/broker process\(es\) \d+ were still stopped \(state T\) before the cluster's stop: SIGCONT sent/);
    // A clean stop, not the stop's SIGKILL after its grace.
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(cluster.brokers.every((b) => stoppedProcesses([b.pid]).length === 0)).toBe(true);
  });
});
