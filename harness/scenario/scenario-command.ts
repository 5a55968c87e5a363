// `durolab scenario list | check | show`: read and validate scenario files without running
// anything, e.g. in CI or while writing a new file.

import { parseFlags, requireExistingDir } from '../../engine/common/flags.ts';
import { formatFlushPolicy } from '../../engine/settings/index.ts';
import { ScenarioError } from './errors.ts';
import { cellSettings, defaultScenariosDir, listScenarios, loadScenario } from './loader.ts';
import { SETTINGS } from './settings.ts';
import type { Scenario } from '../model/scenario.ts';
import { parseOverrideFlags } from './validate.ts';
import { formatDurationMs, formatSize } from '../model/units.ts';

const HELP = `usage: durolab scenario <list | check [name|file ...] | show <name|file>> [options]

  list            the scenarios in the scenarios directory and the question each answers
  check           validate scenario files (all of them when none is named); exit 1 on any problem
  show            the expanded matrix (cell ids, labels, settings), workload, faults, expectations

options:
  --dir D         scenarios directory (default: ./scenarios, else the one next to durolab)
  --duration S    apply the DURATION override while checking/showing
  --repeat N      apply the REPEAT override while checking/showing
  -h, --help      this text`;

function describe(s: Scenario): string {
  const w = s.workload;
  const lines = [
    `${s.name} (${s.file}), target ${s.target}${s.requiresRoot ? ', requires root' : ''}`,
    `question: ${s.question}`,
    `cluster: ${s.cluster.brokers} broker(s), topic ${s.cluster.topic}, ${s.cluster.partitions} partition(s), RF ${s.cluster.replicationFactor}, min ISR ${s.cluster.minInsyncReplicas}`,
    `workload: ${formatSize(w.recordBytes)} records x ${w.recordsPerBatch}/batch, ${w.connections} connection(s) x ${w.pipelining} in flight, ` +
      `${w.rate === null ? 'closed loop' : `${w.rate} batches/s`}, ${w.warmupSec} s warm-up + ${w.durationSec} s, ${w.repetitions} repetition(s), ` +
      `up to ${w.extraTrials} extra attempt(s) per cell in place of trials that cannot be judged`,
  ];
  if (s.vm) lines.push(`vm: accelerator ${s.vm.accelerator}, ${s.vm.memoryMiB} MiB, disk ${s.vm.diskMiB} MiB, mount options '${s.vm.mountOptions}'`);
  lines.push(`cells (${s.matrix.length}):`);
  for (const cell of s.matrix) {
    const r = cellSettings(s, cell);
    const sys = Object.entries(r.sysctls).map(([k, v]) => `${k}=${SETTINGS[k].display(v)}`);
    const flush = formatFlushPolicy(r.flush);
    lines.push(`  ${cell.id}  [${cell.label}]`);
    lines.push(
      `      io=${r.io} flush=${flush} sync=${r.sync} acks=${r.acks} segment=${formatSize(r.segmentBytes)}/${formatDurationMs(r.segmentMs)} ` +
        `index=${formatSize(r.segmentIndexBytes)}/every ${formatSize(r.indexIntervalBytes)} min.isr=${r.minInsyncReplicas}${sys.length ? ` ${sys.join(' ')}` : ''}`,
    );
  }
  for (const f of s.faults) {
    const target = typeof f.target !== 'object' ? f.target : 'broker' in f.target ? `broker ${f.target.broker}` : `brokers ${f.target.brokers.join(', ')}`;
    const when =
      'at' in f.when ? `at ${f.when.at} s` : 'between' in f.when ? `between ${f.when.between[0]} and ${f.when.between[1]} s` : `after ${f.when.afterAcked} acked records`;
    lines.push(`fault: ${f.kind} of ${target}, ${when}${f.duration !== undefined ? `, for ${f.duration} s` : ''}`);
  }
  for (const e of s.expectations) lines.push(`expect (line ${e.line}): ${e.expression}`);
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('scenario', argv, {
    dir: { type: 'string' },
    duration: { type: 'string' },
    repeat: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  const [sub, ...names] = positionals;
  if (values.help || !sub) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  const dir = values.dir ?? defaultScenariosDir();
  if (values.dir !== undefined) requireExistingDir('--dir', values.dir, 'the scenarios directory');
  const opts = { scenariosDir: dir, ...parseOverrideFlags({ duration: values.duration, repeat: values.repeat }) };

  switch (sub) {
    case 'list': {
      const list = listScenarios(dir);
      const width = Math.max(0, ...list.map((s) => s.name.length));
      for (const s of list) console.log(`${s.name.padEnd(width)}  ${s.question}`);
      return 0;
    }
    case 'check': {
      const targets = names.length ? names : listScenarios(dir).map((s) => s.file);
      if (targets.length === 0) throw new Error(`no scenario files in ${dir}`);
      let bad = 0;
      for (const t of targets) {
        try {
          const s = loadScenario(t, opts);
          console.log(`ok    ${s.file}: ${s.matrix.length} cell(s), ${s.expectations.length} expectation(s)`);
        } catch (err) {
          bad++;
          if (!(err instanceof ScenarioError)) {
            console.log(`error ${t}: ${err instanceof Error ? err.message : String(err)}`);
            continue;
          }
          console.log(`error ${err.issues[0].file}: ${err.issues.length} problem(s)`);
          for (const line of err.message.split('\n')) console.log(`  ${line}`);
        }
      }
      return bad === 0 ? 0 : 1;
    }
    case 'show': {
      if (names.length !== 1) throw new Error(`scenario show: expected one scenario name or file, found ${names.length}`);
      console.log(describe(loadScenario(names[0], opts)));
      return 0;
    }
    default:
      console.error(`durolab scenario: unknown subcommand '${sub}'\n\n${HELP}`);
      return 2;
  }
}
