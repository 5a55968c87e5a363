// `durolab bench <scenario>`: the front door. Loads and validates the scenario (nothing starts
// on a bad file), runs every cell, prints a summary table, writes run.json and the report.
import { frontierText, frontiersOf } from '../report/frontier.ts';
import { consumerSummary } from '../runner/consumer-lines.ts';
import { partitionScaleSummary } from '../runner/partition-scale-lines.ts';
import { recoveryCompareSummary } from '../report/recovery-compare.ts';
import { throughputVsLabSummary } from '../report/throughput-vs-lab.ts';
import { parseFlags } from '../../engine/common/flags.ts';
import path from 'node:path';
import { listScenarios, loadScenario, parseOverrideFlags } from '../scenario/index.ts';
import { runScenario } from '../runner/run-scenario.ts';
import { findRepoRoot } from '../../engine/common/repo-root.ts';
import { writeRunReport, writeReportsIndex } from '../report/index.ts';
import { summaryTable } from '../report/summary-table.ts';
import { parseSummaryFormat, summaryJson, summaryMarkdown } from '../report/summary-formats.ts';
import { trialSummary } from '../report/trial-summary.ts';
import { crashStatesSummary } from '../disk/crash-states/summary.ts';
import { EXIT, runVerdict } from '../results/verdict.ts';
import type { Scenario } from '../model/scenario.ts';
import type { Target } from '../targets/types.ts';
import { TARGETS, TARGET_KINDS, capabilitiesOf, loadTarget } from '../targets/registry.ts';
import { scenarioWants } from '../faults/scenario-wants.ts';
import { FAULTS, FAULT_KINDS, canDeliver } from '../faults/registry.ts';
import { DRIVERS, DRIVER_NAMES } from '../drivers/registry.ts';
import { DEFAULT_KAFKA_LIBRARY, KAFKA_LIBRARIES, KAFKA_LIBRARY_NAMES } from '../model/kafka-libraries.ts';

