// `durolab engine bench`: the engine's write paths against the physical baseline (fio, or a
// raw fs.writeSync loop without fio), as a table, a JSON file and PASS/FAIL per target.
import path from 'node:path';
import { IO_MODES, parseSettingText } from '../settings/index.ts';
import { FULL_BUDGET, QUICK_BUDGET, type Budget } from './bench-plan.ts';
import { writeJsonAtomic } from '../common/atomic-file.ts';
import { runBench, type BaselineChoice, type BenchResult } from './bench-runner.ts';
import { formatCrcBench, runCrcBench } from './bench-crc.ts';
import { orderEffects, rowLabel, verifyCosts } from './bench-goals.ts';
import { checkOutFile, parseByteSize, parseChoice, parseFlags, parseIntFlag, parseList, parseNumberFlag, str } from '../common/flags.ts';
import { renderTable } from '../common/text-table.ts';
import { fmtBatch, fmtMBps } from './text-format.ts';

export const DEFAULT_OUT = path.join('results', 'engine', 'latest.json');
export const DEFAULT_CRC_OUT = path.join('results', 'engine', 'crc-latest.json');
/** --crc: repetitions and seconds per repetition (quick: 1 x 0.05 s). */
const CRC_BUDGET = { reps: 5, seconds: 0.25 };
const CRC_QUICK_BUDGET = { reps: 1, seconds: 0.05 };

const HELP = `usage: durolab engine bench [--quick] [--dir D] [--mb N] [options]
       durolab engine bench --crc [--quick] [--reps N] [--seconds S] [--json] [--out FILE]

Appends to a fresh partition in every write path and flush policy at batch sizes 4 KiB,
64 KiB and 1 MiB (one RecordBatch of exactly that size per append, ~1 KiB records), and in
the same run measures the physical baseline the same way: fio appending to a fresh file
with bs = the batch size and the same sync mode (--direct=1, --fdatasync=N, --sync=dsync),
or a raw fs.writeSync loop with the same open flags and sync cadence when fio is missing.
Each row is the median of the repetitions, engine and baseline in alternating order. The
ratio is order-balanced: over blocks of two repetitions (engine first, then baseline first;
each pair of runs back to back, so load from other work on the machine hits both alike), the
geometric mean of the two ratios, and the median of those. A run right after the other
side's run can be slower (here: direct never 1 MiB 1.06 engine-first, 0.75 baseline-first);
within a block that cancels. With an odd --reps the last repetition has no partner and only
counts when it is the only one.

Rows: buffered x {never, per-batch, messages:32}, direct x {never, per-batch},
dsync x {never}, each x {4096, 65536, 1048576} bytes, with batch verification on (CRC-32C
and record framing, the broker's default); buffered never also with verification off
(verifyBatches=false, the follower/trusted path), to show what validation costs.

  --quick              16 MiB / 0.25 s per run, 1 repetition (< 1 min; the smoke test)
  --dir D              make the fresh bench directory inside D (default: the OS temp dir);
                       it must be a disk filesystem (ext4, xfs) for the numbers and io=direct
  --mb N               at most N MiB per run (default 256; quick 16)
  --seconds S          at most S seconds per run (default 1.5; quick 0.25)
  --reps N             repetitions per row (default 6, and rows with short runs up to 16
                       until engine + baseline have run 4 s in all; quick 1)
  --modes LIST         only these write paths (buffered,direct,dsync)
  --flushes LIST       only these flush policies (never,per-batch,messages:N)
  --batches LIST       only these batch sizes (e.g. 4096,64KiB,1MiB)
  --verify LIST        on, off or on,off (default): rows with batch verification on, and
                       the verify-off variants (buffered never only)
  --baseline B         auto | fio | writeSync (default auto: fio when installed)
  --out FILE           JSON output (default results/engine/latest.json, written atomically)
  --json               print the JSON instead of the table
  --crc                instead of the write paths: CRC-32C GB/s of every implementation that
                       runs here (native: the addon's own AVX-512 + crc32 kernel over ISA-L;
                       isa-l: ISA-L alone; @node-rs/crc32) side by side at 4 KiB,
                       64 KiB, 1 MiB and 16 MiB buffers, the median of --reps (default 5)
                       runs of --seconds (default 0.25) each; goal >= 20 GB/s at 64 KiB and
                       larger. JSON to --out (default results/engine/crc-latest.json)
  -h, --help           this text

Every result records which CRC-32C implementation the engine ran (environment.crc32c;
DUROLAB_CRC32C=isa-l runs ISA-L alone, =node-rs the @node-rs/crc32 fallback, to compare) and which
write path its appends took (environment.pwrite: pwrite(2) from the N-API addon, or
fs.writeSync; DUROLAB_PWRITE=fs forces the latter; and whether leader appends check, stamp
and write in one native call, engine/storage/native-append.ts).

Targets (PASS/FAIL printed at the end, judged on the verify-on rows): ratio >= 0.85 at
64 KiB and 1 MiB in every mode, >= 0.7 at 4 KiB buffered, and per-batch fdatasync append
p50 within 1.25x of the baseline's write+fdatasync p50 (with fio: write clat p50 + fdatasync
p50, a sum of two p50s). fdatasync on this project's virtual disk costs ~80-250 µs, far
less than real media: absolute numbers are for this machine only.

The check's bound (info, not a target; checkBound in the JSON): for buffered never rows with
the check on, a C loop in the crc32c addon writes the row's batch as often as a run does,
once with the append's check (CRC-32C, record framing, header fields) and offset stamp before
every pwrite(2) and once without, alternating over as many runs as the row had. Their ratio is
the most a one-thread append that checks each batch can reach against a bare write loop on
this machine; the engine's ratio to the baseline is printed beside it.
`;

