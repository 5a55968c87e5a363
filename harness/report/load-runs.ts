// Reading run.json files: validating them against the results contract and finding which
// run a `durolab report [run]` argument names.

import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { CellResult, RunResult } from '../results/types.ts';
import { expectationState } from '../results/verdict.ts';
import { faultKindSchema } from '../faults/registry.ts';
import { DRIVERS, isDriverName } from '../drivers/registry.ts';
import { targetKindSchema } from '../targets/registry.ts';
import { TRIAL_DETAIL_KEYS, TRIAL_STEP_KEYS, type TrialStepKey } from '../results/trial-steps.ts';

const latency = z.object({
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
  p999: z.number(),
  p9999: z.number(),
  max: z.number(),
  mean: z.number().optional(),
  count: z.number(),
});

const ledger = z.object({
  acked: z.number(),
  ackedLost: z.number(),
  duplicates: z.number(),
  outOfOrder: z.number(),
  corrupt: z.number(),
  unackedPresent: z.number().optional(),
  lostOffsetsSample: z.array(z.number()).optional(),
  offsetChanged: z.number().optional(),
  inconsistentOffsets: z.number().optional(),
  replicasDisagree: z.number().optional(),
  replicasDiverged: z.number().optional(),
  hwWentBack: z.number().optional(),
  hwNotMeasured: z.number().optional(),
  ackedWithoutOffset: z.number().optional(),
  ackedWhileIsrShrunk: z.number().optional(),
  lostBeyondPrediction: z.number().optional(),
});

const timePoint = z.object({
  t: z.number(),
  recordsPerSec: z.number(),
  p99Us: z.number().nullable(),
  nrDirty: z.number().optional(),
  nrWriteback: z.number().optional(),
  writesPerSec: z.number().optional(),
  writeKBPerSec: z.number().optional(),
  flushesPerSec: z.number().optional(),
  wAwaitMs: z.number().optional(),
  fAwaitMs: z.number().optional(),
  aquSz: z.number().optional(),
  utilPct: z.number().optional(),
  readsPerSec: z.number().optional(),
  readKBPerSec: z.number().optional(),
  rAwaitMs: z.number().optional(),
  pgpginKBPerSec: z.number().optional(),
  majorFaultsPerSec: z.number().optional(),
  refaultsPerSec: z.number().optional(),
  pagesScannedPerSec: z.number().optional(),
  pagesStolenPerSec: z.number().optional(),
});

const fault = z.object({
  kind: faultKindSchema,
  targets: z.array(z.number()),
  atMs: z.number(),
  ackedBeforeCut: z.number(),
  recovery: z.array(
    z.object({
      broker: z.number(),
      durationMs: z.number().optional(),
      bytesTruncated: z.number().optional(),
      batchesTruncated: z.number().optional(),
      restartMs: z.number().optional(),
      cleanShutdown: z.boolean().optional(),
    }),
  ),
  lossWindowSec: z.number().optional(),
  guestDirtyBeforeCut: z.object({ nrDirty: z.number(), nrWriteback: z.number() }).optional(),
  when: z.string().optional(),
  seed: z.number().optional(),
  lastAckBeforeCutMs: z.number().nullable().optional(),
  liveAtCut: z.boolean().optional(),
  hwBeforeCut: z.number().optional(),
  hwAfterRecovery: z.number().optional(),
  hwNotMeasuredWhy: z.string().optional(),
  recoverMs: z.number().optional(),
  recoverySteps: z.object({ restartMs: z.number(), electionMs: z.number(), catchUpMs: z.number(), isrMs: z.number().nullable(), isrShort: z.string().optional() }).optional(),
  lossTimeline: z
    .object({ binMs: z.number(), bins: z.array(z.object({ t: z.number(), acked: z.number(), lost: z.number() })) })
    .optional(),
});

const counts = z.record(z.string(), z.number());

const steadiness = z.object({
  state: z.enum(['steady', 'ramping', 'unknown']),
  seconds: z.number(),
  firstRps: z.number(),
  lastRps: z.number(),
  change: z.number(),
  noise: z.number(),
  reason: z.string(),
});

const replicas = z.object({
  compared: z.number(),
  replicas: z.number(),
  agreeUpTo: z.number().optional(),
  firstDivergentOffset: z.number().optional(),
  diverged: z.number(),
  short: z.number(),
  partitions: z
    .array(
      z.object({
        partition: z.number(),
        leader: z.number(),
        upTo: z.number(),
        compared: z.number(),
        agreeUpTo: z.number().optional(),
        firstDivergentOffset: z.number().optional(),
        divergent: z.array(z.object({ brokerId: z.number(), offset: z.number(), why: z.string() })),
        short: z.array(z.object({ brokerId: z.number(), endOffset: z.number() })),
      }),
    )
    .optional(),
});

