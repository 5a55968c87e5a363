// Where results/ and reports/ live. The code runs both from sources (vitest) and from the
// bundle dist/durolab.mjs, so the root is found from the working directory, not this file.

import path from 'node:path';
import { requireExistingDir } from '../../engine/common/flags.ts';
import { findRepoRoot } from '../../engine/common/repo-root.ts';

export interface ReportDirs {
  resultsDir: string;
  reportsDir: string;
}

export function defaultDirs(opts: { root?: string; resultsDir?: string; reportsDir?: string } = {}): ReportDirs {
  const root = opts.root ?? findRepoRoot();
  return {
    resultsDir: path.resolve(opts.resultsDir ?? path.join(root, 'results')),
    reportsDir: path.resolve(opts.reportsDir ?? path.join(root, 'reports')),
  };
}

/**
 * A --results-dir the user named must exist: a command that reads runs from a mistyped path
 * would otherwise publish an empty site or call every claim unmeasured. (The default results/
 * may be missing on a fresh checkout: nothing has run yet.)
 */
export function requireResultsDir(flagValue: string | undefined): void {
  if (flagValue !== undefined) requireExistingDir('--results-dir', flagValue);
}
