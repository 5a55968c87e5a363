// Paths of the repository and of the VM cache. Works from the sources (vitest, tsx) and from
// the bundle dist/durolab.mjs alike, by walking up to durolab's package.json.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === 'durolab') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find durolab's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** vm/.cache/ at the repository root (git-ignored), or $DUROLAB_VM_CACHE. */
export function defaultVmCacheDir(): string {
  return process.env.DUROLAB_VM_CACHE || path.join(repoRoot(), 'vm', '.cache');
}
