// A target is how brokers are started (Jepsen's "db" + "os"): local processes now, QEMU VMs
// for power cuts. The runner, the faults and the checker see only this interface.
import type { ReadErrorRange } from '../disk/disk-faults.ts';
import type { LogFileNames } from './log-files.ts';
import { SCENARIO_SETTINGS, isServerSetting, type SettingValue } from '../../engine/settings/index.ts';
import type { ProbeSeries } from '../probes/index.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import type { ClusterSpec } from '../model/scenario.ts';
import type { DriverName, FaultAction, FaultKind, TargetKind } from '../model/kinds.ts';
import type { Fault } from '../model/scenario.ts';
import type { FaultScenarioIssue } from '../model/scenario-issue.ts';
import type { ExternalSpec } from '../model/external-spec.ts';
import type { TrialStepDetail, TrialStepKey } from '../results/trial-steps.ts';
import type { BrokerDiskEvidence } from '../disk/disk-evidence.ts';
import type { FileFaultRecord, FilledDisk, StorageFailure } from '../results/types.ts';
import type { HostFaultDiskStart, RecordedDisk } from './host-fault-disks.ts';
import type { CheckStateOptions, StateCheck } from '../disk/crash-states/check-state.ts';
import type { LabNetwork } from '../net/lab-network.ts';
import type { Endpoint } from '../net/partition.ts';
import type { PartitionCost } from './partition-limits.ts';
import type { DataFileSets } from './data-files.ts';

export interface TargetBroker {
  id: number;
  /** URL the host (load, checker) uses to reach this broker. */
  url: string;
  /** host:port of its Kafka protocol listener, where it has one (the kafka driver connects there). */
  kafka?: string;
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
  /** The trial's seed (reproducible draws of the target, e.g. the NBD disk's onCut policy). */
  seed?: number;
  /**
   * Targets with a fault disk (capabilities.faultDisk 'host' or 'guest'): record the brokers'
   * disks for crash states (base image + write log, RunningCluster.recordedDisk), or start on
   * existing disk images (a crash state booted: the brokers recover what the image holds;
   * nothing is formatted).
   */
  disks?: HostFaultDiskStart;
}

export interface RunningCluster {
  readonly brokers: TargetBroker[];
  readonly accelerator?: 'kvm' | 'tcg';
  /** Current leader URL of every partition of the topic, from the controller. */
  leaders(topic: string): Promise<Map<number, TargetBroker>>;
  /** Current leader broker id of a partition (from the controller), or null when offline. */
  leaderId(topic: string, partition: number): number | null;
  /** The target's own view of every live broker's figures (the runner reads them through the client driver instead). */
  metrics(): Promise<Array<{ brokerId: number; metrics: unknown }>>;
  /** How start() spent its time, in contiguous stretches (image, setup, boot, brokerStart, leaders); absent: not split. */
  readonly startSteps?: ClusterStartSteps;
  /** Started with disks.record: a broker's base image and write log (the crash-state builder's inputs; host-fault-disks.ts, vm-recorded-disk.ts). */
  recordedDisk?(brokerId: number): RecordedDisk | null;
  /**
   * Started with disks.evidence: keep every broker's final image at stop() (the brokers then stop
   * gracefully, however long it takes), beside the cut images the cut already kept.
   */
  keepFinalDiskImages?(): void;
  /** Started with disks.evidence: the images kept so far and the copies that could not be made (harness/disk/disk-evidence.ts). */
  diskEvidence?(): { brokers: BrokerDiskEvidence[]; incomplete: string[] };
  /**
   * The log dirs the brokers' own logs say failed (a full disk, an I/O error), first per broker and
   * cause, read with the target's knowledge of its system's log lines. Absent: the target keeps no
   * broker logs it can read.
   */
  storageFailures?(): Promise<StorageFailure[]>;
  /** Targets with capabilities.guestProbes: the probe series the guest of a broker recorded. */
  guestProbes?(brokerId: number): ProbeSeries;
  /**
   * Started with `cluster.network: namespaces`: the lab network its nodes run in and, per broker,
   * its node and the ports of each of its links (what a partition or a slow link acts on); null
   * on loopback. Absent: the target never runs in namespaces (capabilities.refuseLabNetwork).
   */
  labNetwork?(): ClusterLabNetwork | null;
  stop(): Promise<void>;
}

