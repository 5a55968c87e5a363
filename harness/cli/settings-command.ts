// `durolab settings`: the reference of every setting a scenario can name (fio HOWTO style): the
// registry's (engine/settings/reference.ts: brokers, controller, producer acks, VM disk,
// sysctls) and the load's client settings (harness/scenario/client-settings-reference.ts), as
// text, as JSON with --json, or as Markdown tables with --markdown (docs/settings.md holds them,
// written by `make docs`).
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { renderSettingsText, settingsReference } from '../../engine/settings/reference.ts';
import { allSettingsMarkdown, clientSettingsReference, renderClientSettingsText } from '../scenario/client-settings-reference.ts';

export { allSettingsMarkdown };

const HELP = `usage: durolab settings [--json | --markdown]

Every setting a scenario, a broker/controller config file (--config, --set) or an engine flag
can name: Kafka's name, type, default, accepted range, where it applies, and what it means;
then the client settings a scenario may set or vary (driver, measure, library, ...), which no
broker sees.

  --json          the same as data (one object per setting; client settings have type "client")
  --markdown      the tables (docs/settings.md holds them: \`make docs\`)
  -h, --help      this text`;

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags('settings', argv, { json: { type: 'boolean' }, markdown: { type: 'boolean' } }, HELP)?.values;
  if (!values) return 0;
  if (values.json && values.markdown) throw new Error('settings: give at most one of --json, --markdown');
  if (values.json) console.log(JSON.stringify([...settingsReference(), ...clientSettingsReference()], null, 2));
  else if (values.markdown) console.log(allSettingsMarkdown());
  else console.log(`${renderSettingsText()}\n\n# Client settings (the load's; scenarios may set or vary them; no broker sees them)\n\n${renderClientSettingsText()}`);
  return 0;
}
