// Writing reports/<scenario>/<run id>/index.html and reports/index.html. Each file is
// written atomically (engine/common/atomic-file.ts), so a reader never opens half a page.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { RunResult } from '../results/types.ts';
import { renderReportsIndex, reportRelPath, type IndexRow } from './index-page.ts';
import { asRunResult, listRuns } from './load-runs.ts';
import { defaultDirs } from './repo-paths.ts';
import { renderRunReport, type RenderOptions } from './run-page.ts';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';

export interface WriteOptions extends RenderOptions {
  reportsDir?: string;
  resultsDir?: string;
  /** Repository root for the default results/ and reports/ folders. */
  root?: string;
}

export async function writeReportsIndex(opts: WriteOptions = {}): Promise<string> {
  const { resultsDir, reportsDir } = defaultDirs(opts);
  const entries = await listRuns(resultsDir);
  const rows: IndexRow[] = [];
  for (const entry of entries) {
    let href: string | undefined;
    if (entry.run) {
      const rel = reportRelPath(entry.run.scenario.name, entry.run.runId);
      if ((await stat(path.join(reportsDir, rel)).catch(() => null))?.isFile()) href = rel;
    }
    rows.push({ entry, href });
  }
  const file = path.join(reportsDir, 'index.html');
  writeFileAtomic(file, renderReportsIndex(rows, resultsDir), { mkdir: true });
  return file;
}

export async function writeRunReport(run: RunResult, opts: WriteOptions = {}): Promise<string> {
  // Callers at the end of a bench pass what they built in memory: check it like a file.
  asRunResult(run, `run ${run?.scenario?.name ?? '?'}/${run?.runId ?? '?'}`);
  const { reportsDir } = defaultDirs(opts);
  const file = path.join(reportsDir, reportRelPath(run.scenario.name, run.runId));
  writeFileAtomic(file, renderRunReport(run, opts), { mkdir: true });
  await writeReportsIndex(opts);
  return file;
}
