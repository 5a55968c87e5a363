// Shape of results/<scenario>/<run id>/run.json: the contract between the runner
// (harness/run), the checker, and the report (harness/report).
import type { FaultKind, TargetKind } from '../model/kinds.ts';

export type Params = Record<string, string | number | boolean>;

import type { Environment } from '../../engine/common/environment.ts';
import type { LatencyBrief, LatencySummary } from '../../engine/common/latency.ts';

import type { TrialTiming } from './trial-steps.ts';
import type { ConsumerGroupResult } from './consumer-groups.ts';

export type { Environment, LatencyBrief, LatencySummary, TrialTiming };

export interface LedgerSummary {
  acked: number;
  ackedLost: number;
  duplicates: number;
  outOfOrder: number;
  corrupt: number;
  /** Records present that were never acknowledged (allowed; counted for power cuts). */
  unackedPresent?: number;
  /** First few lost offsets, for the report. */
  lostOffsetsSample?: number[];
  /** Acknowledged records served, but not at the offset acknowledged (must be 0). */
  offsetChanged?: number;
  /** Offsets served with two different records, or acknowledged offsets now holding another record (Jepsen's inconsistent offsets; must be 0). */
  inconsistentOffsets?: number;
  /** Partitions whose replicas' log hashes differ below the lowest replica HW (must be 0). */
  replicasDisagree?: number;
  /** Partitions where some replica's stored batches differ from the leader's below its HW, compared on the host from bytes (must be 0; absent with RF 1). */
  replicasDiverged?: number;
  /**
   * Offsets by which a leader's HW after recovery is below the highest HW known before the fault
   * (a produce answer's, or the leaders' reading just before it), summed over partitions (0 =
   * never went back). Absent where it was not measured (hwNotMeasured); a cell's sums its trials that measured it.
   */
  hwWentBack?: number;
  /** Fault trials whose HW before the fault is not known for every partition (FaultOutcome.hwNotMeasuredWhy): hwWentBack leaves them out. */
  hwNotMeasured?: number;
  /**
   * Records acknowledged (acks >= 1) whose delivery report carried no offset (librdkafka's report
   * of a retry the broker found a duplicate of): they count in `acked`, must survive, and are
   * found by their identity; no offset check applies to them.
   */
  ackedWithoutOffset?: number;
  /** acks=all: records acknowledged while their partition's ISR held fewer replicas than the replication factor (harness/probes/isr-sampler.ts); absent: not sampled. */
  ackedWhileIsrShrunk?: number;
  /** Fault trials: acknowledged records lost that the settings' loss window says were safe (must be 0 on an honest disk; FaultOutcome.predicted has the rule). */
  lostBeyondPrediction?: number;
}

/**
 * Replica agreement from bytes (harness/checker/replica-bytes.ts): each replica's own stored
 * batches below the leader's HW, read through the client driver and compared on the host with
 * the leader's, batch by batch (offset, size, stored CRC, CRC of the bytes). Runs with RF > 1 only.
 */
export interface ReplicaAgreement {
  /** Batches compared (each replica's against the leader's), summed over partitions (and trials, for a cell). */
  compared: number;
  /** Replicas compared with their leader, summed likewise. */
  replicas: number;
  /**
   * Every replica's stored batches agree below this offset (the lowest over the partitions and
   * trials where some follower's bytes were read); absent when none was (not measured; older
   * run.json files wrote 0 with replicas 0).
   */
  agreeUpTo?: number;
  /** The lowest offset at which a replica's batch differs from the leader's; absent when none does. */
  firstDivergentOffset?: number;
  /** Partitions (partition-trials, for a cell) where some replica differs. */
  diverged: number;
  /** Replicas whose stored log ends below the leader's HW (behind, not different). */
  short: number;
  /** Trials only: per partition. */
  partitions?: Array<{
    partition: number;
    leader: number;
    upTo: number;
    compared: number;
    /** Absent where none of the partition's followers was read. */
    agreeUpTo?: number;
    firstDivergentOffset?: number;
    divergent: Array<{ brokerId: number; offset: number; why: string }>;
    short: Array<{ brokerId: number; endOffset: number }>;
  }>;
}

