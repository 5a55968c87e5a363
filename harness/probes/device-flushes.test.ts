// The device's own flush count (/proc/diskstats field 18) over a window, the figure set beside a
// broker's self-reported flush counter: 40 appends each made durable with fdatasync (the size
// changes, so ext4 commits its journal with a cache flush) must show as >= 40 device flushes.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProbeSampler, deviceFlushesBetween, probeNow } from './index.ts';

describe('deviceFlushesBetween', () => {
  it('counts at least one device flush per fdatasync of an append in a window around them', async () => {
    const dir = mkdtempSync(path.join(os.homedir(), '.durolab-flush-test-'));
    const sampler = new ProbeSampler({ dataDir: dir, intervalMs: 20 });
    try {
      await sampler.start();
      if (sampler.device === null) throw new Error(`${dir} is on no block device: no diskstats flush counter to test`);
      // The window reaches 100 ms (5 samples) past both ends of the fdatasyncs: counters are
      // interpolated between samples, so an edge inside the loop would cut off some of them.
      const from = probeNow();
      await new Promise((r) => setTimeout(r, 100));
      const fd = openSync(path.join(dir, 'f'), 'w');
      for (let i = 0; i < 40; i++) {
        writeSync(fd, Buffer.alloc(4096, i));
        fdatasyncSync(fd);
      }
      closeSync(fd);
      await new Promise((r) => setTimeout(r, 100));
      const to = probeNow();
      await new Promise((r) => setTimeout(r, 60));
      const series = await sampler.stop();
      const inWindow = deviceFlushesBetween(series, from, to);
      expect(inWindow).not.toBeNull();
      expect(inWindow!).toBeGreaterThanOrEqual(40);
      // A window before any sample, or an inverted one, has nothing to say.
      expect(deviceFlushesBetween(series, from - 60_000, from - 50_000)).toBeNull();
      expect(deviceFlushesBetween({ ...series, samples: [] }, from, to)).toBeNull();
    } finally {
      await sampler.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
