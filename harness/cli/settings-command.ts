// `durolab settings`: the reference of every setting a scenario can name (fio HOWTO style): the
// registry's (engine/settings/reference.ts: brokers, controller, producer acks, VM disk,
// sysctls) and the load's client settings (harness/scenario/client-settings-reference.ts), as
// text, as JSON with --json, as Markdown tables with --markdown, or rewriting README.md's
// generated block with --readme.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { renderSettingsMarkdown, renderSettingsText, settingsReference, withSettingsTable } from '../../engine/settings/reference.ts';
import { clientSettingsReference, renderClientSettingsMarkdown, renderClientSettingsText } from '../scenario/client-settings-reference.ts';

const HELP = `usage: durolab settings [--json | --markdown | --readme FILE]

Every setting a scenario, a broker/controller config file (--config, --set) or an engine flag
can name: Kafka's name, type, default, accepted range, where it applies, and what it means;
then the client settings a scenario may set or vary (driver, measure, library, ...), which no
broker sees.

  --json          the same as data (one object per setting; client settings have type "client")
  --markdown      the tables
  --readme FILE   rewrite the tables between the settings markers of FILE, e.g. README.md
                  (\`make readme-settings\` does this)
  -h, --help      this text`;

/** Both tables, as README.md's generated block holds them. */
export function allSettingsMarkdown(): string {
  return `${renderSettingsMarkdown()}\n\nClient settings: the load's, set or varied in a scenario like the others; no broker sees them.\n\n${renderClientSettingsMarkdown()}`;
}

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
    const next = withSettingsTable(text, file, allSettingsMarkdown());
    if (next !== text) writeFileSync(file, next);
    console.log(next === text ? `${file}: settings table already up to date` : `${file}: settings table regenerated`);
    return 0;
  }
  if (values.json) console.log(JSON.stringify([...settingsReference(), ...clientSettingsReference()], null, 2));
  else if (values.markdown) console.log(allSettingsMarkdown());
  else console.log(`${renderSettingsText()}\n\n# Client settings (the load's; scenarios may set or vary them; no broker sees them)\n\n${renderClientSettingsText()}`);
  return 0;
}
