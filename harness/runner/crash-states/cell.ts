// A matrix cell whose fault is `crash-states`: each repetition is a recorded trial through the
// cell's target and driver (trial.ts) whose write log yields N crash states checked on the host
// by the target's own recovery, a sample booted (or every state booted, on a target with no
// offline recovery tool: capabilities.crashStateCheck 'boot'). The
// cell's crashStates holds the loss distribution over every state of every repetition; its
// ledger is the worst state's (so `ackedLost == 0` reads "no crash state loses an acknowledged
// record"); a booted state disagreeing with its host check fails the cell.
import * as hdr from 'hdr-histogram-js';
import { summarizeLatency } from '../../../engine/common/latency.ts';
import type { FaultCellOptions } from '../run-options.ts';
import { crashStatesFields } from '../../disk/crash-states/fields.ts';
import { planFault } from '../../faults/schedule.ts';
import type { CellResult, CrashStateRow, Trial } from '../../results/types.ts';
import { summariseCrashStates } from '../../disk/crash-states/run.ts';
import { runCrashStatesTrial, type CrashStatesTrial } from './trial.ts';
import { trialDir } from '../../results/store.ts';
import { mergedThroughput } from '../cell-result.ts';

/** What a fault kind's own cell gets (harness/runner/own-cell.ts). */
export type CrashStatesCellOptions = FaultCellOptions;

const emptyHistogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });

function suspicionOf(notes: string[]): Pick<Trial, 'suspect' | 'note'> {
  return notes.length ? { suspect: true, note: notes.join('; ') } : {};
}

