// docs/findings.md's measured tables, regenerated from results/ (`durolab docs --findings
// results`): for each scenario its newest complete run, with its run id, commit, date, verdict
// and the terminal's own tables (the summary and, for fault scenarios, the loss per trial), so
// the page quotes runs rather than pasted numbers.
import { listRuns } from '../report/load-runs.ts';
import { summaryTable } from '../report/summary-table.ts';
import { trialSummary } from '../report/trial-summary.ts';
import { expectationState } from '../results/verdict.ts';
import type { RunResult } from '../results/types.ts';
import { headlinesMarkdown } from './findings-headlines.ts';

const STATE = { pass: 'PASS', fail: 'FAIL', 'not-evaluated': 'NOT EVALUATED' } as const;

function runSection(run: RunResult): string {
  const expectations = run.expectations.map((e) => `- ${STATE[expectationState(e)]}: \`${e.expression}\``);
  const faults = trialSummary(run);
  return [
    `### ${run.scenario.name}`,
    '',
    `${run.scenario.question}`,
    '',
    `Run \`${run.runId}\` (started ${run.startedAt}, commit ${run.gitCommit ? `\`${run.gitCommit.slice(0, 12)}\`` : 'not recorded'}, target ${run.target}, ${run.environment.cores ?? '?'} cores).`,
    '',
    ...(expectations.length ? [...expectations, ''] : []),
    '```text',
    summaryTable(run),
    ...(faults ? ['', faults] : []),
    '```',
  ].join('\n');
}

/** A path on the machine that ran it, as the page says it: results/... from its results folder on, else the file's own name. */
function withoutLocalPaths(text: string): string {
  // A quoted log line may carry a corrupt file's raw bytes (a bad-block trial's error): control characters become '?'.
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '?').replace(/(?:\/[\w.@+-]+)+\/results\//g, 'results/').replace(/\/tmp\/[\w.@+-]+/g, '/tmp/…');
}

/** The `### name` sections of an earlier evidence part, by scenario name. */
export function evidenceSections(block: string): Map<string, string> {
  const start = block.indexOf(EVIDENCE_HEADING);
  const text = start >= 0 ? block.slice(start + EVIDENCE_HEADING.length) : block;
  const out = new Map<string, string>();
  for (const part of text.split(/\n(?=### )/)) {
    const m = /^### (\S+)/.exec(part.trimStart());
    if (m) out.set(m[1]!, part.trim().replace(/\n+$/, ''));
  }
  return out;
}

const EVIDENCE_HEADING = '## The evidence: the newest run of each scenario';

/**
 * The findings block: first the headlines of the newest complete run of each scenario under
 * `resultsDir` (harness/docs/findings-headlines.ts), then the evidence, one section per scenario
 * with its run's own tables. A scenario with no run here keeps its section from the page as it
 * stood (`earlier`), marked so, without headlines (its run.json is on the machine that ran it).
 */
export async function findingsMarkdown(resultsDir: string, earlier = ''): Promise<string> {
  const newest = new Map<string, RunResult>();
  for (const e of await listRuns(resultsDir)) {
    if (!e.run || e.run.status !== 'complete' || newest.has(e.run.scenario.name)) continue;
    newest.set(e.run.scenario.name, e.run);
  }
  const kept = evidenceSections(earlier);
  for (const name of newest.keys()) kept.delete(name);
  if (newest.size === 0 && kept.size === 0) return `No complete run under ${resultsDir}.`;
  const names = [...newest.keys()].sort();
  const evidence = [...new Set([...names, ...kept.keys()])].sort().map((name) => {
    const run = newest.get(name);
    if (run) return withoutLocalPaths(runSection(run));
    const old = kept.get(name)!;
    return old.includes(KEPT_NOTE) ? old : old.replace(/^(### \S+\n)/, `$1\n${KEPT_NOTE}\n`);
  });
  return [
    withoutLocalPaths(headlinesMarkdown(names.map((n) => newest.get(n)!))) || 'No run on this machine supports a headline yet.',
    '',
    EVIDENCE_HEADING,
    '',
    evidence.join('\n\n'),
  ].join('\n');
}

const KEPT_NOTE = '_Kept from an earlier regeneration: its run.json is not on the machine that regenerated this page, so it has no headline above; read its tables as the evidence they are._';