const stepMs = z.number().nonnegative();
const trialTiming = z.object({
  steps: z.object(Object.fromEntries(TRIAL_STEP_KEYS.map((k) => [k, stepMs.optional()])) as Record<TrialStepKey, z.ZodOptional<typeof stepMs>>).strict(),
  totalMs: stepMs,
  detail: z
    .object(Object.fromEntries(TRIAL_DETAIL_KEYS.map((k) => [k, stepMs.optional()])) as Record<(typeof TRIAL_DETAIL_KEYS)[number], z.ZodOptional<typeof stepMs>>)
    .optional(),
  notResumed: z.array(z.string()).optional(),
  loadAvg1: z.number(),
  cores: z.number(),
});

const cell = z.object({
  id: z.string(),
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  status: z.enum(['ok', 'failed', 'skipped', 'interrupted']),
  note: z.string().optional(),
  throughput: z.object({ recordsPerSec: z.number(), mbPerSec: z.number(), requestsPerSec: z.number() }).optional(),
  latencyUs: latency,
  correctedLatencyUs: latency.optional(),
  errors: counts,
  errorsAfterFault: counts.optional(),
  ledger,
  replicas: replicas.optional(),
  broker: z.object({
    // Older run.json files wrote 0 for a flush count no broker reported: read as written.
    flushes: z.number().optional(),
    flushTimeUs: z.object({ p50: z.number(), p99: z.number(), p999: z.number(), max: z.number() }).optional(),
    segments: z.number().optional(),
    indexFiles: z.number().optional(),
    bytes: z.number().optional(),
    rolls: z.number().optional(),
    notAnswered: z.array(z.number()).optional(),
    takenAt: z.enum(['after-load', 'before-fault', 'after-recovery']).optional(),
    readBeforeFaultMs: z.number().optional(),
    segmentsFrom: z.enum(['host-files', 'broker']).optional(),
    deviceFlushes: z.number().optional(),
    deviceFlushesScope: z.string().optional(),
  }),
  histograms: z.object({ latencyUs: z.string(), correctedLatencyUs: z.string().optional() }),
  timeseries: z.array(timePoint),
  unavailableTrials: z
    .array(
      z.object({
        index: z.number(),
        fault: z.string(),
        targets: z.array(z.number()),
        cutAtSec: z.number(),
        acked: z.number(),
        ackedBeforeCut: z.number(),
        recoveryTimeoutMs: z.number(),
        failed: z.string(),
        evidence: z.string(),
        replaces: z.number().optional(),
      }),
    )
    .optional(),
  trials: z
    .array(
      z.object({
        index: z.number(),
        replacedBy: z.number().optional(),
        replaces: z.number().optional(),
        ledger,
        fault: fault.optional(),
        suspect: z.boolean().optional(),
        note: z.string().optional(),
        cycleMs: z.number().optional(),
        timing: trialTiming.optional(),
        errors: counts.optional(),
        errorsAfterFault: counts.optional(),
        requests: z
          .object({ sent: z.number(), acked: z.number(), failed: z.number(), pending: z.number(), neverSent: z.number(), unconfirmed: z.number() })
          .optional(),
        replicas: replicas.optional(),
        isr: z.array(z.object({ atMs: z.number(), partition: z.number(), leader: z.number().nullable(), isr: z.array(z.number()).nullable() })).optional(),
        hw: z.array(z.object({ atMs: z.number(), partition: z.number(), hw: z.number().nullable() })).optional(),
        hwLongestStillMs: z.number().optional(),
        utilDuringFaultPct: z.number().optional(),
        evidence: z.object({ dir: z.string(), keptBecause: z.array(z.string()), incomplete: z.array(z.string()).optional() }).optional(),
        recount: z
          .union([
            z.object({
              acked: z.number(),
              served: z.number(),
              onDiskNotServed: z.number(),
              notServedOnBroker: z.record(z.string(), z.number()).optional(),
              onNoDisk: z.number(),
              checkServed: z.number(),
              corruptBatches: z.number(),
              tornTails: z.number(),
              images: z.number(),
            }),
            z.object({ problem: z.string() }),
          ])
          .optional(),
      }),
    )
    .optional(),
  accelerator: z.enum(['kvm', 'tcg']).optional(),
  repetitions: z
    .array(z.object({ trial: z.number().optional(), replaced: z.boolean().optional(), recordsPerSec: z.number(), mbPerSec: z.number(), p50Us: z.number(), p99Us: z.number(), p999Us: z.number(), steadiness: steadiness.optional() }))
    .optional(),
  steadiness: steadiness.optional(),
});

