// The settings reference, rendered from the registry: text in the manner of fio's HOWTO
// (`durolab settings`), data (`--json`) and the README's table (`--markdown`).
import { SETTINGS, type Setting } from './registry.ts';

export interface SettingReference {
  name: string;
  aliases: string[];
  type: string;
  unit: string | null;
  /** Normalized default (bytes, ms, ...), null when the kernel or another setting supplies it. */
  default: string | number | boolean | null;
  /** The default as written in scenarios and cell ids (1GiB, 7d). */
  defaultText: string;
  range: string;
  min: number | null;
  max: number | null;
  appliesTo: string[];
  scenario: boolean;
  help: string;
  why: string | null;
}

function defaultText(s: Setting): string {
  if (s.default !== undefined) return s.type.display(s.default);
  return s.appliesTo.includes('host-sysctl') ? "kernel's" : 'none';
}

export function settingsReference(settings: readonly Setting[] = SETTINGS): SettingReference[] {
  return settings.map((s) => ({
    name: s.name,
    aliases: [...(s.aliases ?? [])],
    type: s.type.type,
    unit: s.unit ?? null,
    default: s.default ?? null,
    defaultText: defaultText(s),
    range: s.type.range,
    min: s.type.bounds?.min ?? null,
    max: s.type.bounds?.max ?? null,
    appliesTo: [...s.appliesTo],
    scenario: s.scenario,
    help: s.help,
    why: s.why ?? null,
  }));
}

export function renderSettingsText(settings: readonly Setting[] = SETTINGS): string {
  const blocks = settingsReference(settings).map((r) => {
    const lines = [`${r.name}=${r.type}${r.aliases.length ? `  (also: ${r.aliases.join(', ')})` : ''}`];
    lines.push(`\t${r.help.charAt(0).toUpperCase()}${r.help.slice(1)}.`);
    lines.push(`\tdefault: ${r.defaultText}; range: ${r.range}${r.unit ? `; unit of a bare number: ${r.unit}` : ''}`);
    lines.push(`\tapplies to: ${r.appliesTo.join(', ')}${r.scenario ? '; scenarios may set it' : r.appliesTo.includes('vm-disk') ? "; only in the scenario's vm.disk: block" : ''}`);
    if (r.why) lines.push(`\tbounds: ${r.why}.`);
    return lines.join('\n');
  });
  return blocks.join('\n\n');
}

const cell = (s: string): string => s.replaceAll('|', '\\|');

export function renderSettingsMarkdown(settings: readonly Setting[] = SETTINGS): string {
  const rows = settingsReference(settings).map(
    (r) =>
      `| \`${r.name}\`${r.scenario ? '' : r.appliesTo.includes('vm-disk') ? ' ²' : ' ¹'} | ${r.type} | ${cell(r.defaultText)} | ${cell(r.range)} | ${r.appliesTo.join(', ')} | ${cell(r.help)} |`,
  );
  return [
    '| setting | type | default | range | applies to | meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    '¹ broker/controller config only (`--config`, `--set`); not settable in a scenario.',
    '² only in the scenario\'s `vm.disk:` block (a list or map); the other `vm.disk.*` settings go there too, or per cell in `settings:` / `matrix:`.',
  ].join('\n');
}