/** One sample per second: load and probe figures on one time axis (t = seconds since cell load start). */
export interface TimePoint {
  t: number;
  recordsPerSec: number;
  p99Us: number | null;
  nrDirty?: number; // pages
  nrWriteback?: number; // pages
  writesPerSec?: number; // w/s
  writeKBPerSec?: number; // wkB/s
  flushesPerSec?: number; // f/s
  wAwaitMs?: number;
  fAwaitMs?: number;
  aquSz?: number;
  utilPct?: number;
  /** The read side: the device's reads (r/s, rkB/s, r_await) and the page cache's misses. */
  readsPerSec?: number;
  readKBPerSec?: number;
  rAwaitMs?: number;
  /** /proc/vmstat per second: KiB paged in from block devices, major faults, file refaults, pages scanned and reclaimed. */
  pgpginKBPerSec?: number;
  majorFaultsPerSec?: number;
  refaultsPerSec?: number;
  pagesScannedPerSec?: number;
  pagesStolenPerSec?: number;
  /** The smallest ISR of any partition in that second (harness/probes/isr-sampler.ts isrSizePerSecond); absent: not sampled. */
  isrSize?: number;
  /** Records the high watermarks advanced in that second, summed over partitions (harness/probes/hw-figures.ts); absent: not sampled (a driver that reads no HW, RF 1). */
  hwAdvancedPerSec?: number;
}

export interface BrokerSummary {
  /** The brokers' own flush count and the busiest replica's flush times: absent where no broker reports them (Kafka, NATS), never 0 for unknown; `deviceFlushes` counts the device's. */
  flushes?: number;
  flushTimeUs?: LatencyBrief;
  /** Segment files: counted on this host (segmentsFrom host-files) or as the brokers count them (broker); absent where neither. */
  segments?: number;
  indexFiles?: number;
  /**
   * Bytes the partition leaders appended, as the brokers count them, else the .log files' bytes
   * counted on this host; absent when no broker answered and no file was counted (older run.json
   * files wrote 0 for that).
   */
  bytes?: number;
  rolls?: number;
  /** Brokers that gave no figures when they were read (down, or no answer): the figures above are the others' only. Absent: every broker answered. */
  notAnswered?: number[];
  /** When the figures were read: after the load, or (fault trials) during the load before the fault was delivered, since a restarted broker's counters start at 0 (after-recovery only when no read answered in time). */
  takenAt?: 'after-load' | 'before-fault' | 'after-recovery';
  /** before-fault: how long before the fault the read that gave them was sent (they are at most this old; the device's flushes are counted up to its answer). */
  readBeforeFaultMs?: number;
  /** Where `segments` comes from: .log files counted in the data dirs on this host, or the brokers' own count (a VM's data dir is in its guest). */
  segmentsFrom?: 'host-files' | 'broker';
  /** Flushes the block device completed over the same window (/proc/diskstats), beside the brokers' own `flushes`; absent without a device counter. */
  deviceFlushes?: number;
  /** Whose device `deviceFlushes` counts (the host disk under the data dirs holds every broker, and anything else on it; a VM's guest disk holds one broker). */
  deviceFlushesScope?: string;
}

/** What a trial's settings allow its fault to lose, computed from the ledger before the check (harness/checker/loss-prediction.ts). */
export interface LossPrediction {
  /** The rule that applied, in one sentence. */
  rule: string;
  /** Acknowledged records the settings allow the fault to lose. */
  atRisk: number;
  /** Lost records the settings say were safe (0 on an honest disk and engine). */
  beyond: number;
  /** The first few of them: partition, acknowledged offset, ms before the fault it was acknowledged. */
  beyondSample: Array<{ partition: number; offset: number; ackedBeforeFaultMs: number }>;
}

