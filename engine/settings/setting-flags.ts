// Registry settings as engine CLI flags (`durolab engine write --segment-bytes 1MiB`): the
// flag's name, its help line and its parser all come from the setting, so an engine command
// names the settings it takes and nothing else.
import { getSetting } from './registry.ts';
import type { SettingValue } from './values.ts';

/** `--segment-bytes` for segment.bytes (or the setting's own `flag`). */
export function settingFlag(name: string): string {
  const s = getSetting(name);
  return `--${s.flag ?? s.name.replaceAll('.', '-')}`;
}

/** node:util parseArgs options for these settings' flags. */
export function settingFlagOptions(names: readonly string[]): Record<string, { type: 'string' }> {
  return Object.fromEntries(names.map((n) => [settingFlag(n).slice(2), { type: 'string' as const }]));
}

const PLACEHOLDER: Record<string, string> = { enum: 'MODE', flush: 'POLICY', boolean: 'BOOL', acks: 'ACKS', size: 'N', duration: 'T' };

/** Help lines: flag, setting, meaning, accepted values, default. */
export function settingFlagsHelp(names: readonly string[], width = 28): string {
  return names
    .map((n) => {
      const s = getSetting(n);
      const def = s.default === undefined ? '' : `; default ${s.type.display(s.default)}`;
      return `  ${`${settingFlag(n)} ${PLACEHOLDER[s.type.type] ?? 'N'}`.padEnd(width)}${s.name}: ${s.help} (${s.type.range}${def})`;
    })
    .join('\n');
}

/** The given flags' values, parsed and bounded by the registry, by setting name; an error names the flag and the accepted form. */
export function parseSettingFlags(values: Record<string, unknown>, names: readonly string[]): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const n of names) {
    const flag = settingFlag(n);
    const text = values[flag.slice(2)];
    if (typeof text !== 'string') continue;
    const s = getSetting(n);
    const v = s.type.parse(text);
    if (v === undefined) throw new Error(`${flag} ${JSON.stringify(text)}: expected ${s.type.expected}`);
    out[n] = v;
  }
  return out;
}