/**
 * The ports of one broker's links. A partition narrowed to a link drops the traffic between the
 * two sides from or to these ports (harness/net/partition.ts: either end); every port is fixed
 * and below the ephemeral range, so no client's own port can collide with one.
 */
export interface BrokerLinkPorts {
  /** Where clients (the harness's drivers) reach the broker: durolab's HTTP API and its Kafka listener; Kafka's PLAINTEXT listener. */
  client: number[];
  /** Where the other brokers fetch its replicas: durolab's replication listener; Kafka's REPLICATION (inter-broker) listener. */
  replication: number[];
  /** Where its controller traffic goes: durolab's controller's port (at the harness); Kafka's CONTROLLER listener (KRaft, on every node). */
  controller: number[];
}

/** A cluster in the lab network (RunningCluster.labNetwork). */
export interface ClusterLabNetwork {
  lab: LabNetwork;
  /** Per broker id: the lab node it runs in, and its links' ports. */
  links: Record<number, { node: number; ports: BrokerLinkPorts }>;
  /**
   * Where the controller listens, as partition endpoints: 'harness' when it runs in the harness
   * process (durolab's: root namespace, at lab.harnessAddress), or node indexes (Kafka: every node
   * is a KRaft voter). Cut a broker from its controller with lab.partition({ a: [node], b:
   * controller.endpoints minus node, ports: links[id].ports.controller }).
   */
  controller: { endpoints: Endpoint[]; port: number };
}

/** A cluster start split into trial steps (harness/results/trial-steps.ts), in ms. */
export interface ClusterStartSteps {
  steps: Partial<Record<TrialStepKey, number>>;
  detail?: TrialStepDetail;
  /** VM starts that booted although they wanted to resume a saved guest, each with its reason. */
  notResumed?: string[];
}

export interface Target {
  readonly kind: TargetKind;
  /** What its clusters can do; the runner reads these instead of the kind. */
  readonly capabilities: TargetCapabilities;
  /** The disk model id its brokers run on, when this target put them on a model (run.json diskModel; harness/results/disk-models.ts). */
  readonly diskModel?: string;
  start(opts: ClusterStartOptions): Promise<RunningCluster>;
  /** What the system under test is (e.g. Apache Kafka's version and the JVM), for run.json and the report. */
  info?(): Promise<Record<string, string>>;
  /**
   * Crash states checked with this system's own recovery over a state's files (absent: durolab's,
   * harness/disk/crash-states/check-state.ts). close() ends what it started (a JVM).
   */
  crashStateChecker?(settings: ResolvedSettings): Promise<CrashStateChecker>;
}

export interface CrashStateChecker {
  /** Whose recovery checks the states, for the log and the report. */
  describe: string;
  checkState(o: CheckStateOptions): Promise<StateCheck>;
  close(): Promise<void>;
}

/** Broker `--set` pairs for a cell's resolved settings: every scenario setting the registry says a broker or controller reads. */
export function brokerSetFlags(s: ResolvedSettings): string[] {
  return SCENARIO_SETTINGS.filter(isServerSetting).map((setting) => `${setting.name}=${String(s.values[setting.name])}`);
}

