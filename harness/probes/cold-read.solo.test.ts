// The read probes against a known cold read: a 64 MiB file written and fsync'd, the page cache
// dropped (sync; vm.drop_caches=1, as consumer.cache: cold does; root, so under CI=true this
// must run), then read whole: /proc/diskstats must count at least the file's bytes read from its
// device and /proc/vmstat's pgpgin at least as many KiB; read again at once (warm) the device
// reads almost nothing. Solo: it drops the host's page cache.
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { deviceForPath } from '../../engine/common/device.ts';
import { parseDiskstats } from './diskstats.ts';
import { parseVmstat } from './vmstat.ts';

const SIZE = 64 * 2 ** 20;

function readAll(file: string): void {
  const fd = openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    while (readSync(fd, buf, 0, buf.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}

function counters(device: string): { deviceReadBytes: number; pgpginKB: number } {
  const disk = parseDiskstats(readFileSync('/proc/diskstats', 'utf8'), device, Date.now());
  const vm = parseVmstat(readFileSync('/proc/vmstat', 'utf8'), Date.now());
  if (!vm.reads) throw new Error('/proc/vmstat lacks the read counters (pgpgin, pgmajfault, ...)');
  return { deviceReadBytes: disk.sectorsRead * 512, pgpginKB: vm.reads.pgpginKB };
}

describe('read probes on a known cold read', () => {
  it('count a dropped-cache read of 64 MiB as device reads and pgpgin, and a warm re-read as almost none', async () => {
    expect(process.getuid?.(), 'dropping the page cache (vm.drop_caches) needs root').toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'durolab-cold-read-'));
    try {
      const info = await deviceForPath(dir);
      expect(info.device, `no block device under ${dir}: ${info.note}`).not.toBeNull();
      const device = info.device as string;
      const file = join(dir, 'segment.log');
      const fd = openSync(file, 'w');
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < SIZE / chunk.length; i++) {
        chunk.fill(i & 0xff);
        writeSync(fd, chunk);
      }
      fsyncSync(fd);
      closeSync(fd);
      await execa('sync');
      writeFileSync('/proc/sys/vm/drop_caches', '1');
      const before = counters(device);
      readAll(file);
      const cold = counters(device);
      readAll(file);
      const warm = counters(device);
      const coldDevice = cold.deviceReadBytes - before.deviceReadBytes;
      const coldPgpgin = (cold.pgpginKB - before.pgpginKB) * 1024;
      const warmDevice = warm.deviceReadBytes - cold.deviceReadBytes;
      // Other readers on the host may add to the counters, never subtract.
      expect(coldDevice, `device ${device} read ${coldDevice} bytes for a cold 64 MiB read`).toBeGreaterThanOrEqual(SIZE);
      expect(coldPgpgin).toBeGreaterThanOrEqual(SIZE);
      expect(warmDevice, `device ${device} read ${warmDevice} bytes for a warm re-read`).toBeLessThan(SIZE / 16);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