const HELP = `usage: durolab bench <scenario name | path/to/scenario.yaml> [options]

Runs every cell of a scenario's matrix against a fresh cluster, checks every acknowledged
record, writes results/<scenario>/<run id>/run.json and reports/<scenario>/<run id>/index.html.

options:
  --duration S          override the workload's measured seconds per cell
  --repeat N            override the repetitions (judged trials) per cell
  --driver NAME         override workload.driver (${DRIVER_NAMES.join(' | ')}), e.g. acks-all through a Kafka client
  --allow-host-sysctl   let cells change the host's vm.dirty_* sysctls (root; restored afterwards)
  --results-dir D       where runs are written (default: <repo>/results)
  --reports-dir D       where reports are written (default: <repo>/reports)
  --keep-data           keep the brokers' data directories after each cell and, on the host
                        route's fault disks, every trial's cut and final disk images
                        (broker-N/cut.img, final.img, disks.json) for \`durolab recount\`;
                        without it only suspect trials and failed checks keep theirs
  --seed N              base seed of random fault times (each trial's seed is derived and recorded)
  --no-report           skip the HTML report
  --summary FORMAT      text (default), markdown or json: markdown and json print only the
                        summary on stdout (progress goes to stderr), for an issue or a PR
  --list                list the shipped scenarios and the question each answers
  -h, --help            this text

Faults (the scenario's faults:, a schedule applied in order within each trial, or the entry of
faultSets: a cell's \`faults\` setting names; each entry has kind, target (leader, followers,
one, minority, majority, all, a broker index or a list of them), when (at, between or afterAcked,
from the load's start) and, for a lasting kind, duration): each repetition of a cell is one trial on
a fresh cluster. The load runs through faults that leave brokers up and stops at a kill or a
cut; every lasting fault is healed after its duration; the hit brokers are restarted on the
same disks, recover, and the checker compares every acknowledged record with what they serve.
${FAULT_KINDS.map((k) => `  ${k.padEnd(14)}${FAULTS[k].summary}${FAULTS[k].heal ? ' (lasting: needs duration)' : ''}; targets: ${TARGET_KINDS.filter((t) => canDeliver(k, capabilitiesOf(t).faultActions)).join(', ')}`).join('\n')}

Targets (target:):
${TARGET_KINDS.map((t) => `  ${t.padEnd(14)}${TARGETS[t].summary}`).join('\n')}

Client drivers (workload.driver:):
${DRIVER_NAMES.map((d) => `  ${d.padEnd(14)}${DRIVERS[d].summary}`).join('\n')}

Kafka client libraries of the kafka driver (workload.producer.library:, or a library: matrix
axis; default ${DEFAULT_KAFKA_LIBRARY}):
${KAFKA_LIBRARY_NAMES.map((l) => `  ${l.padEnd(14)}${KAFKA_LIBRARIES[l].package}: ${KAFKA_LIBRARIES[l].summary}`).join('\n')}

Ctrl-C stops the brokers, keeps the finished cells and marks the run incomplete.

Each expectation ends PASS, FAIL or NOT EVALUATED (with the reason), its trials and cells
merged as Jepsen merges validity, false > unknown > true: a figure that breaks the expectation
in any trial fails it, even a trial whose fault did not fire or that is suspect (the reason
names the trial and its doubt); otherwise a trial that cannot be judged (fault did not fire,
suspect) makes an "in every trial" expectation, and a ledger figure of its cell, NOT EVALUATED;
only when every trial was judged and held does it pass. Such a trial is run again, up to
workload.extraTrials (default 2) more attempts per cell, so repetitions: 3 means three judged
trials where the machine allows; every attempt stays in run.json (cells[].trials, rep-N
directories), a replaced one marked replacedBy: its violation still fails, its doubt no longer
counts. A loss figure (ackedLost, offsetChanged, inconsistentOffsets, outOfOrder, hwWentBack)
leaves out cells and trials with 0 acknowledged records, hwWentBack leaves out trials where the
HW before the fault could not be read (not measured), and an expectation over skipped cells
judges nothing.

exit codes:
  0    every expectation passed (or none is stated) and some cell was measured
  1    an expectation failed, a trial's cluster did not come back after its fault, the run
       failed or is incomplete, or the scenario is malformed
  2    bad command line
  3    no expectation failed, but one was NOT EVALUATED, or nothing was measured (every cell skipped)
  130  interrupted (Ctrl-C)`;

export async function main(argv: string[]): Promise<number> {
  let parsed: CommandLine | 'help' | 'list';
  try {
    parsed = parseCommandLine(argv);
  } catch (e) {
    // A bad command line is exit 2 (HELP), apart from a run that failed or a malformed scenario (1).
    const message = (e as Error).message.replace(/^durolab bench: /, '');
    console.error(`durolab bench: ${message} (durolab bench --help lists the options)`);
    return EXIT.usage;
  }
  if (parsed === 'help') {
    console.log(HELP);
    return EXIT.passed;
  }
  if (parsed === 'list') {
    for (const s of listScenarios()) console.log(`${s.name.padEnd(20)} ${s.question}`);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    console.error(`durolab bench: expected one scenario name or file, found ${parsed.positionals.length}\n\n${HELP}`);
    return EXIT.usage;
  }
  return runBenchCommand(parsed);
}

interface CommandLine {
  values: ReturnType<typeof parseBenchFlags>['values'];
  positionals: string[];
  summaryFormat: ReturnType<typeof parseSummaryFormat>;
  overrides: ReturnType<typeof parseOverrideFlags>;
  seed: number | undefined;
}