/** What a fault did to one broker, and what the broker said when it came back. */
export interface BrokerRecovery {
  brokerId: number;
  /** Time from restart to the broker serving again. */
  restartMs: number;
  /** A VM booted again (after a power cut): spawn to agent (with what precedes the spawn), /init, guest setup (mount), broker exec to serving. */
  boot?: { bootMs: number; spawnToInitMs?: number; resumed?: boolean; resumeFallback?: string; setupMs?: number; brokerStartMs?: number };
  /** What the restart had to do besides starting the broker (e.g. format a node whose disk lost its format). */
  note?: string;
  /** The broker's own log-loading time for all its partitions, where it gives one figure and none per partition (Kafka's "Loaded N logs in X ms"); absent where it gives none. */
  logLoadMs?: number;
  /** Per partition, the engine's RecoveryReport (from GET /v1/health after restart), or what Kafka's files and log say. */
  partitions: Array<{
    topic: string;
    partition: number;
    cleanShutdown: boolean;
    /** Absent where not measured (Kafka: the partition's log files were gone after the start), never 0. */
    bytesTruncated?: number;
    /** Absent where the broker does not say (Kafka's log lines give bytes only). */
    batchesTruncated?: number;
    /** Absent where the broker times its recovery per broker, not per partition (Kafka: logLoadMs), never 0. */
    durationMs?: number;
  }>;
}

export interface CutInfo {
  brokerIds: number[];
  /** Wall clock (Date.now()) when the kill was sent. */
  atMs: number;
  /** Guest page-cache figures just before the cut (VM target only). */
  guestDirtyBeforeCut?: Record<number, { nrDirty: number; nrWriteback: number }>;
  /** The workload in each guest was still running at the cut (a guest that stopped early looks falsely durable). */
  liveAtCut?: Record<number, boolean>;
  /** Per broker on an NBD disk (VM target): what its volatile cache held at the cut and what the onCut policy kept. */
  diskAtCut?: Record<number, unknown>;
  /** move-leader: each partition's planned move (from, to, the leader epoch before). */
  leaderMoves?: Array<{ partition: number; from: number; to: number; leaderEpochBefore: number }>;
  /** partition: whom the victims were cut from at that moment, on which links (null: all traffic); harness/faults/partition.ts. */
  partition?: { victims: number[]; brokers: number[]; controller: boolean; clients: boolean; links: string[] | null; description: string };
  /** slow-link: what was applied to the victims' links (harness/faults/slow-link.ts). */
  slowLink?: { rateMbit?: number; lossPercent?: number };
  /** What the cut brokers' own logs said of failed log dirs up to the cut (RunningCluster.storageFailures). */
  storageFailures?: StorageFailure[];
  /** disk-full: per broker, its fault disk filled (the heal adds what it gave back). */
  filledDisks?: Record<number, FilledDisk>;
  /** corrupt-file, truncate-file, lost-write: the bytes changed in the victims' data files (a lost write's heal adds its changes). */
  fileFault?: FileFaultRecord;
}

/**
 * A cluster the faults can act on. Which of powerCut/processKill really deliver is declared by
 * the target's capabilities.faultActions (harness/targets/registry.ts); the others throw. The VM
 * target does both (powerCut = SIGKILL of the QEMU process: the guest's page cache dies too).
 */
