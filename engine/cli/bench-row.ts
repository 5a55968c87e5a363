// One row of `durolab engine bench`: per repetition the engine side and the baseline side,
// and the medians over the repetitions that the table, the JSON and the goals read.
import type { IoMode } from '../storage/index.ts';
import type { CheckBound } from './bench-bound.ts';
import type { SideKind, SideResult } from './bench-side.ts';

export interface BenchRep {
  order: 'engine-first' | 'baseline-first';
  engine: SideResult;
  baseline: SideResult;
}

export interface BenchRow {
  mode: IoMode;
  flush: string;
  batchBytes: number;
  recordsPerBatch: number;
  /** The baseline syncs every this many writes (0: never). */
  syncEvery: number;
  /** The engine checked each batch's CRC-32C and record framing (verifyBatches, the default); false rows are not judged by the targets. */
  verify: boolean;
  baseline: SideKind;
  /** Medians over the repetitions; MB = 10^6 bytes. */
  engineMBps: number;
  baselineMBps: number;
  /**
   * Engine MB/s / baseline MB/s within each repetition (its two runs are back to back, so a
   * neighbour's load hits both alike), balanced over both run orders (orderBalancedRatio); with
   * one repetition engineMBps / baselineMBps.
   */
  ratio: number;
  /** Engine append latency (around Log.append, flush included), µs. */
  p50Us: number;
  p99Us: number;
  p999Us: number;
  /** Baseline write latency p50 (fio clat: without the fdatasync), µs. */
  baselineP50Us: number;
  /** Baseline fdatasync latency p50, µs, when it synced. */
  baselineSyncP50Us: number | null;
  /**
   * Baseline write + fdatasync per operation p50 (the per-batch comparison), µs. From fio it is
   * the sum of two p50s (write clat p50 + fdatasync lat p50: fio reports them apart), not the
   * p50 of per-operation sums; from the writeSync loop it is the p50 of the sums.
   */
  baselineOpP50Us: number;
  engineFlushes: number;
  engineFlushP50Us: number | null;
  baselineSyncs: number;
  reps: BenchRep[];
  /** Buffered never rows with the check on: what a C loop of check + pwrite reaches against the same loop without the check (bench-bound.ts). */
  checkBound?: CheckBound;
  /** Why a baseline other than fio was used, or why a run failed. */
  notes: string[];
  error?: string;
}
