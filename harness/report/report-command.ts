// `durolab report [run]`: render a run's HTML report and refresh the index of all runs.

import { parseCommandFlags } from '../../engine/common/flags.ts';
import { listRuns, readRunJson, resolveRunFile } from './load-runs.ts';
import { defaultDirs } from './repo-paths.ts';
import { writeReportsIndex, writeRunReport } from './write-reports.ts';
import { parseSummaryFormat, summaryJson, summaryMarkdown } from './summary-formats.ts';
import { summaryTable } from './summary-table.ts';

const HELP = `usage: durolab report [run] [options]

Writes reports/<scenario>/<run id>/index.html (self-contained: opens from file:// with no
network) and refreshes reports/index.html, the list of all runs. Prints the page's path.

  run                  a run directory, a run.json path, '<scenario>/<run id>' or '<scenario>'
                       (its latest run) under the results folder; default: the latest run of
                       any scenario
  --all                render every readable run under the results folder
  --summary FORMAT     print the run's summary instead of writing the page: markdown (a table
                       to paste into an issue or a PR), json or text
  --results-dir DIR    default: <repo>/results
  --reports-dir DIR    default: <repo>/reports
  -h, --help           this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('report', argv, {
    all: { type: 'boolean', default: false },
    summary: { type: 'string' },
    'results-dir': { type: 'string' },
    'reports-dir': { type: 'string' },
  }, HELP, true);
  if (parsed === null) return 0;
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new Error(`report takes at most one run, got ${positionals.length}: ${positionals.join(' ')}`);
  if (values.all && positionals.length) throw new Error('report: give either --all or a run, not both');
  if (values.all && values.summary !== undefined) throw new Error('report: --summary prints one run; give a run, not --all');
  const dirs = defaultDirs({ resultsDir: values['results-dir'], reportsDir: values['reports-dir'] });
  const onWarning = (chart: string, message: string) => console.error(`durolab report: chart ${chart}: ${message}`);

  if (values.all) {
    const entries = await listRuns(dirs.resultsDir);
    let failed = 0;
    for (const entry of entries) {
      if (!entry.run) {
        console.error(`durolab report: skipped ${entry.error}`);
        failed++;
        continue;
      }
      console.log(await writeRunReport(entry.run, { ...dirs, onWarning }));
    }
    if (entries.length === 0) console.log(await writeReportsIndex(dirs));
    return failed ? 1 : 0;
  }

  const file = await resolveRunFile(positionals[0], dirs.resultsDir);
  const run = await readRunJson(file);
  if (values.summary !== undefined) {
    const format = parseSummaryFormat('--summary', values.summary);
    console.log(format === 'markdown' ? summaryMarkdown(run) : format === 'json' ? summaryJson(run) : summaryTable(run));
    return 0;
  }
  console.log(await writeRunReport(run, { ...dirs, onWarning }));
  return 0;
}
