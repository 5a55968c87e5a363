// docs/findings.md's measured tables, regenerated from results/ (`durolab docs --findings
// results`): for each scenario its newest complete run, with its run id, commit, date, verdict
// and the terminal's own tables (the summary and, for fault scenarios, the loss per trial), so
// the page quotes runs rather than pasted numbers.
import { listRuns } from '../report/load-runs.ts';
import { summaryTable } from '../report/summary-table.ts';
import { trialSummary } from '../report/trial-summary.ts';
import { expectationState } from '../results/verdict.ts';
import type { RunResult } from '../results/types.ts';

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
  return text.replace(/(?:\/[\w.@+-]+)+\/results\//g, 'results/').replace(/\/tmp\/[\w.@+-]+/g, '/tmp/…');
}

/** The newest complete run of each scenario under `resultsDir`, one section each, by scenario name. */
export async function findingsMarkdown(resultsDir: string): Promise<string> {
  const newest = new Map<string, RunResult>();
  for (const e of await listRuns(resultsDir)) {
    if (!e.run || e.run.status !== 'complete' || newest.has(e.run.scenario.name)) continue;
    newest.set(e.run.scenario.name, e.run);
  }
  if (newest.size === 0) return `No complete run under ${resultsDir}.`;
  return [...newest.keys()]
    .sort()
    .map((name) => withoutLocalPaths(runSection(newest.get(name)!)))
    .join('\n\n');
}
