// The reference is rendered from the registry (the README's copy, with the client settings, is
// checked by harness/cli/settings-command.test.ts).
import { describe, expect, it } from 'vitest';
import { README_BEGIN, README_END, SETTINGS, renderSettingsText, withSettingsTable } from './index.ts';

describe('settings reference', () => {
  it('a README without the markers is an error naming the file and the markers', () => {
    expect(() => withSettingsTable('# x\n', 'X.md')).toThrow(`X.md: expected the markers ${README_BEGIN} and ${README_END}`);
    expect(withSettingsTable(`a\n${README_BEGIN}\nold\n${README_END}\nb`)).toMatch(/^a\n<!-- settings:begin[^\n]*\n\| setting \| type \|[\s\S]*\n<!-- settings:end -->\nb$/);
  });

  it('the text names every setting with its type, default, range and scope', () => {
    const text = renderSettingsText();
    for (const s of SETTINGS) expect(text).toContain(`${s.name}=${s.type.type}`);
    expect(text).toContain('segment.bytes=size\n\tRoll a segment at this size.\n\tdefault: 1GiB; range: 61 bytes .. 2GiB-1; unit of a bare number: bytes\n\tapplies to: topic; scenarios may set it');
  });
});
