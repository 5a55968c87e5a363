// Where the durolab repository is: the nearest folder whose package.json is named durolab.
// Works from the sources (vitest, tsx) and from the bundle dist/durolab.mjs alike.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `start` whose package.json is named durolab, or null. */
export function repoRootAbove(start: string): string | null {
  let dir = path.resolve(start);
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'durolab') return dir;
    } catch {
      // no package.json here, or not JSON: keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The repository holding this code (source or bundle); throws when there is none above it. */
export function repoRoot(): string {
  const here = fileURLToPath(import.meta.url);
  const root = repoRootAbove(path.dirname(here));
  if (root === null) throw new Error(`cannot find durolab's package.json above ${here}`);
  return root;
}

/**
 * The repository around the working directory (where results/ and reports/ go), else `start`
 * itself: a user may run the bundle from anywhere.
 */
export function findRepoRoot(start: string = process.cwd()): string {
  return repoRootAbove(start) ?? path.resolve(start);
}
