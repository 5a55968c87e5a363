// The client settings' part of the settings reference (`durolab settings`): the load's settings
// a scenario may set or vary (harness/scenario/settings.ts CLIENT_SETTINGS), which no broker
// sees, beside the registry's (engine/settings/reference.ts). One entry each: what it takes, what
// stands when a cell does not set it, what it changes.
import { renderSettingsMarkdown, type SettingReference } from '../../engine/settings/reference.ts';
import { CLIENT_SETTINGS } from './settings.ts';

export function clientSettingsReference(): SettingReference[] {
  return Object.entries(CLIENT_SETTINGS).map(([name, s]) => ({
    name,
    aliases: [],
    type: 'client',
    unit: null,
    default: null,
    defaultText: s.defaultText,
    range: s.expected,
    min: null,
    max: null,
    appliesTo: ['client'],
    scenario: true,
    help: s.help,
    why: null,
  }));
}

export function renderClientSettingsText(): string {
  return clientSettingsReference()
    .map((r) => [`${r.name}=client`, `\t${r.help.charAt(0).toUpperCase()}${r.help.slice(1)}.`, `\tdefault: ${r.defaultText}; takes: ${r.range}`, '\tapplies to: the load (scenarios may set it; no broker sees it)'].join('\n'))
    .join('\n\n');
}

const cell = (s: string): string => s.replaceAll('|', '\\|');

export function renderClientSettingsMarkdown(): string {
  return [
    '| client setting | default | takes | meaning |',
    '|---|---|---|---|',
    ...clientSettingsReference().map((r) => `| \`${r.name}\` | ${cell(r.defaultText)} | ${cell(r.range)} | ${cell(r.help)} |`),
  ].join('\n');
}

/** Both tables, as README.md's generated block holds them. */
export function allSettingsMarkdown(): string {
  return `${renderSettingsMarkdown()}\n\nClient settings: the load's, set or varied in a scenario like the others; no broker sees them.\n\n${renderClientSettingsMarkdown()}`;
}
