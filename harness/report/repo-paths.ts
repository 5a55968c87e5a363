// Where results/ and reports/ live. The code runs both from sources (vitest) and from the
// bundle dist/durolab.mjs, so the root is found from the working directory, not this file.

import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The nearest folder at or above `start` whose package.json is named durolab; else `start`. */
export function findRepoRoot(start: string = process.cwd()): string {
  let dir = path.resolve(start);
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'durolab') return dir;
    } catch {
      // no package.json here, or not JSON: keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start);
    dir = parent;
  }
}

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