function verifyCell(x: { verify?: boolean }): string {
  return x.verify === false ? 'off' : 'on';
}

function formatBenchTable(r: BenchResult): string {
  const header = ['mode', 'flush', 'batch', 'verify', 'baseline', 'engine MB/s', 'base MB/s', 'ratio', 'p50 µs', 'p99 µs', 'p99.9 µs', 'base p50 µs', 'base op p50 µs', 'base fdatasync p50 µs', 'flushes eng/base'];
  const rows = r.rows.map((x) =>
    x.error
      ? [x.mode, x.flush, fmtBatch(x.batchBytes), verifyCell(x), 'error', '-', '-', '-', '-', '-', '-', '-', '-', '-', '-']
      : [
          x.mode,
          x.flush,
          fmtBatch(x.batchBytes),
          verifyCell(x),
          x.baseline,
          fmtMBps(x.engineMBps),
          fmtMBps(x.baselineMBps),
          x.ratio.toFixed(2),
          String(x.p50Us),
          String(x.p99Us),
          String(x.p999Us),
          String(x.baselineP50Us),
          String(x.baselineOpP50Us),
          x.baselineSyncP50Us === null ? '-' : String(x.baselineSyncP50Us),
          x.syncEvery === 0 ? '-' : `${x.engineFlushes}/${x.baselineSyncs}`,
        ],
  );
  const out = [renderTable(header, rows)];
  for (const x of r.rows) {
    if (x.error) out.push(`error in ${rowLabel(x)}: ${x.error}`);
    for (const n of x.notes) out.push(`note on ${rowLabel(x)}: ${n}`);
  }
  return out.join('\n');
}

