// The zygote's warm-up broker (natively here; in a guest by harness/vm/vm.vm.test.ts through
// the template's serial log): it serves its produce and read requests, then leaves no
// directory, no listening socket and no timer behind, and a failure is reported, not thrown.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { warmUpBroker } from './broker-warmup.ts';

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

describe('broker warm-up in the zygote', () => {
  it('produces its batches through a real broker, then removes its directory and closes its listeners', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-warm-test-'));
    process.env.TMPDIR = tmp;
    try {
      const handlesBefore = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
      const r = await warmUpBroker(12);
      expect(r.error).toBeUndefined();
      expect(r.produced).toBe(12);
      expect(r.ms).toBeGreaterThan(0);
      expect(fs.readdirSync(tmp)).toEqual([]);
      // Nothing of the broker keeps running (servers, intervals): the zygote's real broker starts alone.
      await new Promise((res) => setImmediate(res));
      expect(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length).toBeLessThanOrEqual(handlesBefore);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('reports a failure instead of throwing (the zygote still serves, only a colder start)', async () => {
    process.env.TMPDIR = '/nonexistent-durolab-dir';
    const r = await warmUpBroker(3);
    expect(r.produced).toBe(0);
    expect(r.error).toMatch(/ENOENT.*nonexistent-durolab-dir/);
  });
});
