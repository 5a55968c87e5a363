// The reference is rendered from the registry (docs/settings.md's copy, with the client settings,
// is checked by harness/docs/docs.test.ts).
import { describe, expect, it } from 'vitest';
import { SETTINGS, renderSettingsText } from './index.ts';

describe('settings reference', () => {
  it('the text names every setting with its type, default, range and scope', () => {
    const text = renderSettingsText();
    for (const s of SETTINGS) expect(text).toContain(`${s.name}=${s.type.type}`);
    expect(text).toContain('segment.bytes=size\n\tRoll a segment at this size.\n\tdefault: 1GiB; range: 61 bytes .. 2GiB-1; unit of a bare number: bytes\n\tapplies to: topic; scenarios may set it');
  });
});
