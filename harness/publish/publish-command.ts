// `durolab publish [--out DIR]`: the static site of runs (harness/publish/publish.ts).

import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { findRepoRoot } from '../../engine/common/repo-root.ts';
import { defaultDirs, requireResultsDir } from '../report/repo-paths.ts';
import { publishSite } from './publish.ts';

const HELP = `usage: durolab publish [options]

Writes a static site of the runs under the results folder: index.html (runs filterable by
scenario, target, status and date), each run's report with its run.json beside it, compare
pages (each scenario's trend, its latest run against the one before) and claims.html (the
source articles' claims with verdicts computed from the latest runs). Pages open from disk
with no network; links are relative; host names and local paths are left out.

  --out DIR            default: <repo>/site (emptied first if an earlier publish wrote it)
  --scenario NAME      only this scenario's runs (repeat, or comma-separate, for several)
  --since DATE         only runs started on or after DATE (2026-11-30 or an ISO time)
  --runs LIST          only these runs: comma-separated '<scenario>/<run id>'
  --results-dir DIR    default: <repo>/results
  -h, --help           this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('publish', argv, {
    out: { type: 'string' },
    scenario: { type: 'string', multiple: true },
    since: { type: 'string' },
    runs: { type: 'string' },
    'results-dir': { type: 'string' },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const root = findRepoRoot();
  const { resultsDir } = defaultDirs({ root, resultsDir: values['results-dir'] });
  requireResultsDir(values['results-dir']);
  const outDir = path.resolve(values.out ?? path.join(root, 'site'));
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new Error(`--out ${values.out}: not a directory (the site is a directory of pages)`);
  let since: Date | undefined;
  if (values.since !== undefined) {
    since = new Date(values.since);
    // Date rolls 2026-02-30 over to March 2: a calendar date must read back as typed.
    const day = /^\d{4}-\d{2}-\d{2}$/.test(values.since) ? values.since : null;
    if (Number.isNaN(since.getTime()) || (day !== null && since.toISOString().slice(0, 10) !== day)) {
      throw new Error(`--since: expected a date like 2026-11-30 or an ISO time, found '${values.since}'`);
    }
  }
  const split = (xs: string[] | string | undefined) => (xs === undefined ? undefined : [xs].flat().flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean));
  const result = await publishSite({
    resultsDir,
    outDir,
    repoRoot: root,
    scenarios: split(values.scenario),
    since,
    runs: split(values.runs),
    warn: (line) => console.error(`durolab publish: ${line}`),
  });
  const shown = path.relative(process.cwd(), result.outDir) || result.outDir;
  console.log(`site: ${shown}/index.html (${result.runs} run${result.runs === 1 ? '' : 's'}, ${result.files.length} files); open it from disk or copy the folder anywhere`);
  return 0;
}
