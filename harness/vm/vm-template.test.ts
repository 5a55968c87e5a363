// The template key: a saved guest is resumed only by a VM of the same shape (image files,
// memory, agent port, kernel arguments, disk size and cache mode); anything else boots. And
// the pruning of the template directory.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExecutable } from './prerequisites.ts';
import { findTemplate, pruneTemplates, templateKey, templatePath, type TemplateSpec } from './vm-template.ts';

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

describe('VM templates', () => {
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

  it('keeps the newest saved guests and removes what an interrupted save left once it is an hour old', async () => {
    const cache = path.join(dir, 'templates');
    await fs.mkdir(cache, { recursive: true });
    const now = Date.now();
    const files: Array<[string, number]> = [
      ['a.state', 3],
      ['a.serial.log', 3],
      ['b.state', 4],
      ['b.serial.log', 4],
      ['c.state', 5],
      ['c.serial.log', 5],
      ['c.1-ff.partial', 120],
      ['c.1-ff.disk', 120],
      ['d.2-ee.partial', 1],
    ];
    for (const [name, minutesAgo] of files) {
      const f = path.join(cache, name);
      await fs.writeFile(f, name);
      const t = new Date(now - minutesAgo * 60_000);
      await fs.utimes(f, t, t);
    }
    await pruneTemplates(cache, 2, now);
    // Newest two states stay with their logs; the third goes; a save still under way (1 minute) stays.
    expect((await fs.readdir(cache)).sort()).toEqual(['a.serial.log', 'a.state', 'b.serial.log', 'b.state', 'd.2-ee.partial']);
  });
});
