// Data disks and offline inspection, without QEMU: the files are put in with debugfs -w.
import { execa } from 'execa';
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileDisk } from './disk.ts';
import { DiskSnapshot, GuestFileNotFoundError, listDir, pathOnDisk, readFileFromDisk } from './inspect.ts';
import { requireExecutable } from './prerequisites.ts';

let work: string;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-disk-test-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

async function debugfsWrite(disk: string, request: string): Promise<void> {
  const r = await execa(requireExecutable('debugfs'), ['-w', '-R', request, disk]);
  expect(r.stderr).not.toMatch(/not found|error/i);
}

describe('file disks', () => {
  it('creates a sparse ext4 image, also past 2 GiB (no 32-bit shift overflow)', async () => {
    const disk = await createFileDisk(path.join(work, 'big.img'), 3072);
    const st = statSync(disk.path);
    expect(st.size).toBe(3072 * 1024 * 1024);
    expect(st.blocks * 512).toBeLessThan(st.size / 4); // sparse: only metadata is allocated
    const dumpe2fs = await execa('dumpe2fs', ['-h', disk.path], { reject: false });
    expect(dumpe2fs.stdout).toMatch(/Filesystem features:.*has_journal/);
    expect(disk.qemuDriveArgs()).toEqual(['-drive', `file=${disk.path},format=raw,if=virtio,cache=writeback`]);
    await expect(createFileDisk(path.join(work, 'tiny.img'), 1)).rejects.toThrow(/sizeMiB must be an integer >= 16/);
  }, 30_000);

  it('reads files and lists directories offline, on a copy, leaving the original untouched', async () => {
    const disk = await createFileDisk(path.join(work, 'data.img'), 64);
    const payload = Buffer.alloc(300_000);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 0xff;
    const src = path.join(work, 'payload.bin');
    await fs.writeFile(src, payload);
    await debugfsWrite(disk.path, 'mkdir /broker');
    await debugfsWrite(disk.path, `write ${src} /broker/00000000000000000000.log`);
    const before = await fs.readFile(disk.path);

    // Guest paths under the /data mount and on-disk paths name the same file.
    expect((await readFileFromDisk(disk, '/data/broker/00000000000000000000.log')).equals(payload)).toBe(true);
    expect((await readFileFromDisk(disk.path, '/broker/00000000000000000000.log')).equals(payload)).toBe(true);
    expect(await listDir(disk, '/data/broker')).toEqual([
      expect.objectContaining({ name: '00000000000000000000.log', size: payload.length, type: 'file' }),
    ]);
    expect((await listDir(disk, '/data')).map((e) => `${e.name}:${e.type}`)).toEqual(['broker:dir', 'lost+found:dir']);
    await expect(readFileFromDisk(disk, '/data/broker/missing.log')).rejects.toBeInstanceOf(GuestFileNotFoundError);
    await expect(readFileFromDisk(disk, '/data/broker/missing.log')).rejects.toThrow(/does not exist on disk .*data\.img/);

    const snap = await DiskSnapshot.open(disk);
    try {
      expect(await snap.exists('/data/broker/00000000000000000000.log')).toBe(true);
      expect(await snap.exists('/data/nope')).toBe(false);
      expect((await snap.fsck()).clean).toBe(true);
    } finally {
      await snap.close();
    }
    expect((await fs.readFile(disk.path)).equals(before)).toBe(true);
    await expect(readFileFromDisk(path.join(work, 'absent.img'), '/x')).rejects.toThrow(/absent\.img does not exist/);
  }, 30_000);

  it('maps guest paths under /data onto the disk root', () => {
    expect(pathOnDisk('/data')).toBe('/');
    expect(pathOnDisk('/data/a/b')).toBe('/a/b');
    expect(pathOnDisk('/a')).toBe('/a');
    expect(pathOnDisk('/database/x')).toBe('/database/x');
    expect(() => pathOnDisk('rel')).toThrow(/must be absolute/);
  });
});
