// `durolab settings`: the registry's settings and the client settings, as text, data and
// Markdown; README.md's generated copy is not allowed to drift.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { allSettingsMarkdown, main } from './settings-command.ts';
import { settingsReference, withSettingsTable } from '../../engine/settings/reference.ts';
import { CLIENT_SETTINGS } from '../scenario/settings.ts';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');

async function printed(argv: string[]): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    expect(await main(argv)).toBe(0);
    return log.mock.calls.map((c) => String(c[0])).join('\n');
  } finally {
    log.mockRestore();
  }
}

describe('durolab settings', () => {
  it('the README tables are the registries rendered (run `make readme-settings` when this fails)', () => {
    const readme = readFileSync(README, 'utf8');
    if (withSettingsTable(readme, 'README.md', allSettingsMarkdown()) !== readme) {
      throw new Error('README.md: the settings tables are stale; regenerate them with `make readme-settings` (node bin/durolab.mjs settings --readme README.md)');
    }
    expect(readme).toContain('| `segment.bytes` | size | 1GiB | 61 bytes .. 2GiB-1 | topic |');
    expect(readme).toContain('| `replication.factor` | cluster.replicationFactor |');
  });

  it('lists every client setting beside the registry, in the text, the data and the tables', async () => {
    const text = await printed([]);
    const data = JSON.parse(await printed(['--json'])) as Array<{ name: string; type: string; defaultText: string; help: string }>;
    const md = await printed(['--markdown']);
    expect(data.slice(0, settingsReference().length)).toEqual(settingsReference());
    for (const [name, s] of Object.entries(CLIENT_SETTINGS)) {
      expect(text).toContain(`${name}=client\n\t`);
      expect(data.find((r) => r.name === name)).toMatchObject({ type: 'client', defaultText: s.defaultText, help: s.help });
      expect(md).toContain(`| \`${name}\` | `);
    }
    expect(text).toContain('driver=client\n\tThe client driver that produces and reads back in this cell');
    await expect(main(['--json', '--markdown'])).rejects.toThrow('settings: give at most one of --json, --markdown, --readme');
  });
});