export interface FaultOutcome {
  kind: FaultKind;
  targets: number[];
  /** The loss window the settings predict, beside the measured loss (absent in older run.json files). */
  predicted?: LossPrediction;
  /** move-leader: the planned moves made (no broker stopped). */
  leaderMoves?: Array<{ partition: number; from: number; to: number; leaderEpochBefore: number }>;
  atMs: number; // since load start
  ackedBeforeCut: number;
  recovery: Array<{
    broker: number;
    /** The broker's own log recovery: time (sum over its partitions) and what it truncated; absent where the broker reports none (NATS), never 0 for unknown. */
    durationMs?: number;
    bytesTruncated?: number;
    batchesTruncated?: number;
    /** Restart (process spawn or VM boot) until the broker served again. */
    restartMs?: number;
    /** Every partition of the broker reported a clean shutdown (impossible after a kill: a sign the fault missed). */
    cleanShutdown?: boolean;
  }>;
  lossWindowSec?: number; // how long before the cut the oldest lost record was acked
  /** Summed over the cut guests. */
  guestDirtyBeforeCut?: { nrDirty: number; nrWriteback: number };
  /** How the moment was chosen, as written (`between 3-9 s`, `at 4 s`, `after 5000 acked`). */
  when?: string;
  /** Seed of the draw for `between` (the trial can be replayed with it). */
  seed?: number;
  /** Milliseconds from the last acknowledgement before the cut to the cut (null: none). */
  lastAckBeforeCutMs?: number | null;
  /** Every cut guest's workload was still running at the cut (VM target). */
  liveAtCut?: boolean;
  /** Highest HW known before the fault (produce answers, or the leaders' reading just before it), and the leader's HW once recovered; summed over partitions. */
  hwBeforeCut?: number;
  hwAfterRecovery?: number;
  /** Why the HW before the fault is not known (hwBeforeCut and ledger.hwWentBack are then absent). */
  hwNotMeasuredWhy?: string;
  /** From the fault to every partition led again and replicas caught up. */
  recoverMs?: number;
  /** The same recovery stage by stage, and the ISR made whole after it (harness/faults/recover.ts). */
  recoverySteps?: RecoverySteps;
  /** Acknowledged and lost records by acknowledgement time relative to the cut (t = bin start in ms, negative = before). */
  lossTimeline?: { binMs: number; bins: Array<{ t: number; acked: number; lost: number }> };
  /** Per broker id on an NBD disk: the volatile cache at the cut and what the onCut policy kept (harness/disk/volatile-cache.ts CutOutcome). */
  diskAtCut?: Record<string, unknown>;
  /**
   * Storage failures the brokers' own logs named up to the cut (a log dir offline after ENOSPC, EIO), first per broker and cause;
   * after a kind the load runs through (disk-full, pause), up to the load's end, read before any restart.
   */
  storageFailures?: StorageFailure[];
  /** disk-full: per broker id, its fault disk as the filler left it and as the heal gave it back (harness/faults/disk-full.ts). */
  filledDisks?: Record<string, FilledDisk>;
  /** corrupt-file, truncate-file, lost-write: what the fault changed in the victims' data files (harness/faults/file-faults/). */
  fileFault?: FileFaultRecord;
}

/** One change a file fault made to one data file, exactly: read back, the bytes at [offset, offset + length) hash to newSha256. */
export interface FileChange {
  broker: number;
  /** The file, relative to the broker's data dir. */
  file: string;
  offset: number;
  length: number;
  sizeBefore: number;
  sizeAfter: number;
  /** SHA-256 (hex) of the bytes there before and after the change (a truncation: the bytes removed, and of nothing). */
  oldSha256: string;
  newSha256: string;
  how: 'bit-flip' | 'truncate' | 'lost-write';
}

/** What a file fault did on its victims (harness/faults/file-faults/file-fault.ts). */
export interface FileFaultRecord {
  /** `files:` as written (a named set or a glob). */
  files: string;
  phase: 'running' | 'stopped';
  /** phase stopped: how the victims were stopped before their files changed. */
  stop?: 'clean' | 'kill';
  /** The seed of the chunks' offsets and bits. */
  seed: number;
  changes: FileChange[];
  /** Per victim, the files the selector matched at the fault's moment (relative paths). */
  matched: Record<string, string[]>;
  /** Victims on which the fault changed nothing (no file matched, or only empty ones): on them it did not fire. */
  unchanged: number[];
  /** lost-write: when the chunks were saved (ms since the epoch); the changes are the heal's. */
  savedAtMs?: number;
  /** read-error: the disk ranges that fail their reads, per victim and file. */
  readErrors?: ReadErrorRecord[];
  /** read-error: per victim, the reads that hit its failing ranges (read after the check, or at the heal). */
  readHits?: Record<string, number>;
  /** lost-write: why its saved chunks were released without being put back (Ctrl-C). */
  released?: string;
  /**
   * Each change read back from the victim's file after recovery and the check: still as the fault
   * left it, rewritten by the system (refetched, repaired), cut off or gone (its recovery truncated
   * or deleted the file). What the system did about the bad bytes, beside what the check found.
   */
  afterCheck?: Array<{ broker: number; file: string; offset: number; state: FileChangeState }>;
}

