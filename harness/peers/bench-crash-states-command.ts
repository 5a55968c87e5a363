// `durolab bench-crash-states`: how many crash states this machine checks per minute, a row per
// system, each one crash-states trial (trial.ts) through the target and driver the target
// registry's row gives the system for this bench (harness/targets/side-bench.ts). durolab: a
// broker VM (target vm, http driver) on a blklogwrites-recorded disk, its states checked by
// durolab's recovery. kafka: one Apache Kafka node (target kafka, kafka driver) on the host
// route's recorded fault disk, its states checked by Kafka's own recovery (the recovery-check
// JVM). nats: one nats-server (target nats, nats driver) on the host route's recorded fault disk,
// every state booted (no offline recovery tool: boot-check.ts). Each row: states/min and where
// the time goes (materialise, journal replay, extract, recover, check; a booted state's boot is
// its recover, its read-back its check), against the row's bar (durolab's 300/min, Kafka's
// 200/min, NATS's 25/min).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { intFlag, parseChoice, parseCommandFlags, str } from '../../engine/common/flags.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { IO_MODES } from '../../engine/settings/index.ts';
import { loadDriver } from '../drivers/registry.ts';
import { benchSettings, benchSystemNames, parseBenchSystems } from '../targets/side-bench.ts';
import { ON_CUT_POLICIES, type OnCutPolicy } from '../disk/crash-states/plan.ts';
import { runCrashStatesTrial, type CrashStatesTrial } from '../runner/crash-states/trial.ts';

const HELP = `usage: durolab bench-crash-states [options]

Records one power-cut trial per system and checks N crash states built from its write log on
the host; prints crash states checked per minute and the breakdown, a row per system:
  durolab  a broker VM (QEMU blklogwrites disk), states checked by durolab's recovery (bar 300/min)
  kafka    an Apache Kafka node on the host route's fault disk (NBD write log), states checked
           by Kafka's own recovery, UnifiedLog in one JVM (bar 200/min; writes buffered, fsync)
  nats     a nats-server on the host route's fault disk (NBD write log), every state booted:
           nats-server starts on the state's image, driver nats reads the stream back (no
           offline recovery tool; bar 25/min; acks all, its only mode: --states 20 is plenty)

  --systems LIST    some of ${benchSystemNames('crash-states')} (default all)
  --states N        crash states to build and check (default 300)
  --flush POLICY    the broker's flush policy: never, per-batch, messages:N, ms:T (default per-batch)
  --io MODE         durolab's write path: buffered, direct or dsync (default buffered; a system
                    with no such mode runs without it, and says so; so does acks=1 on nats)
  --policy P        onCut policy: ${ON_CUT_POLICIES.join(', ')} (default drop-unflushed)
  --load-ms N       load before the power cut, ms (default 6000)
  --concurrency N   checks in flight (default 2: both cores)
  --boot N          states also booted (durolab: in a VM; kafka: a node on the image) and read back
                    (default 0; nats boots every state anyway)
  --seed N          seed of the crash points (default 1)
  --keep DIR        keep the trials' files (write logs, base images) in DIR
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags(
    'bench-crash-states',
    argv,
    {
      systems: { type: 'string' },
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
  const systems = parseBenchSystems('crash-states', str(v.systems));
  const flush = str(v.flush) ?? 'per-batch';
  const log = (l: string) => console.error(`[bench-crash-states] ${l}`);
  // Refused before any trial (a bad --flush once went on to build the VM image).
  const settingsOf = systems.map((s) => benchSettings(s, { io, flush, acks: '1' }, { whereItApplies: ['io', 'acks'], log }));
  const workDir = str(v.keep) ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-bench-crash-states-')));
  const cluster = { brokers: 1, topic: 'bench', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 };
  const common = { cutAfterMs: loadMs, states, policy, seed, boot, concurrency, log };
  const rows: string[][] = [];
  let ok = true;
  try {
    for (const [i, s] of systems.entries()) {
      const { system, bench } = s;
      const settings = settingsOf[i]!;
      const how = bench.benches['crash-states']!;
      const trial: CrashStatesTrial = await runCrashStatesTrial({
        ...common,
        target: await bench.load({ log, ...(how.disk ? { disk: how.disk } : {}) }),
        driver: await loadDriver(bench.driver),
        workDir: path.join(workDir, system),
        cluster,
        settings,
        workload: { recordBytes: 1024, recordsPerBatch: 16, connections: 4, pipelining: 1, ...(how.producer ? { producer: how.producer } : {}) },
      });
      const b = trial.breakdown;
      const r = trial.result;
      const per = (ms: number) => (b.states ? (ms / b.states).toFixed(1) : '-');
      // A booted state's journal is replayed by its mount, inside the boot (the recover column): no phase of its own.
      const apart = (ms: number) => (s.spec.capabilities.crashStateCheck === 'boot' ? 'in boot' : per(ms));
      console.log(
        `${system} trial: ${bench.describe(settings)} flush=${String(settings.values.flush)}, ${trial.ackedAtCut} records acknowledged before the cut; ` +
          `write log ${r.writeLog.records} records (${r.writeLog.writes} writes, ${r.writeLog.flushes} flushes, ${r.writeLog.fua} FUA); lost acknowledged over ${r.states} states: ` +
          `min ${r.lostMin}, median ${r.lostMedian}, p99 ${r.lostP99}, max ${r.lostMax}; fraction losing ${r.fractionLosing.toFixed(3)}` +
          (r.verification ? `; booted ${r.verification.booted}, agreed ${r.verification.agreed}` : ''),
      );
      const pass = b.statesPerMin >= how.perMinBar && trial.disagreements.length === 0;
      ok &&= pass;
      rows.push([
        `${system} (${how.checkedBy})`,
        String(b.states),
        per(b.materialiseMs),
        apart(b.journalMs),
        apart(b.extractMs),
        per(b.recoverMs),
        per(b.checkMs),
        per(b.wallMs),
        String(b.statesPerMin),
        `${pass ? 'PASS' : 'FAIL'} (>= ${how.perMinBar}/min${trial.disagreements.length ? `; disagreements: ${trial.disagreements.join('; ')}` : ''})`,
      ]);
    }
    console.log(`ms per state by phase (wall: ${concurrency} check(s) in flight)`);
    console.log(renderTable(['system', 'states', 'materialise', 'journal replay', 'extract', 'recover', 'check', 'wall', 'states/min', 'verdict'], rows));
    return ok ? 0 : 1;
  } finally {
    if (v.keep === undefined) await fs.rm(workDir, { recursive: true, force: true });
  }
}
