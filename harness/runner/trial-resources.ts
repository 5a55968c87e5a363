// What one attempt of a cell (run-trial.ts) holds while it runs, and its release in every case
// (the attempt's finally): the consumers, the load, the probes, the cluster and its data dirs.
import { rmSync } from 'node:fs';
import type { ProbeSampler } from '../probes/index.ts';
import type { ProduceResult } from '../drivers/types.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { ConsumerGroups } from '../workload/consumers.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import type { BrokerFiguresWatch } from './broker-figures.ts';
import type { TrialEvidence } from './trial-evidence.ts';
import { wakeStopped } from '../faults/pause.ts';
import type { IsrSampler } from '../probes/isr-sampler.ts';

export class TrialResources {
  cluster: RunningCluster | null = null;
  sampler: ProbeSampler | null = null;
  loadPromise: Promise<ProduceResult> | null = null;
  consumerGroups: ConsumerGroups | null = null;
  figuresWatch: BrokerFiguresWatch | null = null;
  isrSampler: IsrSampler | null = null;
  /** Stops the load before its end (a fault that needs it stopped; the release). */
  readonly stopLoad = new AbortController();
  /** Run first at the release, before anything else stops (a lasting fault's heal: SIGCONT, rules removed). */
  readonly beforeRelease: Array<() => Promise<void>> = [];

  /** Heals what lasts, ends everything still running, stops the cluster and returns the disk evidence kept (trial-evidence.ts). */
  async release(evidence: TrialEvidence, cutAtMs: number | null, keepData: boolean, log: (line: string) => void): Promise<DisksManifest | null> {
    // A heal already run (or failed, which the schedule reported) is not run again.
    for (const heal of this.beforeRelease.splice(0)) await heal().catch((err: unknown) => log(`heal at the trial's end failed: ${err instanceof Error ? err.message : String(err)}`));
    // Whatever partition or slow link is still in force in the cluster's lab network (one whose
    // start failed halfway, a heal that failed above): removed before the brokers are stopped.
    const lab = this.cluster?.labNetwork?.()?.lab;
    const inForce = lab?.activeFaults.map((f) => f.description) ?? [];
    if (inForce.length) {
      log(`lab network fault(s) still in force at the trial's end, healed: ${inForce.join('; ')}`);
      await lab!.healAll().catch((err: unknown) => log(`heal of the lab network at the trial's end failed: ${err instanceof Error ? err.message : String(err)}`));
    }
    // No broker may be stopped (SIGSTOP) from here on: it could not take the stop's SIGTERM.
    const woke = wakeStopped(this.cluster?.brokers.map((b) => b.pid) ?? []);
    if (woke.length) log(`broker process(es) ${woke.join(', ')} were still stopped (state T) before the cluster's stop: SIGCONT sent`);
    this.figuresWatch?.stop();
    if (this.consumerGroups) await this.consumerGroups.finish().catch(() => undefined);
    this.consumerGroups = null;
    if (this.loadPromise) {
      this.stopLoad.abort();
      await this.loadPromise.catch(() => undefined);
    }
    if (this.sampler) await this.sampler.stop().catch(() => undefined);
    if (this.isrSampler) await this.isrSampler.stop().catch(() => undefined);
    const cluster = this.cluster;
    evidence.beforeStop(cluster);
    let kept: DisksManifest | null = null;
    try {
      if (cluster) await cluster.stop();
    } finally {
      // disks.json (or the cut copies dropped) even when the stop fails.
      kept = evidence.afterStop(cluster, cutAtMs);
    }
    if (!keepData && cluster) for (const b of cluster.brokers) rmSync(b.dataDir, { recursive: true, force: true });
    return kept;
  }
}
