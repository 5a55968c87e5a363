// The append's write step (file-write.ts): the N-API pwrite addon writes exactly what
// fs.writeSync writes and fails exactly as it fails. Real files; the ENOSPC case through the
// whole engine is engine/storage/enospc.test.ts (a full loop-mounted ext4).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../common/repo-root.ts';
import { describePwrite, pwriteImplementation, writeError, writeFully } from './file-write.ts';

const root = repoRoot();
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-pwrite-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function thrown(f: () => void): NodeJS.ErrnoException {
  try {
    f();
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  throw new Error('expected a throw');
}

describe('which write path runs', () => {
  it('is the pwrite addon (CI=true: a missing addon fails here with its reason)', () => {
    const c = pwriteImplementation;
    if (c.name !== 'native') {
      if (process.env.CI === 'true' || process.env.DUROLAB_PWRITE === undefined) throw new Error(`the pwrite addon is not running: ${c.fallbackReason}`);
      expect(c.fallbackReason).toMatch(/DUROLAB_PWRITE/);
      return;
    }
    expect(c.fallbackReason).toBeNull();
    expect(c.detail).toMatch(/^pwrite\(2\) from N-API \(.*pwrite\.node\)$/);
    expect(describePwrite()).toMatch(/^native: pwrite\(2\)/);
  });

  it('falls back to fs.writeSync with its reason when asked (DUROLAB_PWRITE=fs), in a fresh process, and still writes', () => {
    const file = path.join(dir, 'f');
    const script = `import('./engine/storage/file-write.ts').then((m) => { const fd = require('node:fs').openSync(${JSON.stringify(file)}, 'w'); m.writeFully(fd, Buffer.from('abcdef'), 1, 4, 2); console.log(JSON.stringify({ ...m.pwriteImplementation, line: m.describePwrite() })) })`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env: { ...process.env, DUROLAB_PWRITE: 'fs' }, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { name: string; fallbackReason: string; line: string };
    expect(out).toMatchObject({ name: 'fs.writeSync', fallbackReason: 'DUROLAB_PWRITE=fs asks for fs.writeSync' });
    expect(out.line).toBe('fs.writeSync (fallback: DUROLAB_PWRITE=fs asks for fs.writeSync)');
    expect(fs.readFileSync(file)).toEqual(Buffer.from('\0\0bcde'));
  });

  it('refuses an unknown DUROLAB_PWRITE naming the values it takes', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('./engine/storage/file-write.ts').catch((e) => { console.error(e.message); process.exit(2) })`], {
      cwd: root,
      env: { ...process.env, DUROLAB_PWRITE: 'mmap' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/DUROLAB_PWRITE: expected native or fs, found "mmap"/);
  });
});

describe('writeFully', () => {
  it('writes the byte range at the position, from views with a byte offset, and across 1 MiB+', () => {
    const file = path.join(dir, 'seg.log');
    const fd = fs.openSync(file, 'w+');
    try {
      const big = Buffer.alloc(3 * 1024 * 1024 + 17);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      writeFully(fd, big, 0, big.length, 0);
      // A view into the middle of a larger allocation: the addon must honour its byteOffset.
      const backing = Buffer.alloc(8192, 0x41);
      backing.write('hello world', 4000);
      const view = backing.subarray(4000, 4011);
      writeFully(fd, view, 6, 5, big.length);
      // Overwrite inside the file (a DirectWriter rewrites its partial tail block this way).
      writeFully(fd, Buffer.from('XYZ'), 0, 3, 10);
      const got = fs.readFileSync(file);
      const want = Buffer.concat([big, Buffer.from('world')]);
      want.write('XYZ', 10);
      expect(got.length).toBe(want.length);
      expect(got.equals(want)).toBe(true);
      writeFully(fd, Buffer.alloc(4), 0, 0, 0); // nothing to write: no call, no change
      expect(fs.statSync(file).size).toBe(want.length);
    } finally {
      fs.closeSync(fd);
    }
  });

  it("fails as fs.writeSync fails: the same code, errno, syscall and message (a read-only fd: EBADF)", () => {
    const file = path.join(dir, 'ro');
    fs.writeFileSync(file, 'x');
    const fd = fs.openSync(file, 'r');
    try {
      const ours = thrown(() => writeFully(fd, Buffer.from('abc'), 0, 3, 0));
      const node = thrown(() => fs.writeSync(fd, Buffer.from('abc'), 0, 3, 0));
      expect(ours).toMatchObject({ code: 'EBADF', errno: node.errno, syscall: 'write' });
      expect(ours.message).toBe(node.message);
    } finally {
      fs.closeSync(fd);
    }
    expect(writeError(-28)).toMatchObject({ code: 'ENOSPC', errno: -28, syscall: 'write', message: 'ENOSPC: no space left on device, write' });
  });

  it('refuses a range outside the buffer or a bad fd with a RangeError naming it (addon only)', () => {
    if (pwriteImplementation.name !== 'native') return expect(pwriteImplementation.fallbackReason).toMatch(/DUROLAB_PWRITE/);
    const fd = fs.openSync(path.join(dir, 'r'), 'w');
    try {
      expect(() => writeFully(fd, Buffer.alloc(8), 4, 5, 0)).toThrow(/\[offset, offset \+ length\) must lie inside buf/);
      expect(() => writeFully(fd, Buffer.alloc(8), 0, 8, -1)).toThrow(/position must be a non-negative integer/);
      expect(() => writeFully(-1, Buffer.alloc(8), 0, 8, 0)).toThrow(/fd must be an integer/);
      expect(() => writeFully(fd, new Uint16Array(4) as unknown as Buffer, 0, 8, 0)).toThrow(/buf must be a Uint8Array or Buffer/);
      expect(fs.statSync(path.join(dir, 'r')).size).toBe(0);
    } finally {
      fs.closeSync(fd);
    }
  });
});
