import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { dropFromPageCache } from './bench-broker-probe.ts';

/** Bytes of the file in the page cache (util-linux fincore). */
async function residentBytes(file: string): Promise<number> {
  const r = await execa('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES', file]);
  return Number(r.stdout.trim());
}

describe('bench-broker page cache drop', () => {
  it('writes back and drops every file of the given partition directories, skips missing ones, and leaves the files intact', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'durolab-drop-'));
    try {
      const dir = path.join(root, 'bench-1-0');
      mkdirSync(dir);
      const log = path.join(dir, '00000000000000000000.log');
      const data = Buffer.alloc(8 * 2 ** 20, 7);
      writeFileSync(log, data);
      writeFileSync(path.join(dir, '00000000000000000000.index'), Buffer.alloc(4096, 1));
      expect(await residentBytes(log)).toBe(data.length);
      const ms = await dropFromPageCache([dir, path.join(root, 'no-such-partition')]);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(await residentBytes(log)).toBe(0);
      expect(await residentBytes(path.join(dir, '00000000000000000000.index'))).toBe(0);
      expect(readFileSync(log).equals(data)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