/** One range of a victim's disk that fails its reads (fault kind read-error): the file's bytes at fileOffset, the disk's [deviceFrom, deviceTo). */
export interface ReadErrorRecord {
  broker: number;
  file: string;
  fileOffset: number;
  deviceFrom: number;
  deviceTo: number;
  mode: 'eio' | 'wrong-bytes';
}

/** A changed range after recovery: as the fault left it, rewritten, cut off (the file ends before it), or the file gone. */
export type FileChangeState = 'as-changed' | 'rewritten' | 'cut-off' | 'gone';

/** One broker's fault disk filled by fault disk-full: a filler file on the disk's root, outside the broker's data dir. */
export interface FilledDisk {
  /** The filler's path (on the mounted disk, beside the broker's data dir). */
  filler: string;
  /**
   * The filesystem's size, and its free bytes for the brokers' uid (statfs) before and after the fill; after it, what ext4 keeps
   * for its own metadata still counts (2 % of the disk, at most 16 MiB: harness/faults/disk-full.ts) though no write can take it.
   */
  fsBytes: number;
  freeBeforeBytes: number;
  freeAfterBytes: number;
  fillerBytes: number;
  /** When the fill began (ms since the epoch). */
  atMs: number;
  /** fallocate (then zeros for what it left), or zeros only (fallocate refused or missing). */
  method: 'fallocate' | 'zeros';
  /** Why fallocate was not used, when it was not. */
  fallocateRefused?: string;
  fillMs: number;
  /** The heal: when it removed the filler, whether the file is gone, the free space then. */
  healed?: { atMs: number; fillerGone: boolean; freeBytes: number };
}

/** A broker's log line saying a log dir failed (durolab: KAFKA_STORAGE_ERROR ...; Kafka: LogDirFailureChannel), read by its target. */
export interface StorageFailure {
  brokerId: number;
  /** ENOSPC, EIO, ... as the line names it (Kafka: from its exception text); null when it names none. */
  errno: string | null;
  /** The file or log dir the line names. */
  file: string;
  /** When it happened (ms since the epoch), from the line; null when the line has no time. */
  atMs: number | null;
  /** The line itself (its first 300 characters). */
  line: string;
}

/** One entry of a trial's fault schedule: when it started and healed, in ms from the load's start. */
export interface ScheduleEntryOutcome {
  /** Its index in the scenario's faults: list. */
  entry: number;
  kind: FaultKind;
  /** Its `when` as written. */
  when: string;
  /** Seed of a `between` draw. */
  seed?: number;
  /** Lasting kinds: the duration asked. */
  durationMs?: number;
  /** Broker ids hit (absent: it never started). */
  targets?: number[];
  /** Delivered at (null: it never started; note says why). */
  startMs: number | null;
  /** Lasting kinds: healed at (null: not healed, or never started). */
  healMs?: number | null;
  /** What it did, where its kind says more than its victims (a partition: whom they were cut from, on which links; a slow link: its rate and loss). */
  detail?: string;
  note?: string;
}

/** A fault's recovery, stage by stage (ms, each from the end of the one before). */
export interface RecoverySteps {
  /** The hit brokers restarted (a VM booted again, the disk mounted, the broker serving). */
  restartMs: number;
  /** Then every partition led by a live broker (the controller's election). */
  electionMs: number;
  /** Then every replica at its leader's log end and the leader's HW there (followers truncated and fetched). */
  catchUpMs: number;
  /** Then every replica in the ISR again; null when the ISR was still short at the wait's end (isrShort says how). */
  isrMs: number | null;
  isrShort?: string;
}

/** A trial's acknowledged records as a second reader finds them on the brokers' disks (harness/recount/recount.ts). */
export interface RecountFigures {
  acked: number;
  /** In a final image: what the recovered cluster kept and served. */
  served: number;
  /** In some broker's cut image but in no final image: thrown away by the system's own recovery or leader election. */
  onDiskNotServed: number;
  /** Of those, how many each broker's cut image held (a record on several counts for each): where the discarded copies were. */
  notServedOnBroker?: Record<string, number>;
  /** In no cut image: never made durable (lost with a page cache or a volatile disk cache). */
  onNoDisk: number;
  /** The check's served count (acked - ackedLost); differing from `served` is a finding. */
  checkServed: number;
  /** Batches whose CRC or framing failed on the images. */
  corruptBatches: number;
  /** Segments ending in a batch cut short (torn tails; a recovery truncates them), over all images read. */
  tornTails: number;
  /** Images read: cut and final, over the brokers. */
  images: number;
}

