// The reference is rendered from the registry, and the README's copy is not allowed to drift.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { main } from './settings-command.ts';
import { README_BEGIN, README_END, SETTINGS, renderSettingsText, settingsReference, withSettingsTable } from './index.ts';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');

describe('settings reference', () => {
  it('the README table is the registry rendered (run `make readme-settings` when this fails)', () => {
    const readme = readFileSync(README, 'utf8');
    const fresh = withSettingsTable(readme);
    if (fresh !== readme) {
      throw new Error('README.md: the settings table is stale; regenerate it with `make readme-settings` (node bin/durolab.mjs settings --readme README.md)');
    }
    expect(readme).toContain('| `segment.bytes` | size | 1GiB | 61 bytes .. 2GiB-1 | topic |');
  });

  it('a README without the markers is an error naming the file and the markers', () => {
    expect(() => withSettingsTable('# x\n', 'X.md')).toThrow(`X.md: expected the markers ${README_BEGIN} and ${README_END}`);
    expect(withSettingsTable(`a\n${README_BEGIN}\nold\n${README_END}\nb`)).toMatch(/^a\n<!-- settings:begin[^\n]*\n\| setting \| type \|[\s\S]*\n<!-- settings:end -->\nb$/);
  });

  it('the text names every setting with its type, default, range and scope', () => {
    const text = renderSettingsText();
    for (const s of SETTINGS) expect(text).toContain(`${s.name}=${s.type.type}`);
    expect(text).toContain('segment.bytes=size\n\tRoll a segment at this size.\n\tdefault: 1GiB; range: 61 bytes .. 2GiB-1; unit of a bare number: bytes\n\tapplies to: topic; scenarios may set it');
  });

  it('`durolab settings --json` prints the same as data', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await main(['--json'])).toBe(0);
      const data = JSON.parse(String(log.mock.calls[0][0]));
      expect(data).toEqual(settingsReference());
      expect(data.find((r: { name: string }) => r.name === 'message.max.bytes')).toMatchObject({ type: 'size', default: 1048588, min: 61, max: 2 ** 30, appliesTo: ['broker', 'topic'], scenario: true });
      await expect(main(['--json', '--markdown'])).rejects.toThrow('settings: give at most one of --json, --markdown, --readme');
    } finally {
      log.mockRestore();
    }
  });
});
