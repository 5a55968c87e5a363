// What a loaded scenario looks like to the runner, the faults and the report.

import type { SettingValue } from '../../engine/settings/index.ts';
import type { ClusterNetwork } from './kinds.ts';
import type { DriverName, FaultKind, TargetKind } from './kinds.ts';
import type { KafkaProducerSettings } from './kafka-producer.ts';
import type { ExternalSpec } from './external-spec.ts';
import type { DiskSpec } from './disk-spec.ts';
import type { ConsumerSpec } from './consumer-spec.ts';

export type Target = TargetKind;

export interface VmOptions {
  /** auto: try KVM, fall back to TCG when the guest does not come up (see notes/vm-power-cut.md). */
  accelerator: 'auto' | 'kvm' | 'tcg';
  memoryMiB: number;
  diskMiB: number;
  /** ext4 mount options in the guest, e.g. `commit=5`; '' = the kernel's defaults. */
  mountOptions: string;
  /** The data disk (vm.disk:); absent = model file. */
  disk?: DiskSpec;
}

export interface ClusterSpec {
  brokers: number;
  topic: string;
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  /** loopback (absent) or namespaces: each broker its own host (cluster-network.ts). */
  network?: ClusterNetwork;
}

export interface MatrixCell {
  /** Stable across runs of the same file: `io=direct,flush=never`; `base` when nothing varies. */
  id: string;
  label: string;
  /** The settings this cell sets on top of the scenario's base settings (normalized values). */
  params: Record<string, SettingValue>;
}

export interface WorkloadSpec {
  recordBytes: number;
  recordsPerBatch: number;
  connections: number;
  /** Requests in flight per connection. */
  pipelining: number;
  /** Batches per second over all connections; null = closed loop (as fast as answers come). */
  rate: number | null;
  warmupSec: number;
  durationSec: number;
  /** Judged trials wanted per cell (performance runs: repetitions of the load). */
  repetitions: number;
  /**
   * More attempts a cell may run, over all its trials, in place of trials that cannot be judged
   * (the fault did not fire, suspect): each replaced attempt stays in run.json, marked replacedBy.
   */
  extraTrials: number;
  /** The client driver the load and the checker go through (harness/drivers/registry.ts). */
  driver: DriverName;
  /** `workload.producer:` (driver kafka): the Kafka producer's settings. */
  producer?: KafkaProducerSettings;
  /** `workload.consumers:` (driver kafka): groups of consumers reading while the load runs. */
  consumers: ConsumerSpec[];
}

/** `followers`: the in-sync followers of partition 0's leader at the moment of the fault (harness/faults/victims.ts). */
/**
 * Whom a fault hits: a broker index, a list of them, or a role at the fault's moment (harness/faults/victims.ts):
 * leader, followers (its in-sync followers), one (one in-sync follower), minority (floor((n-1)/2) brokers, followers
 * first), majority (floor(n/2)+1: the leader and its followers first), all.
 */
export type FaultVictims = { broker: number } | { brokers: number[] } | 'leader' | 'followers' | 'one' | 'minority' | 'majority' | 'all';

export type FaultWhen =
  /** Seconds since the load started (warm-up included). */
  | { at: number }
  /** A uniformly random moment in [from, to] seconds since the load started, drawn per trial. */
  | { between: [number, number] }
  /** As soon as this many records have been acknowledged. */
  | { afterAcked: number };

/** One entry of a scenario's `faults:` schedule (applied in order within each trial). */
export interface Fault {
  kind: FaultKind;
  target: FaultVictims;
  /** When it starts, from the load's start. */
  when: FaultWhen;
  /** Lasting kinds (those with a heal, harness/faults/registry.ts): seconds from its start to its heal. */
  duration?: number;
}

export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

export interface Condition {
  param: string;
  value: SettingValue;
  /** As written, for messages. */
  text: string;
}

export interface MetricRef {
  /** Dotted path into CellResult (`ledger.ackedLost`); shorthand already expanded. */
  path: string;
  where: Condition[];
}

export type Operand =
  | { kind: 'number'; value: number }
  | { kind: 'metric'; factor: number; metric: MetricRef };

export interface Expectation {
  expression: string;
  line: number;
  column: number;
  left: MetricRef;
  op: CompareOp;
  right: Operand;
  /** `in every trial`: checked on each trial's ledger rather than the cell's. */
  everyTrial: boolean;
}

export interface Scenario {
  name: string;
  file: string;
  question: string;
  description?: string;
  target: Target;
  vm?: VmOptions;
  cluster: ClusterSpec;
  /** Base settings (normalized) under every cell. */
  settings: Record<string, SettingValue>;
  matrix: MatrixCell[];
  workload: WorkloadSpec;
  /** target: external: the cluster's bootstrap servers and fault commands. */
  external?: ExternalSpec;
  faults: Fault[];
  /** Named fault schedules (`faultSets:`): a cell whose `faults` setting names one runs it instead of `faults`. */
  faultSets: Record<string, Fault[]>;
  expectations: Expectation[];
  /** Set on the process target when cells write host-global sysctls: the runner must be told it may. */
  requiresRoot?: boolean;
  /** The file's content as parsed YAML, for run.json. */
  raw: unknown;
}

/** Every fault entry a scenario may run: its `faults:` and every schedule of `faultSets:` (what its targets must be ready for). */
export function everyFaultEntry(s: { faults?: readonly Fault[]; faultSets?: Readonly<Record<string, readonly Fault[]>> }): Fault[] {
  return [...(s.faults ?? []), ...Object.values(s.faultSets ?? {}).flat()];
}