/** A fault trial whose cluster did not come back (CellResult.unavailableTrials): what it had acknowledged, what failed, where its evidence is. */
export interface UnavailableTrial {
  /** The attempt's number in its cell, from 0 (as Trial.index). */
  index: number;
  /** The fault kind and the brokers it hit. */
  fault: string;
  targets: number[];
  /** Seconds into the load when the fault was delivered. */
  cutAtSec: number;
  /** Records acknowledged in the whole trial, and before the fault: what nobody could read back. */
  acked: number;
  ackedBeforeCut: number;
  /** How long the lab waited for the cluster (the target's recovery timeout). */
  recoveryTimeoutMs: number;
  /** What did not come back, as the recovery said it. */
  failed: string;
  /** The trial's directory: ledger.ndjson, check.json, broker logs, disk images. */
  evidence: string;
  /** An extra attempt in place of this earlier one, which could not be judged (as Trial.replaces). */
  replaces?: number;
}

export interface Trial {
  /**
   * The attempt's number in its cell, in the order they ran, from 0; its evidence (ledger,
   * check.json, broker logs) is in the cell's rep-<index + 1> directory (results/store.ts trialDir).
   */
  index: number;
  /**
   * Set on an attempt that could not be judged (its fault did not fire, it is suspect) and was
   * run again within workload.extraTrials: the index of the attempt run in its place. Its
   * figures stay here; a violation in it still fails an expectation, its doubt does not make one
   * NOT EVALUATED (harness/scenario/evaluate-expectations.ts).
   */
  replacedBy?: number;
  /** Set on an attempt run in place of one that could not be judged: that attempt's index. */
  replaces?: number;
  ledger: LedgerSummary;
  /**
   * The trial's fault: its schedule's main entry (the first that restarts brokers, else the
   * first that started; harness/runner/fault-schedule.ts) with the recovery and check after the
   * whole schedule. Absent when no entry started.
   */
  fault?: FaultOutcome;
  /** Every entry of the scenario's fault schedule as this trial ran it, in order (absent in run.json files written before schedules). */
  schedule?: ScheduleEntryOutcome[];
  /** Something makes this trial's figures doubtful (a guest workload that had stopped, no acks just before the cut, a fault that never fired). */
  suspect?: boolean;
  note?: string;
  /** The trial's disk images kept for a re-count (harness/runner/trial-evidence.ts): its directory under the cell's, why, and copies that could not be made. */
  evidence?: { dir: string; keptBecause: string[]; incomplete?: string[] };
  /** Each partition's leader and ISR as they changed during the load (ms from the load's start; isr null: the reading failed), where sampled (RF > 1). */
  isr?: Array<{ atMs: number; partition: number; leader: number | null; isr: number[] | null }>;
  /** Each partition's high watermark as it changed during the load, sampled with the ISR (ms from the load's start; hw null: the reading failed); absent where the driver reads no HW. */
  hw?: Array<{ atMs: number; partition: number; hw: number | null }>;
  /** The longest some partition's HW stood still while the load ran (harness/probes/hw-figures.ts hwLongestStillMs); absent: not sampled. */
  hwLongestStillMs?: number;
  /** The producers' worst per-second p99 while the schedule's first lasting entry was in force, to a second after its heal (harness/runner/fault-p99.ts); absent: no such entry, or no answers then. */
  p99DuringFaultUs?: number;
  /** The device's mean utilisation (iostat %util of the disk under the data dirs) over the same seconds (harness/runner/fault-p99.ts); absent: not sampled. */
  utilDuringFaultPct?: number;
  /** Every acknowledged record classified from the kept disk images alone (`durolab recount`, harness/recount). */
  recount?: RecountFigures | { problem: string };
  /** Wall time of the whole trial: cluster start, load, fault, recovery, check, stop. */
  cycleMs?: number;
  /** The same wall time step by step (image staging, boot, broker start, ..., stop), summing to cycleMs. */
  timing?: TrialTiming;
  /** Produce failures by name before the fault (the whole load without one). */
  errors?: Record<string, number>;
  /** Produce failures from the moment the fault was delivered (refusals and resets of the cut, mostly). */
  errorsAfterFault?: Record<string, number>;
  /**
   * The ledger's batches by state: pending = written to a connected socket, no answer (an
   * unknown outcome); neverSent = its connection never connected, so it cannot be in any log.
   */
  requests?: { sent: number; acked: number; failed: number; pending: number; neverSent: number; unconfirmed: number };
  /** Replica agreement from bytes, after the load (after recovery in fault trials); RF > 1 only. */
  replicas?: ReplicaAgreement;
}

