// Copying directories out of a real ext4 image (made with mkfs.ext4, files put in with
// debugfs -w): contents byte for byte, holes kept as holes, an absent directory reported.
import { execa } from 'execa';
import { readFileSync, statSync, writeFileSync, truncateSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../../test/requirements.ts';
import { createFileDisk } from '../../vm/disk.ts';
import { findExecutable } from '../../vm/prerequisites.ts';
import { extractDirs, parseLeafExtents } from './extract.ts';

let work: string;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-extract-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

async function debugfsWrite(image: string, request: string): Promise<void> {
  const r = await execa('debugfs', ['-w', '-R', request, image]);
  expect(r.stderr).not.toMatch(/not found|error/i);
}

describe('extractDirs', () => {
  it('copies every regular file of the directories, byte for byte, holes kept; an absent directory is null', async (ctx) => {
    for (const t of ['mkfs.ext4', 'debugfs']) if (!findExecutable(t)) missingRequirement(ctx, `${t} (apt-get install -y e2fsprogs)`);
    const disk = await createFileDisk(path.join(work, 'disk.img'), 64);
    const sparse = path.join(work, 'sparse.bin');
    writeFileSync(sparse, Buffer.alloc(4096, 0x11));
    truncateSync(sparse, 10 * 1024 * 1024);
    const fh = await fs.open(sparse, 'r+');
    await fh.write(Buffer.alloc(8192, 0x22), 0, 8192, 5 * 1024 * 1024 + 100);
    await fh.close();
    const big = Buffer.alloc(300_001);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    writeFileSync(path.join(work, 'big.bin'), big);
    writeFileSync(path.join(work, 'small.txt'), '0\n1\nt 0 42\n');
    await debugfsWrite(disk.path, 'mkdir /broker-1');
    await debugfsWrite(disk.path, 'mkdir /broker-1/t-0');
    await debugfsWrite(disk.path, `write ${sparse} /broker-1/t-0/00000000000000000000.index`);
    await debugfsWrite(disk.path, `write ${path.join(work, 'big.bin')} /broker-1/t-0/00000000000000000000.log`);
    await debugfsWrite(disk.path, `write ${path.join(work, 'small.txt')} /broker-1/t-0/high-watermark-checkpoint`);
    await debugfsWrite(disk.path, 'mkdir /broker-1/t-0/sub');

    const dest = path.join(work, 'out');
    const got = await extractDirs(disk.path, ['/data/broker-1/t-0', '/data/broker-1/t-1'], dest);
    expect(got.get('/data/broker-1/t-1')).toBeNull();
    expect(got.get('/data/broker-1/t-0')!.map((f) => f.name).sort()).toEqual(['00000000000000000000.index', '00000000000000000000.log', 'high-watermark-checkpoint']);
    const out = (n: string) => path.join(dest, 't-0', n);
    expect(readFileSync(out('00000000000000000000.log')).equals(big)).toBe(true);
    expect(readFileSync(out('high-watermark-checkpoint'), 'utf8')).toBe('0\n1\nt 0 42\n');
    expect(readFileSync(out('00000000000000000000.index')).equals(readFileSync(sparse))).toBe(true);
    // 10 MiB long, about 12 KiB of data: still sparse.
    expect(statSync(out('00000000000000000000.index')).blocks * 512).toBeLessThan(256 * 1024);
  }, 60_000);

  it('reads leaf extents (skipping index levels, marking unwritten ones)', () => {
    const lines = [
      'Level Entries       Logical        Physical Length Flags',
      ' 0/ 1   1/  1     0 - 4294967295  33000             4294967296',
      ' 1/ 1   1/  2     0 -  1023   8993 -  10016   1024 ',
      ' 1/ 1   2/  2  2048 -  2055  14337 -  14344      8 Uninit',
    ];
    expect(parseLeafExtents(lines)).toEqual([
      { logical: 0, physical: 8993, length: 1024, uninit: false },
      { logical: 2048, physical: 14337, length: 8, uninit: true },
    ]);
  });
});
