// Where results/ and reports/ live. The code runs both from sources (vitest) and from the
// bundle dist/durolab.mjs, so the root is found from the working directory, not this file.

import path from 'node:path';
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
