// Kept images never fill the results disk: a copy that would leave less than the reserve is not
// made (the reason names the figures), and a copy that runs out of space half-way (ENOSPC from
// cp) leaves no partial file; either way the caller gets a problem, not an exception.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../test/requirements.ts';
import { keepImageCopy, noRoomFor } from './disk-evidence.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-disk-evidence-'));
const small = path.join(work, 'small');
let mounted = false;
afterAll(() => {
  if (mounted) execFileSync('umount', [small]);
  rmSync(work, { recursive: true, force: true });
});

describe('disk evidence on a full results disk', () => {
  it('refuses a copy past the reserve with the figures, and removes a copy cut short by ENOSPC', async (ctx) => {
    if (process.getuid?.() !== 0) missingRequirement(ctx, 'root (mount -t tmpfs)');
    mkdirSync(small, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'durolab-evidence-test', small]);
    mounted = true;
    const image = path.join(work, 'image.img');
    writeFileSync(image, Buffer.alloc(16 * 1024 * 1024, 1));
    const refused = await keepImageCopy(image, small, 'broker-1/cut.img');
    expect(refused).toHaveProperty('problem');
    expect((refused as { problem: string }).problem).toMatch(/copy of .*image\.img to .*broker-1\/cut\.img: 0\.02 GiB needed under .*small, 0\.01 GiB free, and 1\.00 GiB must stay free: not kept/);
    expect(existsSync(path.join(small, 'broker-1', 'cut.img'))).toBe(false);
    expect(noRoomFor(small, 1024, 'x', 0)).toBeNull();
    // A reserve below zero lets the copy start: the disk fills under it.
    const cut = await keepImageCopy(image, small, "broker-1/cut.img", -(1024 ** 3));
    expect((cut as { problem: string }).problem).toMatch(/copy of .* failed: cp --sparse=always .*No space left on device/);
    expect(existsSync(path.join(small, 'broker-1', 'cut.img'))).toBe(false);
  });
});
