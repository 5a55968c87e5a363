// Solo: dirtyKiB reads the machine-wide dirty page count, which other suites running beside it would move.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dirtyKiB, writeBack } from './bench-broker-probe.ts';

describe('bench-broker write-back settle', () => {
  it('writeBack writes the dirty pages of a directory\'s filesystem back, and dirtyKiB sees them go', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-writeback-'));
    try {
      writeFileSync(path.join(dir, 'dirty.dat'), Buffer.alloc(64 * 2 ** 20, 1));
      const before = dirtyKiB();
      expect(before).not.toBeNull();
      // Another process may dirty pages meanwhile; 64 MiB of ours must show and then be gone.
      expect(before!).toBeGreaterThanOrEqual(32 * 1024);
      const ms = await writeBack(dir);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(dirtyKiB()!).toBeLessThan(before! - 32 * 1024);
      await expect(writeBack(path.join(dir, 'missing'))).rejects.toThrow(/sync -f .*missing exited with 1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