const runSchema = z.object({
  schemaVersion: z.literal(1),
  scenario: z.object({ name: z.string(), file: z.string(), question: z.string(), raw: z.unknown() }),
  runId: z.string(),
  status: z.enum(['complete', 'incomplete', 'failed']),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  gitCommit: z.string().nullable(),
  environment: z.object({
    hostname: z.string(),
    cpu: z.string(),
    cores: z.number(),
    memoryBytes: z.number(),
    kernel: z.string(),
    os: z.string(),
    node: z.string(),
    dataDir: z.string(),
    filesystem: z.string(),
    device: z.string(),
    crc32c: z.string().optional(),
    pwrite: z.string().optional(),
    memoryReturn: z.string().optional(),
    note: z.string().optional(),
  }),
  settings: z.record(z.string(), z.unknown()),
  target: targetKindSchema,
  diskModel: z.string().optional(),
  cells: z.array(cell),
  expectations: z.array(
    z.object({
      expression: z.string(),
      passed: z.boolean(),
      skipped: z.boolean().optional(),
      state: z.enum(['pass', 'fail', 'not-evaluated']).optional(),
      reason: z.string().optional(),
      detail: z.string(),
    }),
  ),
});

// Keeps the schema honest: it fails to typecheck if it drifts from harness/results/types.ts.
type Parsed = z.infer<typeof runSchema>;
const _schemaMatchesContract: [Parsed] extends [RunResult] ? ([RunResult] extends [Parsed] ? true : false) : false = true;
void _schemaMatchesContract;

/** Names used as path segments under reports/: one safe segment each. */
const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._@+-]+$/;

