import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviceForPath } from './device.ts';
import { collectEnvironment, describeMemoryReturn } from './environment.ts';

describe('collectEnvironment', () => {
  it('describes cpu, kernel, filesystem and device of a temp dir in under 2 s', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'durolab-env-'));
    try {
      const t0 = performance.now();
      const env = await collectEnvironment(dir);
      const ms = performance.now() - t0;
      const info = await deviceForPath(dir);
      console.log(`collectEnvironment took ${ms.toFixed(0)} ms:`, env);
      expect(ms).toBeLessThan(2000);
      expect(env.dataDir).toBe(dir);
      expect(env.cpu).not.toBe('unknown');
      expect(env.cpu.length).toBeGreaterThan(0);
      expect(env.cores).toBeGreaterThanOrEqual(1);
      expect(env.memoryBytes).toBe(os.totalmem());
      expect(env.kernel).toBe(os.release());
      expect(env.os.length).toBeGreaterThan(0);
      expect(env.node).toBe(process.version);
      expect(env.hostname).toBe(os.hostname());
      expect(env.filesystem.startsWith(`${info.fsType} at ${info.mountPoint}`)).toBe(true);
      expect(env.device.startsWith(info.device as string)).toBe(true);
      expect(env.device).toMatch(/write cache: /);
      expect(env.memoryReturn).toMatch(/^(no virtio balloon|virtio balloon without free page reporting|virtio-balloon free page reporting \(virtio)/);
      expect(env.note).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('notes a data dir that does not exist yet and a tmpfs one without a device', async () => {
    const env = await collectEnvironment('/dev/shm/durolab-not-yet/data');
    expect(env.filesystem).toMatch(/^tmpfs at \/dev\/shm/);
    expect(env.device).toMatch(/^none \(tmpfs has no block device\)/);
    expect(env.note).toMatch(/does not exist yet; filesystem facts are those of \/dev\/shm/);
    expect(env.note).toMatch(/no block device/);
  });

  it('names free page reporting from the balloon\'s negotiated features and the reporting order', async () => {
    const root = mkdtempSync(join(os.tmpdir(), 'durolab-sysfs-'));
    try {
      expect(await describeMemoryReturn(root)).toBe('no virtio balloon: freed memory stays with this machine');
      const dev = join(root, 'bus/virtio/drivers/virtio_balloon/virtio0');
      mkdirSync(dev, { recursive: true });
      // Bits 1 and 2 (stats, deflate on OOM), not bit 5.
      writeFileSync(join(dev, 'features'), '0110000000000000\n');
      expect(await describeMemoryReturn(root)).toBe('virtio balloon without free page reporting: freed memory stays with this machine');
      writeFileSync(join(dev, 'features'), '0110010100000000\n');
      expect(await describeMemoryReturn(root)).toMatch(/^virtio-balloon free page reporting \(virtio0\): freed memory goes back to the host/);
      mkdirSync(join(root, 'module/page_reporting/parameters'), { recursive: true });
      writeFileSync(join(root, 'module/page_reporting/parameters/page_reporting_order'), '9\n');
      expect(await describeMemoryReturn(root)).toMatch(/^virtio-balloon free page reporting \(virtio0, blocks of 2 MiB and up\)/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
