// Crash states of a real NATS JetStream server, every state checked by booting it, through the
// runner as a scenario runs them: one nats-server (R1) on the host route's fault disk with its
// write log recorded, driver nats's load with the ack ledger, a power cut, then crash states
// built from the write log; NATS has no offline recovery tool, so each state is booted
// (nats-server on the state's image recovers its stream as a real start does) and read back
// through driver nats (boot-check.ts). With the
// default sync_interval (flush never: nothing synced in the trial's seconds) states lose
// acknowledged records; with sync_interval always (per-batch) none may. The rate (states checked
// per minute) is printed. Nothing (nats-server, daemon, mount) may be left afterwards.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScenario, loadScenario } from '../../scenario/index.ts';
import { runScenarioHere } from '../../runner/run-scenario-test-helpers.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { hostDiskPrerequisiteProblem } from '../../disk/host-disk.ts';
import { expectHostDisksGone } from '../../disk/host-disk-test-helpers.ts';
import { missingRequirement, requireNats } from '../../../test/requirements.ts';
import { FAULTS } from '../../faults/registry.ts';
import { capabilitiesOf } from '../registry.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-states-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const STATES = 8;

describe('target: nats crash states, every state booted', () => {
  it('scenario check takes crash states on target nats: booted states need no stored-batch decoding, offline checks do', () => {
    const s = compileScenario(
      'question: q\ntarget: nats\ncluster: { brokers: 1, replicationFactor: 1 }\nworkload: { driver: nats }\nfaults:\n  - { kind: crash-states, target: all, when: { at: 2 }, states: 8 }\n',
      'f.yaml',
      { defaultName: 'f' },
    );
    expect(s.faults[0]!.kind).toBe('crash-states');
    // The rule: stored-batch decoding is needed only where states are checked offline.
    const need = FAULTS['crash-states'];
    expect(need.needsDriver).toBe('storedBatches');
    expect(need.needsDriverOn!(capabilitiesOf('kafka'))).toBe(true);
    expect(need.needsDriverOn!(capabilitiesOf('process'))).toBe(true);
    expect(need.needsDriverOn!(capabilitiesOf('nats'))).toBe(false);
  });

  it(`${STATES} states per cell through the runner: states lose acknowledged records with flush never, none with per-batch (sync_interval always)`, async (ctx) => {
    await requireNats(ctx);
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const file = path.join(work, 'nats-states.yaml');
    writeFileSync(
      file,
      `question: Which crash states of a one-node NATS JetStream stream lose acknowledged records, every state booted?
target: nats
vm: { diskMiB: 512, disk: { model: volatile-cache, onCut: drop-unflushed } }
cluster: { brokers: 1, topic: states, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }
settings: { sync: fsync, acks: all }
matrix:
  flush: [never, per-batch]
workload: { driver: nats, recordBytes: 256, recordsPerBatch: 8, connections: 2, pipelining: 2, warmup: 0s, duration: 4s, repetitions: 1 }
faults:
  - { kind: crash-states, target: all, when: { at: 2s }, states: ${STATES}, onCut: drop-unflushed, seed: 3 }
expectations:
  - ackedLost == 0 where flush == per-batch in every trial
  - ackedLost > 0 where flush == never
  - corrupt == 0 in every trial
`,
    );
    const { run, out } = await runScenarioHere(loadScenario(file), path.join(work, 'results'));
    console.log(out.split('\n').filter((l) => /rep 1|crash states of|checked by/.test(l)).join('\n'));
    expect(run.cells.map((c) => c.status)).toEqual(['ok', 'ok']);
    const rates: Record<string, number> = {};
    for (const cell of run.cells) {
      const flush = String(cell.params.flush);
      const r = cell.crashStates!;
      const acked = cell.trials![0]!.fault!.ackedBeforeCut!;
      const end = r.perState.find((s) => s.kind === 'end')!;
      console.log(
        `NATS crash states, flush ${flush}: ${r.states} states, ${acked} acknowledged at the cut; lost min/median/max ${r.lostMin}/${r.lostMedian}/${r.lostMax}, ` +
          `${r.perState.filter((s) => s.lostAcked > 0).length} states losing, ${r.perState.filter((s) => s.noDataDir).length} without the stream; served ${r.perState.map((s) => s.served).join(',')}`,
      );
      expect(acked).toBeGreaterThan(100);
      expect(r.states).toBe(STATES);
      expect(r.corruptStates).toBe(0);
      // Every state was booted: no sample apart, nothing to verify against.
      expect(r.verification).toBeUndefined();
      if (flush === 'never') {
        // sync_interval 2 min: nothing of the stream is synced in the trial's seconds; the end state loses every acknowledged record.
        expect(r.lostMax).toBeGreaterThan(0);
        expect(end.lostAcked).toBe(acked);
      } else {
        expect(r.lostMax).toBe(0);
        // The booted servers read real messages back: the end state serves every acknowledged record, earlier states less.
        expect(end.served).toBeGreaterThanOrEqual(acked);
        expect(new Set(r.perState.map((s) => s.served)).size).toBeGreaterThan(2);
      }
    }
    // The rate, as the cell prints it: "rep 1: 8 states in 6.9 s (70/min)".
    const perMin = [...out.matchAll(new RegExp(`rep 1: ${STATES} states in [\\d.]+ s \\((\\d+)/min\\)`, 'g'))].map((m) => Number(m[1]));
    expect(perMin).toHaveLength(2);
    expect(Math.min(...perMin)).toBeGreaterThan(0);
    expect(out).toContain('checked by nats booted on every state');
    console.log(`NATS crash states checked per minute (2 booted at a time): ${perMin.join(', ')} (Kafka's offline checker's bar: 200/min)`);
    expect(run.expectations.every((e) => e.state === 'pass')).toBe(true);
    // Nothing left: no nats-server of the trials or their booted states, no daemon, no mount.
    expect(findProcessesMatching('nats-server', work)).toEqual([]);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(work);
    expectHostDisksGone(out, 2 * (STATES + 1));
  }, 120_000);
});
