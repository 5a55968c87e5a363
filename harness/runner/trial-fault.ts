// An attempt's fault schedule (run-trial.ts; fault-schedule.ts drives it): waits for each
// entry's moment while the load runs, reads the broker figures just before the main entry (their
// counters restart with a restarted broker), marks the produce failures after the first entry,
// and hands every lasting entry's heal to the attempt's release, which runs it if the trial fails.
import type { FaultableCluster } from '../targets/types.ts';
import { FAULTS } from '../faults/registry.ts';
import type { FiguresReading } from './broker-figures.ts';
import type { TrialClock } from './trial-clock.ts';
import type { CellContext, TrialSetup } from './trial-cluster.ts';
import type { TrialLoad } from './trial-load.ts';
import type { TrialResources } from './trial-resources.ts';
import { trialSeed } from './fault-trial.ts';
import { driveSchedule, mainEntry, type ScheduleOutcome } from './fault-schedule.ts';

export interface DrivenTrialFault {
  schedule: ScheduleOutcome;
  /** The brokers' figures read at the main entry's moment, null when no read answered in time. */
  beforeFault: FiguresReading | null;
  /** Some entry that started stopped the load (a kill, a cut). */
  stoppedLoad: boolean;
}

export async function driveTrialFault(ctx: CellContext, rep: number, setup: TrialSetup, load: TrialLoad, res: TrialResources, clock: TrialClock): Promise<DrivenTrialFault> {
  const { opts, scenario, log } = ctx;
  const faults = ctx.cellFaults;
  const main = faults[mainEntry(faults)]!;
  let beforeFault: FiguresReading | null = null;
  const schedule = await driveSchedule({
    faults,
    seed: trialSeed(opts.baseSeed ?? 0, ctx.index, rep),
    cluster: res.cluster as FaultableCluster,
    topic: scenario.cluster.topic,
    ledger: setup.ledger,
    loadStartMs: load.loadStartMs,
    loadDone: res.loadPromise!,
    stopLoad: () => res.stopLoad.abort(),
    signal: opts.signal,
    client: setup.client,
    ...(ctx.caps.dataFiles ? { dataFiles: ctx.caps.dataFiles } : {}),
    atFirst: () => load.faultMark.abort(),
    beforeMain: async () => {
      // The load's step ends where the load stops (a kill, a cut); it runs through the others.
      if (!FAULTS[main.kind].loadRunsThrough) clock.lap('load');
      // Bounded (FRESH_FIGURES_WITHIN_MS): a stuck broker must not push the cut far past its moment.
      const reading = await res.figuresWatch!.atFault();
      if ('missing' in reading) log(`rep ${rep + 1}: no broker figures before the fault (${reading.missing}); they are read after recovery`);
      else {
        beforeFault = reading;
        for (const note of reading.notes) log(note);
      }
    },
    onLasting: (heal) => res.beforeRelease.push(heal),
  });
  const stoppedLoad = schedule.entries.some((e) => e.fired !== null && !FAULTS[e.plan.fault.kind].loadRunsThrough);
  return { schedule, beforeFault, stoppedLoad };
}