function formatGoals(r: BenchResult): string {
  const out: string[] = [];
  for (const t of r.targets) {
    const verdict = t.pass === null ? 'N/A ' : t.pass ? 'PASS' : 'FAIL';
    out.push(`${verdict}  ${t.description}`);
    for (const c of t.checks) out.push(`        ${c.pass ? 'ok  ' : 'FAIL'} ${c.row}: ${c.value} (limit ${c.limit})`);
    for (const e of t.errors) out.push(`        FAIL ${e}`);
  }
  const costs = verifyCosts(r.rows);
  if (costs.length > 0) {
    out.push('info  what batch verification (CRC-32C + record framing) costs, verify on vs off (not a target):');
    for (const c of costs) out.push(`        ${c.row}: ratio ${c.ratioOn.toFixed(2)} vs ${c.ratioOff.toFixed(2)}, append p50 ${c.p50OnUs} vs ${c.p50OffUs} µs`);
  }
  const bounds = r.rows.filter((x) => !x.error && x.checkBound);
  if (bounds.length > 0) {
    out.push("info  the check's bound (not a target): a C loop of the append's check + pwrite(2) against the same loop without the check, no engine around it");
    out.push('      (crc32c.c checkedWriteLoop): the most a one-thread append that checks each batch can reach against a bare write loop on this machine');
    for (const x of bounds) {
      const b = x.checkBound!;
      out.push(
        `        ${rowLabel(x)}: bound ${b.ratio.toFixed(3)} (checked ${fmtMBps(b.checkedMBps)}, bare ${fmtMBps(b.bareMBps)} MB/s, ${b.runs} run(s) each); the engine's ratio to ${x.baseline}: ${x.ratio.toFixed(3)}`,
      );
    }
  }
  const orders = orderEffects(r.rows);
  if (orders.length > 0) {
    out.push('info  rows whose ratio depends on which side ran first (> 10 % apart; the ratio above balances both orders):');
    for (const o of orders) out.push(`        ${o.row}: engine first ${o.engineFirst}, baseline first ${o.baselineFirst}, balanced ${o.balanced}`);
  }
  return out.join('\n');
}

export function formatBench(r: BenchResult, out: string): string {
  const e = r.environment;
  return [
    `engine bench${r.options.quick ? ' (quick)' : ''}: ${r.rows.length} rows, ${r.options.reps}${r.options.maxReps > r.options.reps ? `-${r.options.maxReps} (until ${r.options.minRowSeconds} s measured)` : ''} repetition(s), <= ${r.options.volumeMiB} MiB / ${r.options.maxSecondsPerRun} s per run, ${r.durationSeconds} s` +
      (r.interrupted ? ` — INTERRUPTED (${r.interrupted}), partial results` : ''),
    `host: kernel ${e.kernel}; ${e.cores} cores; fs ${e.fsType} (${e.filesystem}); device ${e.device}; memory: ${e.memoryReturn ?? 'not recorded'}; baseline ${r.options.fio ? r.options.fio : 'fs.writeSync (fio not used)'}`,
    `crc32c: ${e.crc32c ?? 'not recorded'}; write: ${e.pwrite ?? 'not recorded'}; load average ${r.loadAverage ? `${r.loadAverage.start.join(' ')} -> ${r.loadAverage.end.join(' ')}` : 'not recorded'} (2 cores shared with other work: re-measure doubtful rows)`,
    `note: ${r.note}`,
    'MB = 10^6 bytes. Latencies: engine around Log.append (flush included); base p50 = the baseline write alone (fio clat); base op p50 = write + fdatasync when it syncs every write',
    '(with fio the sum of two p50s, write clat p50 + fdatasync p50, which fio reports apart; not a p50 of per-operation sums). verify off = verifyBatches=false, not judged by the targets.',
    '',
    formatBenchTable(r),
    '',
    formatGoals(r),
    '',
    `wrote ${out}`,
  ].join('\n');
}

export interface BenchFlags {
  quick: boolean;
  budget: Budget;
  dir?: string;
  out: string;
  baseline: BaselineChoice;
  filter: { modes?: (typeof IO_MODES)[number][]; flushes?: string[]; batches?: number[]; verify?: boolean[] };
  json: boolean;
  /** --crc: the CRC-32C bench instead of the write paths. */
  crc: { reps: number; seconds: number } | null;
}

