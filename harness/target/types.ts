// A target is how brokers are started (Jepsen's "db" + "os"): local processes now, QEMU VMs
// for power cuts. The runner, the faults and the checker see only this interface.
import type { ResolvedSettings } from '../scenario/settings.ts';
import type { ClusterSpec } from '../scenario/types.ts';

export interface TargetBroker {
  id: number;
  /** URL the host (load, checker) uses to reach this broker. */
  url: string;
  dataDir: string;
  logPath: string;
  pid: number | null;
}

export interface ClusterStartOptions {
  cluster: ClusterSpec;
  settings: ResolvedSettings;
  /** Everything of this cell's cluster lives under here (data dirs, broker logs). */
  workDir: string;
  signal?: AbortSignal;
}

export interface RunningCluster {
  readonly brokers: TargetBroker[];
  readonly accelerator?: 'kvm' | 'tcg';
  /** Current leader URL of every partition of the topic, from the controller. */
  leaders(topic: string): Promise<Map<number, TargetBroker>>;
  /** GET /v1/metrics of every live broker. */
  metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>>;
  stop(): Promise<void>;
}

export interface Target {
  readonly kind: 'process' | 'vm';
  start(opts: ClusterStartOptions): Promise<RunningCluster>;
}

/** Broker `--set` pairs for a cell's resolved settings (Kafka's names). */
export function brokerSetFlags(s: ResolvedSettings): string[] {
  const flush =
    s.flush.kind === 'never' || s.flush.kind === 'per-batch' ? s.flush.kind : `${s.flush.kind}:${s.flush.every}`;
  const pairs: Record<string, string | number | boolean> = {
    io: s.io,
    flush,
    sync: s.sync,
    'segment.bytes': s.segmentBytes,
    'segment.ms': s.segmentMs,
    'segment.index.bytes': s.segmentIndexBytes,
    'index.interval.bytes': s.indexIntervalBytes,
    'message.max.bytes': s.maxBatchBytes,
    'min.insync.replicas': s.minInsyncReplicas,
    'replica.lag.time.max.ms': s.replicaLagTimeMaxMs,
    'unclean.leader.election.enable': s.uncleanLeaderElectionEnable,
  };
  return Object.entries(pairs).map(([k, v]) => `${k}=${v}`);
}
