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
  recovery: Array<{ broker: number; durationMs: number; bytesTruncated: number; batchesTruncated: number }>;
  lossWindowSec?: number; // how long before the cut the oldest lost record was acked
  guestDirtyBeforeCut?: { nrDirty: number; nrWriteback: number };
}

export interface Trial {
  index: number;
  ledger: LedgerSummary;
  fault?: FaultOutcome;
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
