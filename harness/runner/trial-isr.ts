// The ISR during an attempt's load (harness/probes/isr-sampler.ts): sampled where there is an
// ISR to watch (replication factor > 1) and few enough partitions to read every one each round;
// afterwards the trial keeps the changes (ms from the load's start) and, under acks=all, how many
// records were acknowledged while the ISR was smaller than the replication factor.
import type { Acks } from '../../engine/settings/values.ts';
import type { Trial } from '../results/types.ts';
import type { AckLedger } from '../history/ledger.ts';
import { IsrSampler, ackedWhileIsrShrunk, type HwChange, type IsrChange } from '../probes/isr-sampler.ts';
import { hwLongestStillMs } from '../probes/hw-figures.ts';
import type { CellContext, TrialSetup } from './trial-cluster.ts';

/** Above this many partitions a round of readings would be a load of its own: not sampled (the figure is then absent, not 0). */
export const ISR_SAMPLED_PARTITIONS_MAX = 16;

export function startIsrSampler(ctx: CellContext, setup: TrialSetup): IsrSampler | null {
  const partitions = setup.ledger.partitions();
  // A driver that reads no ISR (a system without one): not sampled, the figure absent.
  if (ctx.scenario.cluster.replicationFactor < 2 || partitions.length > ISR_SAMPLED_PARTITIONS_MAX || !setup.client.inSyncReplicas) return null;
  return new IsrSampler(setup.client, ctx.scenario.cluster.topic, partitions).start();
}

export function addIsrFigures(
  trial: Trial,
  changes: readonly IsrChange[],
  hw: readonly HwChange[] | null,
  o: { ledger: AckLedger; loadStartMs: number; loadEndMs: number; acks: Acks; rf: number },
): void {
  trial.isr = changes.map((c) => ({ ...c, atMs: c.atMs - o.loadStartMs }));
  if (hw) {
    trial.hw = hw.map((c) => ({ ...c, atMs: c.atMs - o.loadStartMs }));
    const still = hwLongestStillMs(hw, o.loadStartMs, o.loadEndMs);
    if (still !== null) trial.hwLongestStillMs = still;
  }
  if (o.acks !== 'all') return;
  const shrunk = ackedWhileIsrShrunk(
    o.ledger.partitions().flatMap((p) => [...o.ledger.batches(p)]),
    changes,
    o.rf,
  );
  trial.ledger.ackedWhileIsrShrunk = shrunk.records;
}
