// `durolab compare RUN_A RUN_B [RUN_C ...]` and `durolab compare --scenario NAME`.

import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import { listRuns, readRunJson, resolveRunFile } from '../report/load-runs.ts';
import { defaultDirs } from '../report/repo-paths.ts';
import type { RunResult } from '../results/types.ts';
import { compareRuns, comparisonText, trendText } from './compare.ts';
import { renderComparePage, renderTrendPage } from './compare-page.ts';

const HELP = `usage: durolab compare RUN_A RUN_B [RUN_C ...] [options]
       durolab compare --scenario NAME [options]

Puts runs side by side. Cells are aligned by target and settings; each figure (records/s,
MB/s, p50/p99/p99.9 µs; for fault scenarios also acknowledged and lost records and the loss
window over trials) shows its median with the min-max band over repetitions or trials and
its ratio to RUN_A. Where the bands overlap the difference is labelled "within noise"; a cell
with one repetition has no band (run with --repeat 2 or more). Environment facts that differ
(cpu, cores, memory, kernel, disk, accelerator, commit, workload) are listed.
--scenario NAME shows that scenario's runs oldest first (its trend).

Prints the table and writes an HTML page (default: <reports dir>/compare/<name>.html).

  RUN                  a run directory, a run.json path, '<scenario>/<run id>' or '<scenario>'
                       (its latest run) under the results folder
  --scenario NAME      the trend of one scenario over all its runs
  --html FILE          where to write the page
  --no-html            print only
  --results-dir DIR    default: <repo>/results
  --reports-dir DIR    default: <repo>/reports
  -h, --help           this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('compare', argv, {
    scenario: { type: 'string' },
    html: { type: 'string' },
    'no-html': { type: 'boolean', default: false },
    'results-dir': { type: 'string' },
    'reports-dir': { type: 'string' },
  }, HELP, true);
  if (parsed === null) return 0;
  const { values, positionals } = parsed;
  const dirs = defaultDirs({ resultsDir: values['results-dir'], reportsDir: values['reports-dir'] });
  let text: string;
  let page: string;
  let name: string;
  if (values.scenario !== undefined) {
    // A name, as results/<scenario>/ spells it: an empty one or a path would read other scenarios' runs as this one's trend.
    values.scenario = values.scenario.replace(/\/+$/, '');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(values.scenario)) {
      throw new Error(`durolab compare --scenario ${JSON.stringify(values.scenario)}: expected a scenario name (letters, digits, '.', '_', '-'; as in results/<name>/), not a path`);
    }
    if (positionals.length) throw new Error(`durolab compare: give either --scenario or runs, not both (got ${positionals.join(' ')})`);
    const entries = await listRuns(dirs.resultsDir, values.scenario);
    const runs = entries.filter((e) => e.run).map((e) => e.run as RunResult);
    if (runs.length === 0) throw new Error(`durolab compare --scenario ${values.scenario}: no readable run under ${path.join(dirs.resultsDir, values.scenario)}`);
    text = trendText(values.scenario, runs);
    page = renderTrendPage(values.scenario, runs);
    name = `${values.scenario}-trend`;
  } else {
    if (positionals.length < 2) {
      console.error(`durolab compare: expected at least two runs (or --scenario NAME), found ${positionals.length}\n\n${HELP}`);
      return 2;
    }
    const runs: RunResult[] = [];
    for (const arg of positionals) runs.push(await readRunJson(await resolveRunFile(arg, dirs.resultsDir)));
    const cmp = compareRuns(runs);
    text = comparisonText(cmp);
    page = renderComparePage(cmp);
    name = runs.map((r) => `${r.scenario.name}-${r.runId}`).join('-vs-');
  }
  console.log(text);
  if (!values['no-html']) {
    const file = path.resolve(values.html ?? path.join(dirs.reportsDir, 'compare', `${name.slice(0, 200)}.html`));
    writeFileAtomic(file, page, { mkdir: true });
    console.log(`\npage: ${path.relative(process.cwd(), file) || file}`);
  }
  return 0;
}