export interface FaultableCluster extends RunningCluster {
  /** Only on targets whose capabilities.faultActions include cut-power (a fault kind's need decides, not a stub that throws). */
  powerCut?(brokerIds: number[]): Promise<CutInfo>;
  processKill(brokerIds: number[]): Promise<CutInfo>;
  /** Only on targets whose capabilities.faultActions include pause-broker-process: SIGSTOP of the brokers' processes (harness/faults/pause.ts). */
  pause?(brokerIds: number[]): Promise<CutInfo>;
  /** SIGCONT of brokers pause() stopped; a broker that is gone (killed, restarted since) is left alone. */
  resume?(brokerIds: number[]): Promise<void>;
  /**
   * Only on targets whose capabilities.faultActions include fill-disk: the root of broker `brokerId`'s
   * mounted host fault disk (its data dir lies below it), or null when this cluster runs on plain
   * directories (harness/faults/disk-full.ts fills that filesystem).
   */
  faultDiskRoot?(brokerId: number): string | null;
  /**
   * Only on targets whose capabilities.faultActions include change-data-files: stops the brokers
   * cleanly (SIGTERM: the system's own shutdown, flushes and checkpoints; SIGKILL after a grace)
   * and waits until they are gone; restart() brings them back.
   */
  stopCleanly?(brokerIds: number[]): Promise<CutInfo>;
  /**
   * Only on targets whose capabilities.faultActions include fail-disk-reads: arms read errors over
   * byte ranges of broker `brokerId`'s host fault disk ([] disarms them; harness/faults/file-faults/read-error.ts).
   */
  setReadErrors?(brokerId: number, ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): Promise<ReadErrorRange[]>;
  /** The armed ranges of the broker's disk and the reads that hit each. */
  readErrorHits?(brokerId: number): Promise<ReadErrorRange[]>;
  /** Brings the brokers back on the same disks / data dirs (a broker still running is stopped first); waits until they serve. */
  /**
   * A cluster that delivers this kind itself instead of through the kind's own hooks
   * (harness/faults/registry.ts): target external runs the scenario's command templates
   * (external/external-faults.ts). null or absent: the kind's own deliver and heal.
   */
  ownDelivery?(kind: FaultKind): OwnFaultDelivery | null;
  /** Brings the brokers back on the same disks / data dirs; waits until they serve. */
  restart(brokerIds: number[]): Promise<BrokerRecovery[]>;
  /** Waits until every partition of the topic has a leader again (after a fault). */
  waitForLeaders(topic: string, timeoutMs: number): Promise<void>;
  /** URL the host uses to reach a broker (for the checker's per-replica reads). */
  urlOf(brokerId: number): string;
}

/** A fault kind's delivery by the cluster itself (FaultableCluster.ownDelivery): the entry as written, its victims. */
export interface OwnFaultDelivery {
  deliver(brokerIds: number[], fault: Fault, ctx: { topic: string }): Promise<CutInfo>;
  /** Lasting kinds: undoes it; always runs, idempotent (as FaultKindSpec.heal). */
  heal?(brokerIds: number[], fault: Fault, ctx: { topic: string }): Promise<void>;
}

