// Shape of results/<scenario>/<run id>/run.json: the contract between the runner
// (harness/run), the checker, and the report (harness/report).

export type Params = Record<string, string | number | boolean>;

export interface LatencySummaryUs {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
  count: number;
}

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
  /** Acknowledged records found at another offset than the one acknowledged (must be 0). */
  offsetChanged?: number;
  /** Partitions whose replicas' log hashes differ below the lowest replica HW (must be 0). */
  replicasDisagree?: number;
  /** Offsets by which a leader's HW after recovery is below the highest HW a produce answer reported before the fault, summed over partitions (0 = never went back). */
  hwWentBack?: number;
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
}

export interface BrokerSummary {
  flushes: number;
  flushTimeUs: { p50: number; p99: number; p999: number; max: number };
  segments: number;
  indexFiles?: number;
  bytes: number;
  rolls?: number;
}

export interface FaultOutcome {
  kind: 'power-cut' | 'process-kill';
  targets: number[];
  atMs: number; // since load start
  ackedBeforeCut: number;
  recovery: Array<{
    broker: number;
    /** Engine recovery time (sum over the broker's partitions). */
    durationMs: number;
    bytesTruncated: number;
    batchesTruncated: number;
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
  /** Highest HW reported in produce answers before the fault, and the leader's HW once recovered (partition 0 first; summed over partitions). */
  hwBeforeCut?: number;
  hwAfterRecovery?: number;
  /** From the fault to every partition led again and replicas caught up. */
  recoverMs?: number;
  /** Acknowledged and lost records by acknowledgement time relative to the cut (t = bin start in ms, negative = before). */
  lossTimeline?: { binMs: number; bins: Array<{ t: number; acked: number; lost: number }> };
}

export interface Trial {
  index: number;
  ledger: LedgerSummary;
  fault?: FaultOutcome;
  /** Something makes this trial's figures doubtful (a guest workload that had stopped, no acks just before the cut, a fault that never fired). */
  suspect?: boolean;
  note?: string;
  /** Wall time of the whole trial: cluster start, load, fault, recovery, check, stop. */
  cycleMs?: number;
}

export interface CellResult {
  id: string;
  params: Params;
  status: 'ok' | 'failed' | 'skipped' | 'interrupted';
  note?: string;
  throughput: { recordsPerSec: number; mbPerSec: number; requestsPerSec: number };
  latencyUs: LatencySummaryUs;
  /** Coordinated-omission corrected latency (fixed-rate workloads only). */
  correctedLatencyUs?: LatencySummaryUs;
  errors: Record<string, number>;
  ledger: LedgerSummary;
  broker: BrokerSummary;
  /** HdrHistogram compressed base64 (hdr-histogram-js encodeIntoCompressedBase64). */
  histograms: { latencyUs: string; correctedLatencyUs?: string };
  timeseries: TimePoint[];
  trials?: Trial[];
  accelerator?: 'kvm' | 'tcg';
}

export interface ExpectationResult {
  expression: string;
  passed: boolean;
  /** Every cell it speaks of was skipped on purpose (e.g. host sysctls without opt-in): not a failure. */
  skipped?: boolean;
  detail: string;
}

export interface Environment {
  hostname: string;
  cpu: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  os: string;
  node: string;
  dataDir: string;
  filesystem: string;
  device: string;
  /** Which CRC-32C implementation ran (engine/records/crc.ts: the ISA-L addon or the @node-rs/crc32 fallback and why). */
  crc32c?: string;
  note?: string;
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
  target: 'process' | 'vm';
  cells: CellResult[];
  expectations: ExpectationResult[];
}
