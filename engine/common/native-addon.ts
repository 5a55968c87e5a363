// Finding and loading one of the engine's N-API addons (scripts/build-native.mjs builds them
// into dist/<name>.node). The bundle is dist/durolab.mjs, so beside the running file; from the
// sources (engine/<dir>/<file>.ts) two levels up, then dist/. A missing addon is explained by
// dist/<name>.unavailable.txt when the build left one.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type AddonLoad = { module: Record<string, unknown>; file: string; reason: null } | { module: null; file: null; reason: string };

function addonDirs(): string[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return [...new Set([here, path.resolve(here, '../../dist')])];
}

/**
 * Loads dist/<name>.node. `accept` checks what it exports (and may run a known answer) and says
 * what is wrong, or null. The reason, when nothing loads, names every file tried and why.
 */
export function loadNativeAddon(name: string, accept: (mod: Record<string, unknown>, file: string) => string | null): AddonLoad {
  const require = createRequire(import.meta.url);
  const tried: string[] = [];
  for (const dir of addonDirs()) {
    const file = path.join(dir, `${name}.node`);
    if (!fs.existsSync(file)) {
      const why = path.join(dir, `${name}.unavailable.txt`);
      tried.push(fs.existsSync(why) ? `${file} was not built: ${fs.readFileSync(why, 'utf8').trim()}` : `${file} does not exist`);
      continue;
    }
    try {
      const mod = require(file) as Record<string, unknown>;
      const wrong = accept(mod, file);
      if (wrong === null) return { module: mod, file, reason: null };
      tried.push(`${file} ${wrong}`);
    } catch (e) {
      tried.push(`${file} does not load: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return { module: null, file: null, reason: tried.join('; ') };
}