/** One repetition's own figures (the cell's throughput is their median; the spread is the noise band). */
export interface RepetitionFigures {
  /** The attempt (Trial.index) these figures are of (absent in run.json files written before attempts were kept). */
  trial?: number;
  /** The attempt was replaced (Trial.replacedBy): its figures are kept but not in the cell's medians and bands. */
  replaced?: boolean;
  recordsPerSec: number;
  mbPerSec: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  /** Performance cells: whether this repetition's window was a steady state (steady-state.ts). */
  steadiness?: Steadiness;
}

/** Whether a measured window was a steady state or a ramp (harness/results/steady-state.ts). */
export interface Steadiness {
  state: 'steady' | 'ramping' | 'unknown';
  /** Measured seconds judged. */
  seconds: number;
  /** Mean records/s of the first and of the last third of the window. */
  firstRps: number;
  lastRps: number;
  /** (last - first) / the window's median records/s. */
  change: number;
  /** Median absolute second-to-second change / the window's median. */
  noise: number;
  reason: string;
}

/** A cell's produce rate: acknowledged records, payload MB (10^6) and produce requests per second. */
export interface CellThroughput {
  recordsPerSec: number;
  mbPerSec: number;
  requestsPerSec: number;
}

export interface CellResult {
  id: string;
  params: Params;
  /** On a target axis (matrix.target): the target kind this cell ran on, when not the run's. */
  target?: string;
  status: 'ok' | 'failed' | 'skipped' | 'interrupted';
  note?: string;
  /**
   * Medians over the repetitions that finished their load (not replaced); absent when none did (a
   * skipped cell, one interrupted before any load finished): not measured, never 0. Older run.json
   * files always carry it (0 for a cell that did not run).
   */
  throughput?: CellThroughput;
  latencyUs: LatencySummary;
  /** Coordinated-omission corrected latency (fixed-rate workloads only). */
  correctedLatencyUs?: LatencySummary;
  /** Produce failures by name; in a fault scenario, those before the fault. */
  errors: Record<string, number>;
  /** Fault scenarios: failures from the moment the fault was delivered, summed over trials. */
  errorsAfterFault?: Record<string, number>;
  ledger: LedgerSummary;
  /** Replica agreement from bytes over the cell's trials (RF > 1 only). */
  replicas?: ReplicaAgreement;
  broker: BrokerSummary;
  /** HdrHistogram compressed base64 (hdr-histogram-js encodeIntoCompressedBase64). */
  histograms: { latencyUs: string; correctedLatencyUs?: string };
  timeseries: TimePoint[];
  trials?: Trial[];
  /**
   * Fault trials whose cluster did not come back after the fault within the recovery timeout: a
   * finding (the system was unavailable), not checked, so their acknowledged records are neither
   * lost nor kept in `ledger` and an expectation on a ledger figure is NOT EVALUATED for them.
   */
  unavailableTrials?: UnavailableTrial[];
  accelerator?: 'kvm' | 'tcg';
  /** Per-repetition figures, in order (absent in run.json files written before they were kept). */
  repetitions?: RepetitionFigures[];
  /** Performance cells: whether the measured windows were a steady state (ramping when any repetition's was). */
  steadiness?: Steadiness;
  /** Crash-state exploration (fault kind crash-states): the loss distribution over the states built from the cell's write log(s). */
  crashStates?: CrashStatesResult;
  /** Each broker process after the load (host processes; first repetition): open descriptors and resident memory. */
  brokerProcesses?: Array<{ pid: number; fds: number; rssBytes: number }>;
  /** The preload setting: the log written before the load (first repetition; harness/workload/preload.ts). */
  preload?: { bytes: number; records: number; seconds: number; mbPerSec: number; writeBackSeconds?: number };
  /** workload.consumers: each consumer group's figures, per repetition (harness/workload/consumers.ts). */
  consumers?: Array<{ repetition: number; groups: ConsumerGroupResult[] }>;
  /** Jepsen's poll checks over every group and repetition (must be 0; neverAcked is allowed and counted). */
  consumerChecks?: { nonMonotonic: number; skipped: number; neverAcked: number; corrupt: number };
}

