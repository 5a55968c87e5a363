// An attempt's load (run-trial.ts): the producers writing into the ack ledger and the consumer
// groups reading while they write; both end with the load, or earlier at a fault that stops it.
import type { ResolvedSettings } from '../model/settings.ts';
import type { KafkaProducerSettings } from '../model/kafka-producer.ts';
import type { RunningCluster } from '../targets/types.ts';
import { ConsumerGroups } from '../workload/consumers.ts';
import { processesCpuMs } from '../probes/process-stat.ts';
import { readFile } from 'node:fs/promises';
import { dropPageCache } from './consumer-lines.ts';
import type { CellContext, TrialSetup } from './trial-cluster.ts';
import type { TrialResources } from './trial-resources.ts';

export interface TrialLoad {
  /** Wall clock when the produce call went out (the fault schedule counts from here). */
  loadStartMs: number;
  /** Aborted at the first fault's moment, just before delivery: later produce failures are its echo. */
  faultMark: AbortController;
}

/** Starts the produce load (res.loadPromise) and the consumer groups (res.consumerGroups). */
export function startTrialLoad(ctx: CellContext, rep: number, setup: TrialSetup, res: TrialResources): TrialLoad {
  const { opts, scenario, settings, caps, log } = ctx;
  const w = scenario.workload;
  const { client, leaders, ledger, factory } = setup;
  const running = res.cluster!;
  const faultMark = new AbortController();
  const loadStartMs = Date.now();
  let markLoadStart: (ms: number) => void = () => undefined;
  const loadStarted = new Promise<number>((resolve) => (markLoadStart = resolve));
  const loadPromise = client.produce({
    leaders,
    topic: scenario.cluster.topic,
    acks: settings.acks,
    timeoutMs: 30_000,
    connections: w.connections,
    pipelining: w.pipelining,
    rate: w.rate,
    warmupSec: w.warmupSec,
    durationSec: w.durationSec,
    ledger,
    factory,
    ...(cellProducer(w.producer, settings) ?? {}),
    // A fault that needs it stops the load at the cut; Ctrl-C stops it too.
    signal: ctx.cellFaults.length ? AbortSignal.any([opts.signal, res.stopLoad.signal]) : opts.signal,
    faultSignal: faultMark.signal,
    onLoadStart: (ms) => markLoadStart(ms),
    onSecond: (p) =>
      log(`rep ${rep + 1}: ${p.t + 1}/${w.durationSec}s ${Math.round(p.recordsPerSec).toLocaleString('en-US')} records/s p99 ${p.p99Us ?? '-'} µs (run ${Math.round((Date.now() - ctx.runStartMs) / 1000)}s)`),
  });
  res.loadPromise = loadPromise;
  // The consumers read while the producers write; they stop with the load.
  res.consumerGroups = w.consumers.length
    ? new ConsumerGroups(client, w.consumers, {
        topic: scenario.cluster.topic,
        partitions: [...leaders.keys()],
        ledger,
        // A driver that never says when its clock started: the groups count from here.
        loadStarted: Promise.race([loadStarted, loadPromise.then(() => loadStartMs, () => loadStartMs)]),
        signal: opts.signal,
        ...(settings.values['consumer.cache'] === 'cold' ? { beforeGroupStart: (name: string) => dropPageCache(caps, (line) => log(`rep ${rep + 1}: ${name}: ${line}`)) } : {}),
        ...(caps.sysctls === 'host' ? { brokerCpuMs: () => brokersCpuMs(running) } : {}),
      })
    : null;
  return { loadStartMs, faultMark };
}

/** The CPU ms the cluster's broker processes (host pids) have used, null when one is unreadable. */
function brokersCpuMs(cluster: RunningCluster): Promise<number | null> {
  const pids = cluster.brokers.map((b) => b.pid);
  if (pids.some((p) => p === null)) return Promise.resolve(null);
  return processesCpuMs(pids as number[], (f) => readFile(f, 'utf8'));
}

/** workload.producer with the cell's library / enable.idempotence / max.in.flight settings over it. */
export function cellProducer(base: KafkaProducerSettings | undefined, settings: ResolvedSettings): { producer: Record<string, unknown> } | undefined {
  const v = settings.values;
  const over: Record<string, unknown> = {};
  if (typeof v.library === 'string') over.library = v.library;
  if (typeof v['enable.idempotence'] === 'boolean') over['enable.idempotence'] = v['enable.idempotence'];
  if (typeof v['max.in.flight'] === 'number') over['max.in.flight'] = v['max.in.flight'];
  if (!base && Object.keys(over).length === 0) return undefined;
  return { producer: { ...(base ?? {}), ...over } };
}