export function parseBenchFlags(argv: string[]): BenchFlags | 'help' {
  const { values } = parseFlags('engine bench', argv, {
    quick: { type: 'boolean', default: false },
    dir: { type: 'string' },
    mb: { type: 'string' },
    seconds: { type: 'string' },
    reps: { type: 'string' },
    modes: { type: 'string' },
    flushes: { type: 'string' },
    batches: { type: 'string' },
    verify: { type: 'string' },
    baseline: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
    crc: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) return 'help';
  const quick = values.quick === true;
  if (values.crc === true) {
    const foreign = (['dir', 'mb', 'modes', 'flushes', 'batches', 'verify', 'baseline'] as const).filter((k) => values[k] !== undefined);
    if (foreign.length > 0) throw new Error(`engine bench --crc measures CRC-32C in memory: ${foreign.map((k) => `--${k}`).join(', ')} does not apply to it`);
  }
  const base = quick ? QUICK_BUDGET : FULL_BUDGET;
  const mb = str(values.mb);
  const seconds = str(values.seconds);
  const reps = str(values.reps);
  const modes = str(values.modes);
  const flushes = str(values.flushes);
  const batches = str(values.batches);
  const verify = str(values.verify);
  const baseline = str(values.baseline);
  return {
    quick,
    budget: {
      volumeBytes: mb === undefined ? base.volumeBytes : parseIntFlag('--mb', mb, 1, 64 * 1024) * 2 ** 20,
      maxSeconds: seconds === undefined ? base.maxSeconds : parseNumberFlag('--seconds', seconds, 0.01, 600),
      reps: reps === undefined ? base.reps : parseIntFlag('--reps', reps, 1, 99),
      // --reps N asks for exactly N repetitions per row.
      minRowSeconds: reps === undefined ? base.minRowSeconds : 0,
      maxReps: reps === undefined ? base.maxReps : undefined,
    },
    dir: str(values.dir),
    out: checkOutFile('--out', str(values.out) ?? (values.crc === true ? DEFAULT_CRC_OUT : DEFAULT_OUT)),
    baseline: baseline === undefined ? 'auto' : parseChoice('--baseline', baseline, ['auto', 'fio', 'writeSync'] as const),
    filter: {
      modes: modes === undefined ? undefined : parseList('--modes', modes, (s) => parseChoice('--modes', s, IO_MODES)),
      flushes: flushes === undefined ? undefined : parseList('--flushes', flushes, (s) => String(parseSettingText('flush', s, `--flushes ${JSON.stringify(s)}`))),
      batches: batches === undefined ? undefined : parseList('--batches', batches, (s) => parseByteSize('--batches', s, 4096, 1048576)),
      verify: verify === undefined ? undefined : [...new Set(parseList('--verify', verify, (s) => parseChoice('--verify', s, ['on', 'off'] as const) === 'on'))],
    },
    json: values.json === true,
    crc:
      values.crc === true
        ? {
            reps: reps === undefined ? (quick ? CRC_QUICK_BUDGET : CRC_BUDGET).reps : parseIntFlag('--reps', reps, 1, 99),
            seconds: seconds === undefined ? (quick ? CRC_QUICK_BUDGET : CRC_BUDGET).seconds : parseNumberFlag('--seconds', seconds, 0.01, 600),
          }
        : null,
  };
}

export async function main(argv: string[]): Promise<number> {
  const flags = parseBenchFlags(argv);
  if (flags === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (flags.crc) {
    const crc = runCrcBench(flags.crc);
    writeJsonAtomic(flags.out, crc);
    console.log(flags.json ? JSON.stringify(crc, null, 2) : `${formatCrcBench(crc)}

wrote ${flags.out}`);
    return 0;
  }
  const ac = new AbortController();
  // Ctrl-C stops after the current run (a synchronous engine run lasts at most --seconds), kills fio, keeps finished rows.
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) return;
    process.stderr.write(`\n${sig}: stopping after the current run; finished rows are kept in ${flags.out}\n`);
    ac.abort(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result: BenchResult;
  try {
    result = await runBench({
      budget: flags.budget,
      quick: flags.quick,
      dir: flags.dir,
      out: flags.out,
      baseline: flags.baseline,
      filter: flags.filter,
      signal: ac.signal,
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  console.log(flags.json ? JSON.stringify(result, null, 2) : formatBench(result, flags.out));
  if (result.interrupted) return 130;
  return result.rows.some((r) => r.error) ? 1 : 0;
}
