// `durolab bench-crash-states`: how many crash states this machine checks per minute. Records
// one VM trial (a broker VM on a blklogwrites-recorded disk, a load, a power cut), then builds
// and checks N states from its write log on the host, and prints states/min with where the time
// goes (materialise, journal replay, extract, recover, check). The issue's bar: 300/min here.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { intFlag, parseChoice, parseCommandFlags, str } from '../../../engine/common/flags.ts';
import { renderTable } from '../../../engine/common/text-table.ts';
import { IO_MODES } from '../../../engine/settings/index.ts';
import { resolveSettings } from '../../scenario/settings.ts';
import { ON_CUT_POLICIES, type OnCutPolicy } from './plan.ts';
import { runCrashStatesTrial } from './vm-trial.ts';

const HELP = `usage: durolab bench-crash-states [options]

Records one trial on a broker VM (QEMU blklogwrites disk, power cut) and checks N crash states
built from its write log on the host; prints crash states checked per minute and the breakdown.

  --states N        crash states to build and check (default 300)
  --flush POLICY    the broker's flush policy: never, per-batch, messages:N, ms:T (default per-batch)
  --io MODE         buffered, direct or dsync (default buffered)
  --policy P        onCut policy: ${ON_CUT_POLICIES.join(', ')} (default drop-unflushed)
  --load-ms N       load before the power cut, ms (default 6000)
  --concurrency N   checks in flight (default 2: both cores)
  --boot N          states also booted in a VM and checked through the broker (default 0)
  --seed N          seed of the crash points (default 1)
  --keep DIR        keep the trial's files (write log, base image) in DIR
`;

const PASS_PER_MIN = 300;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags(
    'bench-crash-states',
    argv,
    {
      states: { type: 'string' },
      flush: { type: 'string' },
      io: { type: 'string' },
      policy: { type: 'string' },
      'load-ms': { type: 'string' },
      concurrency: { type: 'string' },
      boot: { type: 'string' },
      seed: { type: 'string' },
      keep: { type: 'string' },
    },
    HELP,
  );
  if (!parsed) return 0;
  const v = parsed.values;
  const states = intFlag('--states', str(v.states), 300, 1, 100_000);
  const policy: OnCutPolicy = v.policy === undefined ? 'drop-unflushed' : parseChoice('--policy', String(v.policy), ON_CUT_POLICIES);
  const loadMs = intFlag('--load-ms', str(v['load-ms']), 6000, 500, 600_000);
  const concurrency = intFlag('--concurrency', str(v.concurrency), 2, 1, 64);
  const boot = intFlag('--boot', str(v.boot), 0, 0, 20);
  const seed = intFlag('--seed', str(v.seed), 1, 0, 2 ** 31);
  const io = v.io === undefined ? 'buffered' : parseChoice('--io', String(v.io), IO_MODES);
  const settings = resolveSettings({ io, flush: str(v.flush) ?? 'per-batch', acks: '1' }, 1);
  const workDir = str(v.keep) ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-bench-crash-states-')));
  try {
    const trial = await runCrashStatesTrial({
      workDir,
      cluster: { brokers: 1, topic: 'bench', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
      settings,
      vm: { accelerator: 'auto', memoryMiB: 640, diskMiB: 256, mountOptions: '' },
      workload: { recordBytes: 1024, recordsPerBatch: 16, connections: 4 },
      cutAfterMs: loadMs,
      states,
      policy,
      seed,
      boot,
      concurrency,
      log: (l) => console.error(`[bench-crash-states] ${l}`),
    });
    const b = trial.breakdown;
    const r = trial.result;
    const per = (ms: number) => (b.states ? (ms / b.states).toFixed(1) : '-');
    console.log(
      `trial: io=${settings.io} flush=${String(settings.values.flush)}, ${trial.ackedAtCut} records acknowledged before the cut; write log ${r.writeLog.records} records ` +
        `(${r.writeLog.writes} writes, ${r.writeLog.flushes} flushes, ${r.writeLog.fua} FUA)`,
    );
    console.log(
      renderTable(
        ['phase', 'total ms', 'ms / state'],
        [
          ['materialise', String(b.materialiseMs), per(b.materialiseMs)],
          ['journal replay', String(b.journalMs), per(b.journalMs)],
          ['extract', String(b.extractMs), per(b.extractMs)],
          ['recover', String(b.recoverMs), per(b.recoverMs)],
          ['check', String(b.checkMs), per(b.checkMs)],
          ['wall (concurrency ' + concurrency + ')', String(b.wallMs), per(b.wallMs)],
        ],
      ),
    );
    console.log(
      `lost acknowledged over ${r.states} states: min ${r.lostMin}, median ${r.lostMedian}, p99 ${r.lostP99}, max ${r.lostMax}; fraction losing ${r.fractionLosing.toFixed(3)}` +
        (r.verification ? `; booted ${r.verification.booted}, agreed ${r.verification.agreed}` : ''),
    );
    const ok = b.statesPerMin >= PASS_PER_MIN && trial.disagreements.length === 0;
    console.log(`crash states checked per minute: ${b.statesPerMin} (${ok ? 'PASS' : 'FAIL'}: at least ${PASS_PER_MIN}/min${trial.disagreements.length ? `; disagreements: ${trial.disagreements.join('; ')}` : ''})`);
    return ok ? 0 : 1;
  } finally {
    if (v.keep === undefined) await fs.rm(workDir, { recursive: true, force: true });
  }
}
