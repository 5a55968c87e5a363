// The template key: a saved guest is resumed only by a VM of the same shape (image files,
// memory, agent port, kernel arguments, disk size and cache mode); anything else boots.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExecutable } from './prerequisites.ts';
import { findTemplate, templateKey, templatePath, type TemplateSpec } from './vm-template.ts';

let dir: string;
let spec: TemplateSpec;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-template-key-'));
  await fs.writeFile(path.join(dir, 'vmlinuz'), 'kernel');
  await fs.writeFile(path.join(dir, 'initrd.cpio'), 'initrd');
  spec = {
    image: { hash: 'abc', kernel: path.join(dir, 'vmlinuz'), initrd: path.join(dir, 'initrd.cpio') } as TemplateSpec['image'],
    memoryMiB: 512,
    agentPort: 7070,
    kernelArgs: [],
    disk: { sizeMiB: 256, cacheMode: 'writeback' },
  };
});

afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('VM template key', () => {
  it('is stable for one shape and changes with each part of it', async () => {
    if (!findExecutable('qemu-system-x86_64')) throw new Error('qemu-system-x86_64 is not installed (make test installs it)');
    const key = await templateKey(spec);
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(await templateKey({ ...spec })).toBe(key);
    const variants: TemplateSpec[] = [
      { ...spec, memoryMiB: 1024 },
      { ...spec, agentPort: 7071 },
      { ...spec, kernelArgs: ['loglevel=7'] },
      { ...spec, disk: { sizeMiB: 512, cacheMode: 'writeback' } },
      { ...spec, disk: { sizeMiB: 256, cacheMode: 'writethrough' } },
      { ...spec, image: { ...spec.image, hash: 'abd' } },
    ];
    const keys = await Promise.all(variants.map((v) => templateKey(v)));
    expect(new Set([key, ...keys]).size).toBe(variants.length + 1);
    // Another kernel file under the same image hash (a test's bogus kernel) is another shape.
    await fs.writeFile(path.join(dir, 'other-vmlinuz'), 'not a kernel');
    expect(await templateKey({ ...spec, image: { ...spec.image, kernel: path.join(dir, 'other-vmlinuz') } })).not.toBe(key);
    expect(path.basename(templatePath(key))).toBe(`${key}.state`);
    expect(await findTemplate({ ...spec, image: { ...spec.image, hash: 'no-such-image' } })).toBeUndefined();
  });
});
