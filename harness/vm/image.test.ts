// The image build: cached by the hash of its inputs, and holding what a guest needs.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVmImage } from './image.ts';
import { defaultVmCacheDir } from './paths.ts';
import { requireExecutable } from './prerequisites.ts';

let cacheDir: string;
// Without the CLI bundle: other work in this checkout edits the CLI's sources at any moment,
// which would (rightly) change the hash between two calls. vm.vm.test.ts boots the CLI bundle.
const cliEntry = null;

beforeAll(async () => {
  // A private cache, so this file's builds never replace an image another test file boots from;
  // the downloaded kernel packages are shared (26 MB, fetched once).
  cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-vm-cache-'));
  const shared = path.join(defaultVmCacheDir(), 'kernels');
  await fs.mkdir(shared, { recursive: true });
  await fs.symlink(shared, path.join(cacheDir, 'kernels'));
});

afterAll(async () => {
  if (cacheDir) await fs.rm(cacheDir, { recursive: true, force: true });
});

describe('buildVmImage', () => {
  it('builds once, then returns the cached image with the same hash quickly', async () => {
    const logs: string[] = [];
    const t0 = performance.now();
    const first = await buildVmImage({ cacheDir, cliEntry, log: (s) => logs.push(s) });
    const firstMs = performance.now() - t0;
    const t1 = performance.now();
    const second = await buildVmImage({ cacheDir, cliEntry });
    const secondMs = performance.now() - t1;
    console.log(`[vm-image] first build ${Math.round(firstMs)} ms (${first.cached ? 'cached' : 'built'}), cached call ${Math.round(secondMs)} ms, initrd ${(first.initrdBytes / 2 ** 20).toFixed(0)} MiB, kernel ${first.kernelVersion} (${first.kernelSource})`);
    expect(first.cached).toBe(false);
    expect(logs.some((l) => l.includes(`built ${first.hash}`))).toBe(true);
    expect(second.cached).toBe(true);
    expect(second.hash).toBe(first.hash);
    expect(second.initrd).toBe(first.initrd);
    expect(secondMs).toBeLessThan(firstMs);
    expect(first.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(first.nodeVersion).toBe(process.version);
    expect(first.modules).toEqual([
      'virtio_ring', 'virtio', 'virtio_pci_modern_dev', 'virtio_pci_legacy_dev', 'virtio_pci',
      'virtio_blk', 'virtio_console', 'failover', 'net_failover', 'virtio_net',
    ].filter((m) => first.modules.includes(m)));
    expect(first.modules).toContain('virtio_blk');
    expect(first.packages).toEqual(expect.arrayContaining(['@node-rs/crc32', '@node-rs/crc32-linux-x64-gnu']));

    // force rebuilds the same inputs into the same hash.
    const forced = await buildVmImage({ cacheDir, cliEntry, force: true });
    expect(forced.cached).toBe(false);
    expect(forced.hash).toBe(first.hash);
    expect(existsSync(forced.initrd)).toBe(true);
  }, 120_000);

  it('holds /init, busybox, node with its libraries, the modules, the bundles and node_modules, uncompressed', async () => {
    const image = await buildVmImage({ cacheDir, cliEntry });
    const head = Buffer.alloc(6);
    const fh = await fs.open(image.initrd, 'r');
    await fh.read(head, 0, 6, 0);
    await fh.close();
    expect(head.toString('latin1')).toBe('070701'); // newc cpio, not gzip/zstd
    const list = (await execa(requireExecutable('busybox'), ['cpio', '-t'], { inputFile: image.initrd })).stdout.split('\n');
    for (const p of [
      'init',
      'bin/sh',
      'usr/bin/busybox',
      'usr/bin/node',
      'lib64/ld-linux-x86-64.so.2',
      'durolab/modules/virtio_blk.ko',
      'durolab/dist/vm-agent.mjs',
      'durolab/dist/vm-append-workload.mjs',
      'durolab/node_modules/@node-rs/crc32/package.json',
      'durolab/node_modules/@node-rs/crc32-linux-x64-gnu/crc32.linux-x64-gnu.node',
    ]) {
      expect(list, p).toContain(p);
    }
    expect(list.includes('durolab/dist/durolab.mjs')).toBe(false);
    expect(image.hasCli).toBe(false);
    const manifest = JSON.parse(await fs.readFile(path.join(image.dir, 'image.json'), 'utf8')) as { inputs: Record<string, string> };
    expect(Object.keys(manifest.inputs)).toEqual(expect.arrayContaining(['kernel', 'busybox', 'node', 'init', 'bundle:durolab/dist/vm-agent.mjs']));
  }, 60_000);
});

describe('durolab vm-image', () => {
  it('prints help, rejects a bad --kernel, and builds an image with the CLI', async () => {
    const { main } = await import('./image-command.ts');
    const lines: string[] = [];
    const orig = console.log;
    console.log = (s: string) => lines.push(s);
    try {
      expect(await main(['--help'])).toBe(0);
      expect(lines.join('\n')).toMatch(/usage: durolab vm-image \[--force\]/);
      await expect(main(['--kernel', 'mine'])).rejects.toThrow(/--kernel: expected auto, host or debian-package, got 'mine'/);
      lines.length = 0;
      expect(await main(['--json', '--cache-dir', cacheDir])).toBe(0);
    } finally {
      console.log = orig;
    }
    const image = JSON.parse(lines.join('\n')) as { hash: string; hasCli: boolean; initrd: string };
    expect(image.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(image.hasCli).toBe(true); // the command bundles harness/cli/main.ts
    expect(image.initrd).toBe(path.join(cacheDir, 'images', image.hash, 'initrd.cpio'));
  }, 60_000);
});