/** One crash state built from a trial's write log and checked on the host (harness/disk/crash-states). */
export interface CrashStateRow {
  state: number;
  /** Records of the write log completed at the crash point. */
  position: number;
  kind: 'spread' | 'before-flush' | 'after-flush' | 'end';
  /** Host clock µs of the crash point (acknowledgements up to it must be served). */
  timeUs: number;
  /** The point in ms since the load started. */
  atMs: number;
  /** Host clock ms: acknowledgements before it had to be served (the point, less the recorder's timestamp uncertainty). */
  ackCutMs: number;
  /** FLUSHes completed before the point. */
  epoch: number;
  durableWrites: number;
  unflushedWrites: number;
  /** Unflushed writes the onCut policy kept (in whole or, torn, in part). */
  keptUnflushedWrites: number;
  deltaBytes: number;
  /** Records acknowledged before the point. */
  ackedBefore: number;
  lostAcked: number;
  corrupt: number;
  inconsistentOffsets: number;
  duplicates: number;
  outOfOrder: number;
  offsetChanged: number;
  /** Records the recovered log serves. */
  served: number;
  /** What the recovery of this state reports truncating, summed over its partitions; absent where it reports none (a booted state; Kafka gives no batch count). */
  recoveryBytesTruncated?: number;
  recoveryBatchesTruncated?: number;
  /** The broker's data dir did not exist yet in this state. */
  noDataDir: boolean;
  /** Set for states also booted in a VM: what the real broker served, and whether it agrees with the host check. */
  booted?: { lostAcked: number; served: number; agrees: boolean; detail?: string };
}

export interface CrashStatesResult {
  states: number;
  lostMin: number;
  lostMedian: number;
  lostP99: number;
  lostMax: number;
  /** States losing at least one acknowledged record, over all states. */
  fractionLosing: number;
  /** Host clock µs of the earliest crash point that loses data (null: none loses). */
  earliestLosingPointUs: number | null;
  earliestLosingAtMs: number | null;
  /** States serving a corrupt batch after recovery. */
  corruptStates: number;
  policy: string;
  seed: number;
  writeLog: { records: number; writes: number; flushes: number; fua: number };
  /** FLUSH completion times (ms since the load started; thinned to at most 2000) for the timeline. */
  flushMarksMs: number[];
  /** States booted in a VM and checked through the real broker. */
  verification?: { booted: number; agreed: number };
  perState: CrashStateRow[];
}

/** PASS, FAIL, or NOT EVALUATED: the evidence the expectation needs was not there. */
export type ExpectationState = 'pass' | 'fail' | 'not-evaluated';

export interface ExpectationResult {
  expression: string;
  /** state === 'pass' (kept for readers of older run.json files). */
  passed: boolean;
  /** Every cell it speaks of was skipped on purpose (e.g. host sysctls without opt-in). */
  skipped?: boolean;
  /** Absent in run.json files written before verdict states existed: read it with expectationState(). */
  state?: ExpectationState;
  /** Why it is not evaluated (or, for a pass or fail, which parts were left out and why). */
  reason?: string;
  detail: string;
}


export interface RunResult {
  schemaVersion: 1;
  scenario: { name: string; file: string; question: string; raw: unknown };
  runId: string;
  status: 'complete' | 'incomplete' | 'failed';
  startedAt: string;
  endedAt: string | null;
  gitCommit: string | null;
  environment: Environment;
  settings: Record<string, unknown>;
  target: TargetKind;
  /** What the system under test is, from the target (target: kafka: engine, kafkaVersion, java). */
  targetInfo?: Record<string, string>;
  /** A target axis (matrix.target): what each further target is, by kind. */
  targetInfos?: Record<string, Record<string, string>>;
  /** VM target: the id of the disk model in harness/results/disk-models.ts (what a power cut loses). */
  diskModel?: string;
  cells: CellResult[];
  expectations: ExpectationResult[];
}
