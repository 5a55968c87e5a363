import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moduleDepends, planModules } from './kernel-modules.ts';

let dir: string;

// A module file as far as the planner cares: an ELF-ish blob whose .modinfo carries depends=.
const ko = (name: string, deps: string[]): Buffer =>
  Buffer.concat([Buffer.from('\x7fELF....'), Buffer.from(`\0license=GPL\0depends=${deps.join(',')}\0name=${name}\0vermagic=6.1\0`)]);

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-modules-'));
  const put = async (rel: string, data: Buffer): Promise<void> => {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), data);
  };
  await put('kernel/drivers/virtio/virtio_ring.ko', ko('virtio_ring', []));
  await put('kernel/drivers/virtio/virtio.ko', ko('virtio', []));
  await put('kernel/drivers/virtio/virtio_pci.ko', ko('virtio_pci', ['virtio_ring', 'virtio_pci_modern_dev', 'virtio']));
  await put('kernel/drivers/virtio/virtio_pci_modern_dev.ko', ko('virtio_pci_modern_dev', []));
  await put('kernel/drivers/block/virtio_blk.ko.gz', gzipSync(ko('virtio_blk', ['virtio', 'virtio_ring'])));
  await put('kernel/drivers/net/virtio_net.ko', ko('virtio_net', ['virtio_ring', 'virtio', 'net_failover']));
  await put('kernel/drivers/net/net_failover.ko', ko('net_failover', ['failover']));
  await fs.writeFile(path.join(dir, 'modules.builtin'), 'kernel/net/core/failover.ko\nkernel/drivers/char/virtio_console.ko\n');
});

afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('kernel module plan', () => {
  it('reads depends= from .modinfo', () => {
    expect(moduleDepends(ko('x', ['a', 'b-c']))).toEqual(['a', 'b_c']);
    expect(moduleDepends(ko('x', []))).toEqual([]);
    expect(moduleDepends(Buffer.from('no modinfo'))).toEqual([]);
  });

  it('orders dependencies first, skips built-ins and absent optional modules, decompresses .ko.gz', async () => {
    const plan = await planModules(dir);
    expect(plan.load.map((m) => m.name)).toEqual(['virtio_ring', 'virtio', 'virtio_pci_modern_dev', 'virtio_pci', 'virtio_blk', 'net_failover', 'virtio_net']);
    expect(plan.builtin).toEqual(['virtio_console', 'failover']);
    expect(plan.absent).toEqual(['virtio_pci_legacy_dev']);
    expect(moduleDepends(plan.load.find((m) => m.name === 'virtio_blk')!.data)).toEqual(['virtio', 'virtio_ring']);
  });

  it('fails naming a missing dependency or an essential module', async () => {
    await fs.writeFile(path.join(dir, 'kernel/drivers/net/virtio_net.ko'), ko('virtio_net', ['virtio', 'vanished']));
    await expect(planModules(dir)).rejects.toThrow(/kernel module vanished \(needed by virtio_net\) is neither in .* nor built in/);
    await fs.rm(path.join(dir, 'kernel/drivers/net/virtio_net.ko'));
    await expect(planModules(dir)).rejects.toThrow(/virtio_net is neither in .* nor built in: the guest would have no network/);
    await expect(planModules(path.join(dir, 'nope'))).rejects.toThrow(/does not exist/);
  });
});
