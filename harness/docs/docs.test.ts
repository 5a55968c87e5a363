// The front door stays true: docs/'s generated blocks are the code's (run `make docs` when this
// fails), every schema field is documented, every fault kind has its section, every relative
// link in README.md and docs/ resolves (file and heading), and every `durolab` command, flag and
// `make` target they show exists (asked of the built CLI's --help and the Makefile).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { refreshDocs, withGeneratedBlocks, begin, end } from './docs-command.ts';
import { schemaFields } from './schema-fields.ts';
import { SCENARIO_FIELD_HELP } from './scenario-field-help.ts';
import { FAULT_KINDS } from '../faults/registry.ts';
import { TARGET_KINDS } from '../targets/registry.ts';
import { headingSlug } from '../publish/docs-pages.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = path.join(ROOT, 'docs');
const PAGES = ['README.md', ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');
/** Commands whose first word is a subcommand with its own flags and --help. */
const SUBCOMMANDS = new Set(['engine', 'scenario', 'kafka']);

function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.+)$/.exec(line);
    if (m) out.add(headingSlug(m[1]!));
  }
  return out;
}

/** Code spans and fenced lines, where commands are shown. */
function codeOf(text: string): string[] {
  const out: string[] = [];
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      fence = !fence;
      continue;
    }
    if (fence) out.push(line);
    else for (const m of line.matchAll(/`([^`]+)`/g)) out.push(m[1]!);
  }
  return out;
}

describe('docs', () => {
  it('the generated blocks are the code rendered (`make docs` rewrites them)', () => {
    const stale = refreshDocs(DOCS, true);
    expect(stale, `stale: ${stale.join(', ')}; run \`make docs\``).toEqual([]);
    expect(read('docs/settings.md')).toContain('| `replication.factor` | cluster.replicationFactor |');
    expect(read('docs/scenarios.md')).toContain('| `workload.extraTrials` | an integer from 0 to 20 | `2` | all |');
  });

  it('a generated block without its end marker, or of an unknown name, is an error naming the file', () => {
    expect(() => withGeneratedBlocks(`${begin('settings')}\nx\n`, 'X.md', { settings: () => 'y' })).toThrow(`X.md: expected the markers ${begin('settings')} and ${end('settings')}`);
    expect(() => withGeneratedBlocks(`${begin('nope')}\n${end('nope')}`, 'X.md', {})).toThrow("X.md: unknown generated block 'nope'");
    expect(withGeneratedBlocks(`a\n${begin('settings')}\nold\n${end('settings')}\nb`, 'X.md', { settings: () => 'new' })).toBe(`a\n${begin('settings')}\nnew\n${end('settings')}\nb`);
  });

  it('every field of the scenario schema has its meaning, and no meaning names a field the schema lacks', () => {
    const paths = schemaFields().map((f) => f.path);
    expect(paths.filter((p) => !(p in SCENARIO_FIELD_HELP))).toEqual([]);
    expect(Object.keys(SCENARIO_FIELD_HELP).filter((p) => !paths.includes(p))).toEqual([]);
    expect(paths).toContain('faults[].when.between');
  });

  it('faults.md describes every fault kind, and systems.md every target', () => {
    const faults = anchorsOf(read('docs/faults.md'));
    expect(FAULT_KINDS.filter((k) => !faults.has(k))).toEqual([]);
    const systems = read('docs/systems.md');
    for (const k of TARGET_KINDS) expect(systems).toContain(`### \`${k}\`: `);
  });

  it('every relative link of README.md and docs/ resolves, file and heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = m[1]!;
        if (/^[a-z]+:/.test(href)) continue;
        const [file, anchor] = href.split('#') as [string, string | undefined];
        const target = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
        if (!existsSync(path.join(ROOT, target))) {
          broken.push(`${page}: ${href} (no ${target})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) broken.push(`${page}: ${href} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every durolab command and flag, make target and shipped scenario the pages show exists', async () => {
    const cli = (args: string[]) => execa('node', [path.join(ROOT, 'bin/durolab.mjs'), ...args], { cwd: ROOT, reject: false });
    const top = (await cli(['--help'])).stdout;
    const commands = new Set([...top.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1]!));
    expect(commands.has('bench')).toBe(true);
    const makefile = read('Makefile');
    const targets = new Set([...makefile.matchAll(/^([a-z][a-z-]*):/gm)].map((m) => m[1]!));
    const scenarios = new Set(readdirSync(path.join(ROOT, 'scenarios')).map((f) => f.replace(/\.yaml$/, '')));
    const shown = new Map<string, Set<string>>();
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const code of codeOf(read(page))) {
        // A command line: the span or the fenced line starts with it (prose like `durolab and Kafka` is not one).
        const m = /^\s*(?:\$ )?(?:sudo )?(?:durolab|node bin\/durolab\.mjs) ([a-z][a-z-]*)((?: +(?!#)[^\s#;|)]+)*)/.exec(code);
        if (m) {
          const [cmd, rest] = [m[1]!, m[2] ?? ''];
          if (!commands.has(cmd)) {
            problems.push(`${page}: durolab ${cmd} is no command`);
          } else {
            // `durolab engine write --dir D`: the flags are the subcommand's, asked of its own --help.
            const sub = /^ ([a-z][a-z0-9-]*)(?: |$)/.exec(rest)?.[1];
            if (cmd === 'bench' && sub && !scenarios.has(sub)) problems.push(`${page}: durolab bench ${sub}: no scenarios/${sub}.yaml`);
            const key = sub && SUBCOMMANDS.has(cmd) ? `${cmd} ${sub}` : cmd;
            const flags = shown.get(key) ?? new Set<string>();
            for (const f of rest.matchAll(/(?:^| )(--[a-z][a-z-]*)/g)) flags.add(f[1]!);
            shown.set(key, flags);
          }
        }
        for (const m of code.matchAll(/(?:^|[\s;(])make ([a-z][a-z-]*)((?: +[A-Z]+=[^\s]+)*)/g)) {
          if (!targets.has(m[1]!)) problems.push(`${page}: make ${m[1]} is no Makefile target`);
          const scenario = /SCENARIO=([a-z0-9-]+)(?:\s|$)/.exec(m[2] ?? '')?.[1];
          if (scenario && !scenarios.has(scenario)) problems.push(`${page}: make ${m[1]} SCENARIO=${scenario}: no scenarios/${scenario}.yaml`);
        }
      }
    }
    for (const [cmd, flags] of shown) {
      const [name, sub] = cmd.split(' ');
      // A subcommand is one its command's help names.
      if (sub && !new RegExp(`(^|\\s|\\|)${sub}(\\s|\\||$)`, 'm').test((await cli([name!, '--help'])).stdout)) problems.push(`durolab ${cmd}: no such subcommand in \`durolab ${name} --help\``);
      if (flags.size === 0) continue;
      const help = (await cli([...cmd.split(' '), '--help'])).stdout;
      // A whole flag, not a part of a longer one (--dir is not --results-dir).
      for (const f of flags) if (f !== '--help' && !new RegExp(`(^|[^a-z-])${f}(?![a-z-])`, 'm').test(help)) problems.push(`durolab ${cmd} ${f}: not in \`durolab ${cmd} --help\``);
    }
    expect(problems).toEqual([]);
    expect(shown.has('recount')).toBe(true);
  }, 120_000);
});
