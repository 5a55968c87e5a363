// What `durolab engine bench` measures: the rows (write path x flush policy x batch size),
// how much each run writes, and how a flush policy translates into the baseline's sync cadence.
import { formatFlushPolicy, parseFlushPolicy, type FlushPolicy, type IoMode } from '../storage/index.ts';

export interface BenchRowSpec {
  mode: IoMode;
  flush: FlushPolicy;
  batchBytes: number;
  /** Records per batch: ~1 KiB records, so messages:N flushes every ceil(N / recordsPerBatch) batches. */
  recordsPerBatch: number;
  /** The baseline syncs after every this many writes; 0 = never (dsync: every write is synchronous by itself). */
  syncEvery: number;
  /**
   * LogConfig.verifyBatches: CRC-32C and record framing checked on every append (the broker's
   * default, as Kafka's leader). false is the follower/trusted path, run beside the default in
   * the buffered never rows to show what validation costs; targets judge the default rows only.
   */
  verify: boolean;
}

const DEFAULT_BATCHES = [4096, 65536, 1048576] as const;

/** The write paths and the flush policies worth comparing in each (O_DSYNC needs no explicit flush). */
const DEFAULT_MODE_FLUSHES: ReadonlyArray<{ mode: IoMode; flushes: string[] }> = [
  { mode: 'buffered', flushes: ['never', 'per-batch', 'messages:32'] },
  { mode: 'direct', flushes: ['never', 'per-batch'] },
  { mode: 'dsync', flushes: ['never'] },
];

/** Rows that also run with verifyBatches=false: where nothing but the write hides the CRC's cost. */
const VERIFY_OFF_ROWS: ReadonlyArray<{ mode: IoMode; flush: string }> = [{ mode: 'buffered', flush: 'never' }];

export const RECORD_BYTES = 1024;

export function recordsPerBatch(batchBytes: number): number {
  return Math.max(1, Math.round(batchBytes / RECORD_BYTES));
}

/** How often the engine flushes, in batches, under a policy; the baseline syncs on the same cadence. */
export function syncEveryFor(flush: FlushPolicy, perBatch: number): number {
  switch (flush.kind) {
    case 'never':
      return 0;
    case 'per-batch':
      return 1;
    case 'messages':
      // The log flushes once unflushed records reach N.
      return Math.max(1, Math.ceil(flush.every / perBatch));
    case 'ms':
      throw new Error(`bench: flush policy ${formatFlushPolicy(flush)} has no fixed write count to mirror in the baseline; use never, per-batch or messages:N`);
  }
}

export interface PlanFilter {
  modes?: IoMode[];
  flushes?: string[];
  batches?: number[];
  /** Which verification settings to run: [true] (default rows only), [false] (only the verify-off variants), or both (the default). */
  verify?: boolean[];
}

export function planRows(filter: PlanFilter = {}): BenchRowSpec[] {
  const batches = filter.batches ?? [...DEFAULT_BATCHES];
  const flushFilter = filter.flushes?.map((f) => formatFlushPolicy(parseFlushPolicy(f)));
  const verify = filter.verify ?? [true, false];
  const rows: BenchRowSpec[] = [];
  for (const { mode, flushes } of DEFAULT_MODE_FLUSHES) {
    if (filter.modes && !filter.modes.includes(mode)) continue;
    // A flush policy asked for explicitly is run in every selected mode, even outside the default set.
    const list = flushFilter ?? flushes;
    for (const f of list) {
      const flush = parseFlushPolicy(f);
      const withOff = VERIFY_OFF_ROWS.some((r) => r.mode === mode && r.flush === formatFlushPolicy(flush));
      for (const v of [true, false]) {
        if (!verify.includes(v) || (!v && !withOff)) continue;
        for (const batchBytes of batches) {
          const perBatch = recordsPerBatch(batchBytes);
          rows.push({ mode, flush, batchBytes, recordsPerBatch: perBatch, syncEvery: syncEveryFor(flush, perBatch), verify: v });
        }
      }
    }
  }
  if (rows.length === 0) throw new Error('bench: the --modes / --flushes / --batches filters leave no row to run');
  return rows;
}

export interface Budget {
  /** Bytes each run writes at most. */
  volumeBytes: number;
  /** Seconds each run writes at most (slow sync rows stop here, with fewer bytes). */
  maxSeconds: number;
  reps: number;
  /**
   * Rows whose runs are short (buffered writes of 256 MiB take ~0.1 s) get more repetitions,
   * up to maxReps, until engine and baseline have run this many seconds in all: a 0.1 s window
   * on a machine shared with other work is too easily one neighbour's burst. 0: exactly reps.
   */
  minRowSeconds?: number;
  maxReps?: number;
}

export const FULL_BUDGET: Budget = { volumeBytes: 256 * 2 ** 20, maxSeconds: 1.5, reps: 6, minRowSeconds: 4, maxReps: 16 };
export const QUICK_BUDGET: Budget = { volumeBytes: 16 * 2 ** 20, maxSeconds: 0.25, reps: 1, minRowSeconds: 0, maxReps: 1 };