function parseBenchFlags(argv: string[]) {
  return parseFlags('bench', argv, {
    duration: { type: 'string' },
    repeat: { type: 'string' },
    driver: { type: 'string' },
    'allow-host-sysctl': { type: 'boolean', default: false },
    'results-dir': { type: 'string' },
    'reports-dir': { type: 'string' },
    'keep-data': { type: 'boolean', default: false },
    seed: { type: 'string' },
    'no-report': { type: 'boolean', default: false },
    summary: { type: 'string' },
    list: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
}

/** Everything the command line says, checked before any scenario is read: throws on a bad flag or value. */
function parseCommandLine(argv: string[]): CommandLine | 'help' | 'list' {
  const { values, positionals } = parseBenchFlags(argv);
  if (values.help) return 'help';
  if (values.list) {
    if (positionals.length > 0) throw new Error(`--list takes no scenario, found ${positionals.join(' ')}`);
    return 'list';
  }
  const summaryFormat = parseSummaryFormat('--summary', values.summary);
  const overrides = parseOverrideFlags({ duration: values.duration, repeat: values.repeat, driver: values.driver });
  const seed = values.seed === undefined ? undefined : /^\d+$/.test(values.seed) ? Number(values.seed) : NaN;
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32)) {
    throw new Error(`--seed: expected a whole number from 0 to 4294967295, found '${values.seed}'`);
  }
  return { values, positionals, summaryFormat, overrides, seed };
}

async function runBenchCommand(cmd: CommandLine): Promise<number> {
  const { values, positionals, summaryFormat, seed } = cmd;
  // With a pasteable summary, stdout carries only it; everything else goes to stderr.
  const say = summaryFormat === 'text' ? (line: string) => console.log(line) : (line: string) => console.error(line);
  const scenario = loadScenario(positionals[0], cmd.overrides);
  // Loaded only for the scenario's target: the process path never pulls in the QEMU code.
  const target = await loadTarget(scenario.target, { scenario, wants: scenarioWants(scenario), log: say });
  const root = findRepoRoot();
  const resultsDir = path.resolve(values['results-dir'] ?? path.join(root, 'results'));
  const reportsDir = path.resolve(values['reports-dir'] ?? path.join(root, 'reports'));

  const abort = new AbortController();
  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      console.error(`\n${sig}: stopping the brokers; finished cells are kept and the run is marked incomplete (again to force)`);
      abort.abort();
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const w = scenario.workload;
  say(
    `durolab bench ${scenario.name}: ${scenario.matrix.length} cell(s) x ${w.repetitions} rep(s), ${w.warmupSec}+${w.durationSec}s each, ${scenario.cluster.brokers} broker(s)\n${scenario.question}`,
  );
  try {
    const outcome = await runScenario({
      scenario,
      target,
      ...(seed !== undefined ? { baseSeed: seed } : {}),
      resultsDir,
      allowHostSysctl: values['allow-host-sysctl'],
      keepData: values['keep-data'],
      signal: abort.signal,
      log: say,
    });
    say('');
    if (summaryFormat === 'text') say(summaryTable(outcome.run));
    else console.log(summaryFormat === 'markdown' ? summaryMarkdown(outcome.run) : summaryJson(outcome.run));
    say('');
    const faults = trialSummary(outcome.run);
    if (faults) say(`${faults}\n`);
    const vsLab = throughputVsLabSummary(outcome.run);
    if (vsLab) say(`${vsLab}\n`);
    const recovery = recoveryCompareSummary(outcome.run);
    if (recovery) say(`${recovery}\n`);
    const consumers = consumerSummary(outcome.run);
    if (consumers) say(`${consumers}\n`);
    const scale = partitionScaleSummary(outcome.run);
    if (scale) say(`${scale}\n`);
    const frontier = frontierText(frontiersOf(outcome.run));
    if (frontier) say(`${frontier}\n`);
    const infos = { ...(outcome.run.targetInfo ? { [outcome.run.target]: outcome.run.targetInfo } : {}), ...(outcome.run.targetInfos ?? {}) };
    for (const [kind, info] of Object.entries(infos)) say(`target ${kind}: ${Object.entries(info).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    const crash = crashStatesSummary(outcome.run);
    if (crash) say(`${crash}\n`);
    say(`results: ${path.relative(process.cwd(), outcome.runFile) || outcome.runFile}`);
    if (!values['no-report']) {
      const report = await writeRunReport(outcome.run, { reportsDir });
      await writeReportsIndex({ resultsDir, reportsDir });
      say(`report:  ${path.relative(process.cwd(), report) || report}  (open it in a browser: file://${report})`);
    }
    const verdict = runVerdict(outcome.run, abort.signal.aborted);
    say(verdict.line);
    return verdict.code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
