// `durolab settings`: the registry's settings and the client settings, as text, data and
// Markdown (docs/settings.md's copy is checked by harness/docs/docs.test.ts).
import { describe, expect, it, vi } from 'vitest';
import { main } from './settings-command.ts';
import { settingsReference } from '../../engine/settings/reference.ts';
import { CLIENT_SETTINGS } from '../scenario/settings.ts';

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
    await expect(main(['--json', '--markdown'])).rejects.toThrow('settings: give at most one of --json, --markdown');
  });
});