/** What a target kind's clusters can do (declared per kind in harness/targets/registry.ts); the runner reads these instead of the kind. */
export interface TargetCapabilities {
  /** What its clusters can do to a broker (see harness/faults/registry.ts for the kinds each enables). */
  faultActions: readonly FaultAction[];
  /**
   * Where vm.* sysctls of a cell go: `host` = the host's global sysctls (only with
   * --allow-host-sysctl, as root, restored afterwards); `guest` = inside each broker's VM.
   */
  sysctls: 'host' | 'guest';
  /** Leaders elected and replicas caught up after a fault's restart, at most this long. */
  recoveryTimeoutMs: number;
  /** Broker data dirs are host directories (host probes watch their device; segment files are counted). */
  dataOnHost: boolean;
  /** Probes come from inside each broker's guest (its page cache is the one a power cut loses). */
  guestProbes: boolean;
  /**
   * A fault trial also reads the broker figures during the load, as a fallback for a late read
   * at the fault's moment (harness/runner/broker-figures.ts). False where a read costs the
   * broker noticeable time: a TCG guest's broker spends 0.13-0.33 s of its event loop on one.
   */
  watchFigures: boolean;
  /** The scenario's `vm:` block applies to it (QEMU guests: accelerator, memory, disk). */
  vmOptions: boolean;
  /**
   * Where the lab's fault disk (the `vm.disk:` models: volatile cache, onCut, flush, EIO,
   * latency, write log) sits under its brokers: `guest` = each VM's virtio disk; `host` = the
   * host route (harness/disk/host-disk.ts: NBD -> qemu-storage-daemon FUSE -> loop -> ext4),
   * where only vm.disk, vm.diskMiB and vm.mountOptions apply; null = none.
   */
  faultDisk: 'guest' | 'host' | null;
  /**
   * With a fault disk: an upper bound of the MB/s a closed-loop load writes onto one broker's
   * fault disk, for `scenario check`'s estimate of a load's volume against vm.diskMiB
   * (harness/scenario/disk-volume-check.ts). A bound, not a measurement of a run.
   */
  closedLoopDiskMBps?: number;
  /** The client drivers that can talk to its brokers (`workload.driver`). */
  drivers: readonly DriverName[];
  /** Its brokers' data files as the file faults' named sets (harness/targets/data-files.ts); absent: no file fault can name them. */
  dataFiles?: DataFileSets;
  /** How its brokers name their log segment and index files in a data dir (counted where dataOnHost); absent: not counted (harness/targets/log-files.ts). */
  logFiles?: LogFileNames;
  /** Its brokers are processes of this host (a kill leaves the host's page cache intact; no accelerator applies). */
  hostProcesses: boolean;
  /** The disk model id a run of it that recorded none ran on (older VM runs: the file disk); absent: none. */
  defaultDiskModel?: string;
  /** The largest fetch its brokers answer, bytes (`scenario check` bounds workload.consumers' fetch.max.bytes); absent: unbounded. */
  fetchLimit?: number;
  /**
   * What a partition replica costs one of its brokers in open files (harness/targets/partition-limits.ts):
   * `scenario check` refuses a cluster this machine cannot hold, the runner raises the limit. Absent: not measured (its brokers are not processes here).
   */
  partitionCost?: PartitionCost;
  /**
   * Settings its brokers always run under, whatever the registry's default (kafka: sync fsync, its
   * flush is an fsync); the side bench commands resolve their settings over them.
   */
  baseSettings: Readonly<Record<string, SettingValue>>;
  /** Why it cannot run a cluster of that shape, beyond open files (target nats: one stream, one partition); null: it can. Absent: any shape. */
  refuseCluster?: (c: { brokers: number; partitions: number; replicationFactor: number }) => string | null;
  /** A scenario block only it reads, which a scenario on it must give (target external: `external:`, its cluster). */
  ownBlock?: { key: 'external'; expected: string };
  /**
   * Why a setting value a scenario sets cannot be honoured on this target (no equivalent), or
   * null: `scenario check` refuses such a cell with the reason. Absent: every setting applies.
   */
  refuseSetting?: (name: string, value: SettingValue) => string | null;
  /** Why it does not offer an action some fault kind needs, where that is worth saying (`scenario check` adds it to the refusal). */
  lacksFaultAction?: Partial<Record<FaultAction, string>>;
  /** Faults need the scenario to say how to deliver them (target external: external.kill and external.restart). */
  faultsNeedCommands?: boolean;
  /**
   * What of a fault entry this target cannot deliver with the scenario as written, beyond the
   * action it offers (target external: a command template the kind runs is missing); `scenario
   * check` names each under the entry. Absent: the offered action is enough.
   */
  refuseFault?: (fault: Fault, scenario: { external?: Partial<ExternalSpec> | undefined }) => FaultScenarioIssue[];
  /**
   * Why its clusters cannot start each node in its own network namespace (`cluster.network:
   * namespaces`, harness/net/lab-network.ts); absent: they can, and `scenario check` lets it through.
   */
  refuseLabNetwork?: string;
  /**
   * How its crash states (record-write-log) are checked: 'offline' (the default) reads each
   * state's files with the system's recovery on the host (Target.crashStateChecker, or durolab's
   * engine) and decodes the stored batches through the driver (ClientDriver.servedFromStored),
   * booting only a sample; 'boot' starts the target on every state's image and reads it back
   * through the driver, as a real restart would (a system with no offline recovery tool: nats).
   */
  crashStateCheck?: 'offline' | 'boot';
}

/**
 * Thrown by a target's start on crash-state images whose stores hold no copy of the topic (the
 * state predates its creation): the state serves nothing, as a missing data dir does offline.
 */
export class TopicNotOnImageError extends Error {
  override name = 'TopicNotOnImageError';
}
