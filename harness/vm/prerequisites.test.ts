import { describe, expect, it } from 'vitest';
import { checkVmPrerequisites, findExecutable } from './prerequisites.ts';

describe('VM prerequisites', () => {
  it('names every missing tool and the exact apt-get command', async () => {
    const err = (await checkVmPrerequisites({ searchPath: ['/nonexistent-dir'] }).catch((e: Error) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    for (const tool of ['qemu-system-x86_64', 'busybox', 'mkfs.ext4', 'e2fsck', 'debugfs']) expect(err.message).toContain(tool);
    expect(err.message).toContain('apt-get install -y qemu-system-x86 busybox-static e2fsprogs');
  });

  it('passes on this machine (the VM tests need the tools installed)', async () => {
    await expect(checkVmPrerequisites()).resolves.toBeUndefined();
    expect(findExecutable('qemu-system-x86_64')).toMatch(/\/qemu-system-x86_64$/);
  });
});
