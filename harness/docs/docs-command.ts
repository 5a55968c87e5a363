// `durolab docs [--check]`: writes the generated blocks of docs/*.md (reference-docs.ts: the
// scenario-file reference, the settings, the fault kinds, the systems) between their markers;
// --check only says which are stale (exit 1), as CI's test does. `--findings RESULTS_DIR`
// regenerates docs/findings.md's measured tables from the newest run of each scenario there.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { GENERATED_BLOCKS } from './reference-docs.ts';
import { findingsMarkdown } from './findings.ts';

const HELP = `usage: durolab docs [--check] [--findings RESULTS_DIR]

Writes the generated blocks of docs/*.md from the code: the scenario-file reference (the zod
schema), the settings (the registries), the fault kinds and the target systems.

  --check                 write nothing; exit 1 naming each stale block (\`make test\` checks this)
  --findings RESULTS_DIR  also regenerate docs/findings.md's tables from the newest run of each
                          scenario in RESULTS_DIR (e.g. results)
  -h, --help              this text`;

export const begin = (name: string) => `<!-- generated:${name} (by \`make docs\` from the code; do not edit) -->`;
export const end = (name: string) => `<!-- /generated:${name} -->`;

/** `text` with each generated block it holds rewritten by `blocks`; throws on a block with no end marker or an unknown name. */
export function withGeneratedBlocks(text: string, file: string, blocks: Readonly<Record<string, () => string>>): string {
  let out = text;
  for (const m of [...text.matchAll(/<!-- generated:([a-z-]+) /g)]) {
    const name = m[1]!;
    const render = blocks[name];
    if (!render) throw new Error(`${file}: unknown generated block '${name}' (known: ${Object.keys(blocks).join(', ')})`);
    const from = out.indexOf(begin(name));
    const to = out.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`${file}: expected the markers ${begin(name)} and ${end(name)} around the block '${name}'`);
    out = `${out.slice(0, from + begin(name).length)}\n${render()}\n${out.slice(to)}`;
  }
  return out;
}

/** docs/*.md whose generated blocks differ from the code's, written unless `check`. */
export function refreshDocs(docsDir: string, check: boolean, blocks: Readonly<Record<string, () => string>> = docBlocks(docsDir)): string[] {
  const stale: string[] = [];
  for (const name of readdirSync(docsDir).filter((f) => f.endsWith('.md')).sort()) {
    const file = path.join(docsDir, name);
    const text = readFileSync(file, 'utf8');
    const next = withGeneratedBlocks(text, file, blocks);
    if (next === text) continue;
    stale.push(file);
    if (!check) writeFileSync(file, next);
  }
  return stale;
}

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags('docs', argv, { check: { type: 'boolean' }, findings: { type: 'string' } }, HELP)?.values;
  if (!values) return 0;
  const docsDir = path.join(repoRoot(), 'docs');
  const findings = values.findings !== undefined ? await findingsMarkdown(values.findings, keepFindings(docsDir)()) : null;
  const stale = refreshDocs(docsDir, values.check === true, docBlocks(docsDir, findings));
  if (values.check) {
    for (const f of stale) console.log(`${f}: generated blocks are stale; run \`make docs\``);
    return stale.length ? 1 : 0;
  }
  console.log(stale.length ? `regenerated: ${stale.join(', ')}` : 'docs/: generated blocks already up to date');
  return 0;
}

/** The blocks docs/ holds: the references from the code, and the findings as given or (null) as they stand, since they depend on local results. */
export function docBlocks(docsDir: string, findings: string | null = null): Readonly<Record<string, () => string>> {
  return { ...GENERATED_BLOCKS, findings: findings !== null ? () => findings : keepFindings(docsDir) };
}

/** The findings block as it stands in docs/findings.md (rewritten only with --findings). */
function keepFindings(docsDir: string): () => string {
  return () => {
    const text = readFileSync(path.join(docsDir, 'findings.md'), 'utf8');
    return text.slice(text.indexOf(begin('findings')) + begin('findings').length + 1, text.indexOf(end('findings')) - 1);
  };
}
