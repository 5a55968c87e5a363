// `durolab settings`: the reference of every setting (fio HOWTO style), as JSON with --json,
// as the README's markdown table with --markdown, or rewriting that table in place with --readme.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseCommandFlags } from '../common/flags.ts';
import { renderSettingsMarkdown, renderSettingsText, settingsReference, withSettingsTable } from './reference.ts';

const HELP = `usage: durolab settings [--json | --markdown | --readme FILE]

Every setting a scenario, a broker/controller config file (--config, --set) or an engine flag
can name: Kafka's name, type, default, accepted range, where it applies, and what it means.

  --json          the same as data (one object per setting)
  --markdown      the README's table
  --readme FILE   rewrite the table between the settings markers of FILE, e.g. README.md
                  (\`make readme-settings\` does this)
  -h, --help      this text`;

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags('settings', argv, { json: { type: 'boolean' }, markdown: { type: 'boolean' }, readme: { type: 'string' } }, HELP)?.values;
  if (!values) return 0;
  const chosen = [values.json, values.markdown, values.readme !== undefined].filter(Boolean).length;
  if (chosen > 1) throw new Error('settings: give at most one of --json, --markdown, --readme');
  if (values.readme !== undefined) {
    const file = values.readme;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`--readme ${file}: cannot read: ${(e as Error).message}`);
    }
    const next = withSettingsTable(text, file);
    if (next !== text) writeFileSync(file, next);
    console.log(next === text ? `${file}: settings table already up to date` : `${file}: settings table regenerated`);
    return 0;
  }
  if (values.json) console.log(JSON.stringify(settingsReference(), null, 2));
  else if (values.markdown) console.log(renderSettingsMarkdown());
  else console.log(renderSettingsText());
  return 0;
}
