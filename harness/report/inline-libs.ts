// The UMD builds of vega, vega-lite and vega-embed, read from node_modules and made safe to
// inline in a <script> element, so a report opens from file:// with no network.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const resolveFromHere = createRequire(import.meta.url).resolve;

/** Packages' export maps hide build/; resolve an exported file and look beside it. */
const LIBS = [
  { name: 'vega', anchor: 'vega/vega-schema.json', file: 'vega.min.js' },
  { name: 'vega-lite', anchor: 'vega-lite/vega-lite-schema.json', file: 'vega-lite.min.js' },
  { name: 'vega-embed', anchor: 'vega-embed', file: 'vega-embed.min.js' },
] as const;

/**
 * Makes script text safe inside <script>…</script>: the HTML parser ends the element at any
 * `</script` and treats `<!--` specially. `<\/` and `<\!` mean the same in JS strings and
 * regexes, which is the only place minified code contains them.
 */
export function escapeScriptText(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

let cache: Array<{ name: string; version: string; js: string }> | null = null;

export function inlineLibraries(): Array<{ name: string; version: string; js: string }> {
  if (cache) return cache;
  cache = LIBS.map((lib) => {
    let file: string;
    try {
      file = path.join(path.dirname(resolveFromHere(lib.anchor)), lib.file);
    } catch (err) {
      throw new Error(`report: cannot find the ${lib.name} package (${err instanceof Error ? err.message : String(err)}); run npm ci`);
    }
    let js: string;
    try {
      js = readFileSync(file, 'utf8');
    } catch {
      throw new Error(`report: ${file} is missing; expected the UMD build of ${lib.name} there`);
    }
    const pkgJson = JSON.parse(readFileSync(path.join(path.dirname(path.dirname(file)), 'package.json'), 'utf8')) as { version?: string };
    // The map is not shipped with the report; a dangling reference only makes devtools fetch it.
    js = js.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    return { name: lib.name, version: pkgJson.version ?? 'unknown', js: escapeScriptText(js) };
  });
  return cache;
}
