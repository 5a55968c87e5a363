// An attempt's start (run-trial.ts): a fresh cluster on the cell's target, the client connected
// to it, the partitions' leaders and an empty ack ledger, the preload outside the ledger, the
// host probes, and for a fault trial the broker figures' first read, paid before the load.
import type { MatrixCell, Scenario, Fault } from '../model/scenario.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import type { ClientDriver, ClusterClient } from '../drivers/types.ts';
import type { TargetCapabilities } from '../targets/types.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { preloadTopic } from '../workload/preload.ts';
import { assertCanInject } from '../faults/inject.ts';
import type { RunOptions } from './run-options.ts';
import type { TrialClock } from './trial-clock.ts';
import type { CellFigures } from './cell-figures.ts';
import type { TrialAttempts } from './trial-attempts.ts';
import type { TrialResources } from './trial-resources.ts';
import { trialSeed } from './fault-trial.ts';
import { startSampler } from './cell-probes.ts';
import { BrokerFiguresWatch, brokerFigures } from './broker-figures.ts';

/** What every attempt of a cell shares (runCell's arguments, resolved once). */
export interface CellContext {
  opts: RunOptions;
  driver: ClientDriver;
  /** The scenario as this cell runs it (its partitions setting over cluster.partitions). */
  scenario: Scenario;
  caps: TargetCapabilities;
  cell: MatrixCell;
  /** The cell's index in the matrix (trial seeds derive from it). */
  index: number;
  cellDir: string;
  settings: ResolvedSettings;
  log: (line: string) => void;
  runStartMs: number;
  /** The fault schedule the cell's trials run under (empty in a measure: throughput cell, or without faults). */
  cellFaults: readonly Fault[];
  figures: CellFigures;
  attempts: TrialAttempts;
}

export interface TrialSetup {
  client: ClusterClient;
  leaders: Map<number, number>;
  ledger: AckLedger;
  factory: BatchFactory;
  /** The broker whose guest probes a VM target reads. */
  probedBroker: number;
}

export async function startTrialCluster(ctx: CellContext, rep: number, repDir: string, clock: TrialClock, res: TrialResources): Promise<TrialSetup> {
  const { opts, scenario, caps, settings, log } = ctx;
  const w = scenario.workload;
  log(`${ctx.attempts.label(rep)}: starting ${scenario.cluster.brokers} broker(s)`);
  const cluster = await opts.target.start({
    cluster: scenario.cluster,
    settings,
    workDir: repDir,
    signal: opts.signal,
    seed: trialSeed(opts.baseSeed ?? 0, ctx.index, rep),
    // On the host route's fault disks a cut keeps each disk's image as it left it (trial-evidence.ts).
    ...(caps.faultDisk === 'host' ? { disks: { evidence: { trialDir: repDir, target: opts.target.kind } } } : {}),
  });
  res.cluster = cluster;
  ctx.figures.accelerator = cluster.accelerator;
  clock.lapSplit(cluster.startSteps?.steps ?? {}, 'brokerStart');
  Object.assign(clock.detail, cluster.startSteps?.detail);
  clock.notResumed.push(...(cluster.startSteps?.notResumed ?? []));
  if (ctx.cellFaults.length) assertCanInject([...ctx.cellFaults], cluster, opts.target);
  const client = ctx.driver.connect(cluster, { dataOnHost: caps.dataOnHost });
  const leaders = new Map([...(await cluster.leaders(scenario.cluster.topic))].map(([p, b]) => [p, b.id]));
  const ledger = new AckLedger({
    recordsPerBatch: w.recordsPerBatch,
    producerIdBase: (Date.now() % 1_000_000) * 1000,
    partitions: [...leaders.keys()],
  });
  const factory = new BatchFactory({ recordBytes: w.recordBytes, recordsPerBatch: w.recordsPerBatch });
  const preloadBytes = settings.values.preload;
  if (typeof preloadBytes === 'number') {
    clock.lap('leaders');
    // On the host the brokers' data dirs are theirs (a fault disk's mount, or plain dirs under repDir).
    const dataDirs = caps.dataOnHost ? cluster.brokers.map((b) => b.dataDir) : [];
    const pre = await preloadTopic(client, {
      topic: scenario.cluster.topic,
      leaders,
      bytes: preloadBytes,
      signal: opts.signal,
      space: { dir: dataDirs[0] ?? repDir, replicationFactor: scenario.cluster.replicationFactor },
      writeBack: dataDirs,
    });
    log(`rep ${rep + 1}: preloaded ${(pre.bytes / 2 ** 20).toFixed(0)} MiB in ${pre.seconds.toFixed(1)} s (${pre.mbPerSec.toFixed(0)} MB/s), written back to the device in ${pre.writeBackSeconds.toFixed(1)} s, outside the ack ledger`);
    if (rep === 0) ctx.figures.preload = pre;
    // The preload is none of the trial's named steps.
    clock.lap('other');
  }
  // A VM target probes inside the guest (its page cache is the one a power cut loses).
  const probedBroker = [...leaders.values()][0] ?? cluster.brokers[0].id;
  res.sampler = caps.guestProbes ? null : await startSampler(cluster, caps, log);
  if (ctx.cellFaults.length) {
    // Broker counters restart at 0 with a restarted broker: read before the fault. The first
    // read is paid here, before the load (broker-figures.ts says why).
    res.figuresWatch = new BrokerFiguresWatch((note) => brokerFigures(client, cluster, caps, note));
    const warm = await res.figuresWatch.warmUp(10_000);
    if ('missing' in warm) log(`rep ${rep + 1}: broker figures before the load: ${warm.missing}`);
    else clock.detail.figuresWarmUpMs = warm.tookMs;
  }
  clock.lap('leaders');
  return { client, leaders, ledger, factory, probedBroker };
}
