// Finding scenario files by name (`acks-all` -> scenarios/acks-all.yaml) or path, and
// listing what is available.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { repoRootAbove } from '../../engine/common/repo-root.ts';
import { suggest } from './errors.ts';
import { overlaySettings, resolveSettings, type ResolvedSettings } from '../model/settings.ts';
import type { MatrixCell, Scenario } from '../model/scenario.ts';
import { compileScenario } from './validate.ts';

const EXTENSIONS = ['.yaml', '.yml'];

function hasScenarios(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && readdirSync(dir).some((f) => EXTENSIONS.includes(path.extname(f)));
  } catch {
    return false;
  }
}

/**
 * `scenarios/` under the working directory, else the repository's (found from this module, so
 * it also works from the bundle in dist/).
 */
export function defaultScenariosDir(): string {
  const cwdDir = path.resolve('scenarios');
  if (hasScenarios(cwdDir)) return cwdDir;
  const root = repoRootAbove(path.dirname(fileURLToPath(import.meta.url)));
  const repoDir = root === null ? null : path.join(root, 'scenarios');
  return repoDir !== null && hasScenarios(repoDir) ? repoDir : cwdDir;
}

/** Path as shown to the user: relative to the working directory when inside it. */
function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

function stem(file: string): string {
  return path.basename(file).replace(/\.ya?ml$/, '');
}

export function listScenarios(dir: string = defaultScenariosDir()): Array<{ name: string; file: string; question: string }> {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries
    .filter((f) => EXTENSIONS.includes(path.extname(f)))
    .sort()
    .map((f) => {
      const file = path.join(dir, f);
      let question = '';
      try {
        const q: unknown = parseDocument(readFileSync(file, 'utf8')).get('question');
        if (typeof q === 'string') question = q.trim();
      } catch {
        question = '';
      }
      return { name: stem(f), file: displayPath(file), question };
    });
}

function looksLikePath(s: string): boolean {
  return s.includes('/') || s.includes(path.sep) || EXTENSIONS.includes(path.extname(s));
}

export function loadScenario(
  nameOrPath: string,
  opts: { scenariosDir?: string; durationSec?: number; repeat?: number; driver?: string } = {},
): Scenario {
  let file: string;
  if (looksLikePath(nameOrPath)) {
    file = path.resolve(nameOrPath);
    if (!existsSync(file)) throw new Error(`scenario file ${nameOrPath} does not exist`);
    if (statSync(file).isDirectory()) throw new Error(`scenario file ${nameOrPath} is a directory: expected a scenario name or a .yaml file (scenario check --dir D checks a directory)`);
  } else {
    const dir = opts.scenariosDir ?? defaultScenariosDir();
    const found = EXTENSIONS.map((ext) => path.join(dir, nameOrPath + ext)).find((f) => existsSync(f));
    if (!found) {
      const available = listScenarios(dir).map((s) => s.name);
      const close = suggest(nameOrPath, available);
      throw new Error(
        `unknown scenario '${nameOrPath}' (no ${displayPath(path.join(dir, nameOrPath))}.yaml)` +
          (close ? `; did you mean '${close}'?` : '') +
          (available.length ? `; available: ${available.join(', ')}` : `; no scenarios in ${displayPath(dir)}`),
      );
    }
    file = found;
  }
  const text = readFileSync(file, 'utf8');
  return compileScenario(text, displayPath(file), { defaultName: stem(file), durationSec: opts.durationSec, repeat: opts.repeat, driver: opts.driver });
}

/** Everything in force for one cell, typed: base settings overlaid by the cell's params. */
export function cellSettings(scenario: Scenario, cell: MatrixCell): ResolvedSettings {
  return resolveSettings(overlaySettings(scenario.settings, cell.params), scenario.cluster.minInsyncReplicas);
}