export async function runCrashStatesCell(o: CrashStatesCellOptions): Promise<CellResult> {
  const { scenario } = o;
  const fault = scenario.faults[0]!;
  const fields = crashStatesFields(fault);
  const w = scenario.workload;
  const trials: CrashStatesTrial[] = [];
  const runTrials: Trial[] = [];
  const merged = emptyHistogram();
  const errors: Record<string, number> = {};
  const rps: number[] = [];
  const mbps: number[] = [];
  const reqps: number[] = [];
  for (let rep = 0; rep < w.repetitions; rep++) {
    if (o.signal.aborted) break;
    const plan = planFault(fault, o.trialSeed(rep));
    if (plan.atMs === null) throw new Error('fault crash-states: when must be at or between (the cut time), not afterAcked');
    const t0 = Date.now();
    const seed = (fields.seed + rep * 7919) >>> 0;
    const workDir = trialDir(o.cellDir, rep);
    const where = o.target.capabilities.faultDisk === 'host' ? "on the host's fault disk" : "on its VM's recorded disk";
    o.log(`rep ${rep + 1}/${w.repetitions}: recorded ${o.target.kind} trial ${where}, cut ${plan.whenText} (${(plan.atMs / 1000).toFixed(2)} s), then ${fields.states} crash states (${fields.onCut}, seed ${seed})`);
    const t: CrashStatesTrial = await runCrashStatesTrial({
      target: o.target,
      driver: o.driver,
      workDir,
      cluster: scenario.cluster,
      settings: o.settings,
      cutAfterMs: plan.atMs,
      states: fields.states,
      policy: fields.onCut,
      seed,
      boot: fields.boot,
      keepBaseImage: o.keepData === true,
      log: o.log,
      signal: o.signal,
      workload: { recordBytes: w.recordBytes, recordsPerBatch: w.recordsPerBatch, connections: w.connections, pipelining: w.pipelining, ...(o.producer ? { producer: o.producer } : {}) },
    });
    o.log(`rep ${rep + 1}: checked by ${t.checkedBy}; steps (ms) ${Object.entries(t.steps).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    trials.push(t);
    if (t.load) {
      merged.add(t.load.latencyUs);
      for (const [k, v] of Object.entries(t.load.errors)) errors[k] = (errors[k] ?? 0) + v;
      const sec = Math.max(0.001, (t.cutAtMs - t.loadStartMs) / 1000);
      rps.push(t.ackedAtCut / sec);
      reqps.push(t.ackedAtCut / w.recordsPerBatch / sec);
      mbps.push((t.ackedAtCut * w.recordBytes) / sec / 1e6);
    }
    const r = t.result;
    const worst = r.perState.reduce<CrashStateRow | null>((a, s) => (a === null || s.lostAcked > a.lostAcked ? s : a), null);
    runTrials.push({
      index: rep,
      fault: {
        kind: 'crash-states',
        targets: [1],
        atMs: t.cutAtMs - t.loadStartMs,
        ackedBeforeCut: t.ackedAtCut,
        recovery: [],
        when: plan.whenText,
        ...(plan.seed !== undefined ? { seed: plan.seed } : {}),
        ...(t.storageFailures.length ? { storageFailures: t.storageFailures } : {}),
      },
      ledger: {
        acked: t.ackedAtCut,
        ackedLost: r.lostMax,
        duplicates: Math.max(0, ...r.perState.map((s) => s.duplicates)),
        outOfOrder: Math.max(0, ...r.perState.map((s) => s.outOfOrder)),
        corrupt: Math.max(0, ...r.perState.map((s) => s.corrupt)),
        offsetChanged: Math.max(0, ...r.perState.map((s) => s.offsetChanged)),
        inconsistentOffsets: Math.max(0, ...r.perState.map((s) => s.inconsistentOffsets)),
      },
      ...suspicionOf([...t.fullDisk, ...(t.disagreements.length ? [`booted states disagree with the host check: ${t.disagreements.join('; ')}`] : [])]),
      cycleMs: Date.now() - t0,
    });
    const b = t.breakdown;
    o.log(
      `rep ${rep + 1}: ${r.states} states in ${(b.wallMs / 1000).toFixed(1)} s (${b.statesPerMin}/min); lost acknowledged min/median/p99/max ` +
        `${r.lostMin}/${r.lostMedian}/${r.lostP99}/${r.lostMax}, ${(r.fractionLosing * 100).toFixed(1)} % of states losing` +
        `${worst && worst.lostAcked > 0 ? `, earliest at ${r.earliestLosingAtMs} ms` : ''}` +
        (r.verification ? `; booted ${r.verification.agreed}/${r.verification.booted} agree` : '; every state booted'),
    );
  }
  const disagreements = trials.flatMap((t) => t.disagreements);
  // The booted samples are the evidence that the offline check reads states as the real broker does.
  if (disagreements.length) throw new Error(`crash states: booted states disagree with the host check (a checker or recorder bug): ${disagreements.join('; ')}`);
  if (trials.length === 0) throw new Error('crash states: interrupted before any trial finished');
  // One distribution over every state of every repetition; rows renumbered, trial by trial.
  const rows: CrashStateRow[] = [];
  for (const t of trials) for (const s of t.result.perState) rows.push({ ...s, state: rows.length });
  const first = trials[0]!.result;
  const crashStates = summariseCrashStates(rows, { policy: first.policy, seed: first.seed, writeLog: first.writeLog, flushMarksMs: first.flushMarksMs });
  // No booted sample where every state was booted (the target has no offline check to verify).
  if (trials.some((t) => t.result.verification)) {
    crashStates.verification = {
      booted: trials.reduce((a, t) => a + (t.result.verification?.booted ?? 0), 0),
      agreed: trials.reduce((a, t) => a + (t.result.verification?.agreed ?? 0), 0),
    };
  }
  const worstTrial = runTrials.reduce((a, t) => (t.ledger.ackedLost > a.ledger.ackedLost ? t : a));
  const status: CellResult['status'] = o.signal.aborted ? 'interrupted' : 'ok';
  return {
    id: o.cell.id,
    params: o.cell.params,
    status,
    note: `crash states (${crashStates.policy}): ${crashStates.states} states over ${trials.length} trial(s); the ledger is the worst state's`,
    ...mergedThroughput(rps, mbps, reqps),
    latencyUs: summarizeLatency(merged),
    errors,
    ledger: worstTrial.ledger,
    // The brokers' figures are not read in a crash-state cell (its flushes are the write log's, in crashStates): absent, not 0.
    broker: {},
    histograms: { latencyUs: hdr.encodeIntoCompressedBase64(merged) },
    timeseries: [],
    trials: runTrials,
    ...(trials[0]!.accelerator ? { accelerator: trials[0]!.accelerator } : {}),
    crashStates,
  };
}
