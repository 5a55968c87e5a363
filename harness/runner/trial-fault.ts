// An attempt's fault (run-trial.ts): waits for its moment while the load runs, reads the broker
// figures just before it (their counters restart with a restarted broker), marks the produce
// failures after it, and delivers it (fault-trial.ts driveFault).
import type { FaultableCluster } from '../targets/types.ts';
import type { FiguresReading } from './broker-figures.ts';
import type { TrialClock } from './trial-clock.ts';
import type { CellContext, TrialSetup } from './trial-cluster.ts';
import type { TrialLoad } from './trial-load.ts';
import type { TrialResources } from './trial-resources.ts';
import { driveFault, trialSeed } from './fault-trial.ts';

export type DrivenFault = Awaited<ReturnType<typeof driveFault>>;

export interface DrivenTrialFault {
  driven: DrivenFault;
  /** The brokers' figures read at the fault's moment, null when no read answered in time. */
  beforeFault: FiguresReading | null;
}

export async function driveTrialFault(ctx: CellContext, rep: number, setup: TrialSetup, load: TrialLoad, res: TrialResources, clock: TrialClock): Promise<DrivenTrialFault> {
  const { opts, scenario, log } = ctx;
  let beforeFault: FiguresReading | null = null;
  const driven = await driveFault({
    fault: ctx.cellFault!,
    seed: trialSeed(opts.baseSeed ?? 0, ctx.index, rep),
    cluster: res.cluster as FaultableCluster,
    topic: scenario.cluster.topic,
    ledger: setup.ledger,
    loadStartMs: load.loadStartMs,
    loadDone: res.loadPromise!,
    stopLoad: () => res.stopLoad.abort(),
    signal: opts.signal,
    client: setup.client,
    beforeInject: async () => {
      clock.lap('load');
      try {
        // Bounded (FRESH_FIGURES_WITHIN_MS): a stuck broker must not push the cut far past its moment.
        const reading = await res.figuresWatch!.atFault();
        if ('missing' in reading) log(`rep ${rep + 1}: no broker figures before the fault (${reading.missing}); they are read after recovery`);
        else {
          beforeFault = reading;
          for (const note of reading.notes) log(note);
        }
      } finally {
        load.faultMark.abort();
      }
    },
  });
  return { driven, beforeFault };
}