/** Checks an already-parsed object; `where` names it in errors. Extra fields are kept. */
export function asRunResult(value: unknown, where: string): RunResult {
  const parsed = runSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`)
      .join('; ');
    const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
    throw new Error(`${where} is not a durolab run result (harness/results/types.ts RunResult): ${issues}${more}`);
  }
  const run = value as RunResult;
  for (const [field, v] of [
    ['scenario.name', run.scenario.name],
    ['runId', run.runId],
  ] as const) {
    if (!SEGMENT.test(v)) throw new Error(`${where}: ${field} '${v}' cannot be used as a folder name (letters, digits, . _ - @ + only)`);
  }
  unmeasuredHwWentBack(run);
  return run;
}

/** The driver a cell's load and check went through: its `driver` setting (a driver axis, or the base settings), else workload.driver. */
function cellDriver(run: RunResult, cell: CellResult): unknown {
  const settings = run.settings as { driver?: unknown; workload?: { driver?: unknown } };
  return cell.params.driver ?? settings.driver ?? settings.workload?.driver;
}

const OLDER_HW_WHY = "this run.json was written before its driver read the leaders' HW just before the fault: its 0 was written, not measured";

/**
 * An older run.json's silent hwWentBack 0 on the kafka driver, read as not measured (absent,
 * counted in hwNotMeasured), with the HW before and after it that were as unmeasured. The kafka
 * driver's produce answers carry no HW, and until the leaders' HW was read just before the fault
 * its trials wrote hwWentBack, hwBeforeCut and hwAfterRecovery 0 for an HW never known. The file
 * says which trials these are: every fault trial checked since writes ledger.ackedWithoutOffset
 * (the same change) or hwNotMeasured, and an HW read before the fault is above 0. An expectation on
 * hwWentBack that passed on such 0s is NOT EVALUATED (a fail stays: some part broke its bound).
 */
function unmeasuredHwWentBack(run: RunResult): void {
  let reread = 0;
  for (const cell of run.cells) {
    // A driver that reads each leader's HW just before the fault (not from its produce answers) wrote 0s before it did.
    const driver = cellDriver(run, cell);
    if (!isDriverName(driver) || !DRIVERS[driver].capabilities.highWatermarks) continue;
    const trials = cell.trials ?? [];
    const silent = trials.filter((t) => t.fault && t.ledger.hwWentBack === 0 && t.ledger.ackedWithoutOffset === undefined && t.ledger.hwNotMeasured === undefined && !t.fault.hwBeforeCut);
    if (silent.length === 0) continue;
    for (const t of silent) {
      delete t.ledger.hwWentBack;
      t.ledger.hwNotMeasured = 1;
      delete t.fault!.hwBeforeCut;
      delete t.fault!.hwAfterRecovery;
      t.fault!.hwNotMeasuredWhy = OLDER_HW_WHY;
    }
    // The cell's ledger sums its trials (harness/runner/cell-figures.ts addLedgers): summed again over those that measured it.
    const measured = trials.map((t) => t.ledger.hwWentBack).filter((v): v is number => v !== undefined);
    if (measured.length) cell.ledger.hwWentBack = measured.reduce((a, v) => a + v, 0);
    else delete cell.ledger.hwWentBack;
    cell.ledger.hwNotMeasured = trials.reduce((a, t) => a + (t.ledger.hwNotMeasured ?? 0), 0);
    reread += silent.length;
  }
  if (reread === 0) return;
  const reason = `HW going back not measured in ${reread} trial(s) (${OLDER_HW_WHY})`;
  for (const e of run.expectations) {
    if (!/\bhwWentBack\b/.test(e.expression) || expectationState(e) !== 'pass') continue;
    e.detail = `${e.expression}: not evaluated (${reason}; as written: ${e.detail})`;
    e.reason = e.reason ? `${reason}; ${e.reason}` : reason;
    e.state = 'not-evaluated';
    e.passed = false;
  }
}

export async function readRunJson(file: string): Promise<RunResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`${file}: cannot read run result (${code ?? String(err)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return asRunResult(value, file);
}

export interface RunEntry {
  file: string;
  run?: RunResult;
  error?: string;
  /** For ordering when the run cannot be read: the file's modification time. */
  mtimeMs: number;
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isFile() ?? false;
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

function startedMs(e: RunEntry): number {
  const t = e.run ? Date.parse(e.run.startedAt) : NaN;
  return Number.isFinite(t) ? t : e.mtimeMs;
}

/** Newest first: by start time, then by run id (run ids are time-ordered), then by path. */
function newestFirst(a: RunEntry, b: RunEntry): number {
  return startedMs(b) - startedMs(a) || (b.run?.runId ?? '').localeCompare(a.run?.runId ?? '') || b.file.localeCompare(a.file);
}

/** Every results/<scenario>/<run id>/run.json (or only one scenario's), readable or not. */
export async function listRuns(resultsDir: string, scenario?: string): Promise<RunEntry[]> {
  const scenarioDirs = scenario ? [path.join(resultsDir, scenario)] : await subdirs(resultsDir);
  const entries: RunEntry[] = [];
  for (const sdir of scenarioDirs) {
    for (const rdir of await subdirs(sdir)) {
      const file = path.join(rdir, 'run.json');
      const st = await stat(file).catch(() => null);
      if (!st?.isFile()) continue;
      try {
        entries.push({ file, run: await readRunJson(file), mtimeMs: st.mtimeMs });
      } catch (err) {
        entries.push({ file, error: err instanceof Error ? err.message : String(err), mtimeMs: st.mtimeMs });
      }
    }
  }
  return entries.sort(newestFirst);
}

/**
 * The run.json a `durolab report [run]` argument names: a run.json path, a run directory,
 * a '<scenario>/<run id>' or '<scenario>' under resultsDir (its latest run), or nothing
 * (the latest run of any scenario).
 */
export async function resolveRunFile(arg: string | undefined, resultsDir: string): Promise<string> {
  if (arg) {
    const asPath = path.resolve(arg);
    if (await isFile(asPath)) return asPath;
    if (await isFile(path.join(asPath, 'run.json'))) return path.join(asPath, 'run.json');
    const underResults = path.join(resultsDir, arg);
    if (await isFile(path.join(underResults, 'run.json'))) return path.join(underResults, 'run.json');
    if (!arg.includes('/') && !arg.includes(path.sep) && (await isDir(underResults))) {
      return latest(await listRuns(resultsDir, arg), `${underResults} (scenario '${arg}')`);
    }
    throw new Error(
      `no run.json found for '${arg}': tried ${asPath}, ${path.join(asPath, 'run.json')}, ${path.join(underResults, 'run.json')}` +
        (arg.includes('/') ? '' : ` and the scenario folder ${underResults}`),
    );
  }
  return latest(await listRuns(resultsDir), resultsDir);
}

function latest(entries: RunEntry[], where: string): string {
  const readable = entries.filter((e) => e.run);
  if (readable.length > 0) return readable[0].file;
  if (entries.length > 0) throw new Error(`no readable run.json in ${where}: ${entries.map((e) => e.error).join('; ')}`);
  throw new Error(`no run.json found in ${where} (expected <scenario>/<run id>/run.json)`);
}
