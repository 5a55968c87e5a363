// docs/findings.md's first part: what each newest run found, as headlines a reader can trust at
// a glance, each with its number and condition (system, version, settings, fault), its run id and
// the command that reproduces it. What a run's figures cannot support is left out and said why:
// throughput from cells whose measured windows were not steady, or from trials that ran while
// the machine was busy (a 1-minute load average above cores + brokers, as the cycle goals judge
// idle). Loss is a count of acknowledged records missing after the check: it is quoted whatever
// the load, since a busy machine does not make a lost record come back.
import type { CellResult, RunResult } from '../results/types.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { FILE_FAULT_OUTCOMES, fileFaultRows, type FileFaultRow } from '../results/file-fault-outcomes.ts';
import { expectationState } from '../results/verdict.ts';
import { TARGETS, targetKindNamed } from '../targets/registry.ts';

export interface RunHeadlines {
  scenario: string;
  lines: string[];
  leftOut: string[];
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** The system and version a cell ran, as the run recorded it. */
function systemOf(run: RunResult, c: CellResult): string {
  return systemName(run, cellTargetName(run, c));
}

/**
 * A target name as run.json gives it (a target-axis value or a kind) as its system: the engine
 * its target recorded (targetInfo / targetInfos) with the version it recorded, else the target
 * registry's label; the registry answers, no system is named here.
 */
function systemName(run: RunResult, name: string): string {
  const kind = targetKindNamed(name) ?? run.target;
  const info = (kind === run.target ? run.targetInfo : run.targetInfos?.[kind]) as Record<string, string> | undefined;
  const version = Object.entries(info ?? {}).find(([k]) => /Version$/.test(k) && !/^java/i.test(k))?.[1];
  const label = info?.engine ?? TARGETS[kind].systemLabel;
  return version ? `${label} ${version}` : label;
}

/** Why a cell's throughput is not a finding, or null when it may be quoted. */
function whyNotThroughput(run: RunResult, c: CellResult): string | null {
  if (c.status !== 'ok') return `status ${c.status}`;
  if (c.steadiness?.state === 'ramping') return `not steady (${c.steadiness.reason})`;
  if (c.steadiness === undefined || c.steadiness.state === 'unknown') return 'steadiness not judged';
  const cores = run.environment.cores ?? 2;
  const idle = cores + ((run.settings as { cluster?: { brokers?: number } }).cluster?.brokers ?? 1);
  const busy = (c.trials ?? []).map((t) => t.timing?.loadAvg1).filter((x): x is number => x !== undefined && x > idle);
  if (busy.length) return `the machine was busy (load average ${Math.max(...busy).toFixed(1)} > ${idle} on ${cores} cores)`;
  return null;
}

function lossLine(run: RunResult, c: CellResult, cmd: string): string | null {
  const trials = (c.trials ?? []).filter((t) => t.fault);
  if (!trials.length) return null;
  const f = trials[0]!.fault!;
  const lost = trials.reduce((a, t) => a + t.ledger.ackedLost, 0);
  const acked = trials.reduce((a, t) => a + t.ledger.acked, 0);
  const unavailable = c.unavailableTrials?.length ?? 0;
  const who = `${f.kind} of broker ${f.targets.join(', ')}`;
  const what = lost > 0 ? `lost ${fmt(lost)} of ${fmt(acked)} acknowledged records` : `lost none of ${fmt(acked)} acknowledged records`;
  const un = unavailable ? `; ${unavailable} more trial(s) never came back (unavailable)` : '';
  return `- **${systemOf(run, c)}, ${c.id}: ${what}** over ${trials.length} trial(s) of a ${who}${un}. Run \`${run.runId}\`, \`${cmd}\`.`;
}

/** An expectation's detail for a headline: the machine's paths cut, at most 240 characters. */
function shortDetail(detail: string): string {
  const cut = detail.replace(/\/\S*?\/results\//g, 'results/').replace(/\/tmp\/\S+/g, '/tmp/…').replace(/\s+/g, ' ');
  return cut.length > 240 ? `${cut.slice(0, 239)}…` : cut;
}

/** The bad-blocks rows as one headline per system: how many rows came to each outcome, the loss over them, the rows that were not repaired. */
function badBlockLines(rows: readonly FileFaultRow[], run: RunResult, cmd: string): string[] {
  const systems = [...new Set(rows.map((r) => r.system))];
  return systems.map((system) => {
    const mine = rows.filter((r) => r.system === system);
    const counts = FILE_FAULT_OUTCOMES.map((o) => [o, mine.filter((r) => r.worst === o)] as const).filter(([, rs]) => rs.length);
    const lost = mine.reduce((a, r) => a + r.lost, 0);
    const acked = mine.reduce((a, r) => a + r.acked, 0);
    const trials = mine.reduce((a, r) => a + r.outcomes.length, 0);
    const bad = counts.filter(([o]) => o !== 'repaired' && o !== 'did not fire').map(([o, rs]) => `${o}: ${rs.map((r) => r.schedule).join(', ')}`);
    return (
      `- **${systemName(run, system)}: ${counts.map(([o, rs]) => `${rs.length} ${o}`).join(', ')} of ${mine.length} bad-block row(s); lost ${fmt(lost)} of ${fmt(acked)} acknowledged records** over ${trials} trial(s)` +
      `${bad.length ? ` (${bad.join('; ')})` : ''}. Run \`${run.runId}\`, \`${cmd}\`.`
    );
  });
}

/** One run's headlines: its expectations' verdicts, each fault cell's loss, the bad blocks, steady throughput. */
export function runHeadlines(run: RunResult): RunHeadlines {
  const cmd = `durolab bench ${run.scenario.name}`;
  const lines: string[] = [];
  const leftOut: string[] = [];
  for (const e of run.expectations) {
    const state = expectationState(e);
    if (state === 'not-evaluated') continue;
    const detail = state === 'fail' ? `: ${shortDetail(e.detail)}` : '';
    lines.push(`- **${state === 'fail' ? 'FAIL' : 'PASS'}: \`${e.expression}\`**${detail}. Run \`${run.runId}\`, \`${cmd}\`.`);
  }
  const rotten = fileFaultRows(run);
  lines.push(...badBlockLines(rotten, run, cmd));
  if (!rotten.length) for (const c of run.cells) {
    const l = lossLine(run, c, cmd);
    if (l) lines.push(l);
  }
  // Throughput is quoted from a run without faults, or from its cells that measure throughput.
  const faultRun = run.settings.faults !== undefined || run.settings.faultSets !== undefined;
  const faultless = run.cells.filter((c) => (!faultRun || c.params.measure === 'throughput') && !(c.trials ?? []).some((t) => t.fault));
  for (const c of faultless) {
    const why = whyNotThroughput(run, c);
    if (why || !c.throughput) leftOut.push(`${c.id}: throughput not quoted, ${why ?? 'not measured'}`);
    else lines.push(`- ${systemOf(run, c)}, ${c.id}: ${fmt(c.throughput.recordsPerSec)} records/s (steady; fdatasync here costs ~80-250 µs, so compare ratios within the run). Run \`${run.runId}\`, \`${cmd}\`.`);
  }
  return { scenario: run.scenario.name, lines, leftOut };
}

/** The condition every cell of the run shares: its base settings, the cluster, the fault schedule. */
export function runCondition(run: RunResult): string {
  const s = run.settings as Record<string, unknown> & { cluster?: { brokers?: number; replicationFactor?: number; minInsyncReplicas?: number }; faults?: Array<{ kind: string; target: unknown }> };
  const base = Object.entries(s)
    .filter(([k, v]) => !['workload', 'cluster', 'faults', 'faultSets', 'faultSeed', 'vm'].includes(k) && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))
    .map(([k, v]) => `${k}=${String(v)}`);
  const c = s.cluster;
  const cluster = c ? `${c.brokers ?? '?'} broker(s), RF ${c.replicationFactor ?? '?'}, min ISR ${c.minInsyncReplicas ?? '?'}` : '';
  const faults = (s.faults ?? []).map((f) => `${f.kind} of ${typeof f.target === 'object' ? JSON.stringify(f.target) : String(f.target)}`);
  return [base.length ? `every cell: ${base.join(' ')}` : '', cluster, faults.length ? `fault: ${faults.join(', ')}` : ''].filter(Boolean).join('; ');
}

/** The findings part of the page: per scenario its headlines, then what was left out and why. */
export function headlinesMarkdown(runs: readonly RunResult[]): string {
  return runs
    .map((run) => {
      const h = runHeadlines(run);
      return [
        `### ${h.scenario}`,
        '',
        run.scenario.question,
        '',
        ...(runCondition(run) ? [`Condition: ${runCondition(run)}.`, ''] : []),
        ...(h.lines.length ? h.lines : ['- nothing this run supports as a headline (see what was left out)']),
        ...(h.leftOut.length ? ['', `Left out: ${h.leftOut.join('; ')}.`] : []),
      ].join('\n');
    })
    .join('\n\n');
}
