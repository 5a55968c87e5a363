import { describe, expect, it, vi } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkOutFile, intFlag, parseByteSize, parseChoice, parseCommandFlags, parseFlags, parseIntFlag, parseList, parseNumberFlag, requireString } from './flags.ts';

describe('parseFlags', () => {
  it('returns typed values, repeatable flags as arrays, and positionals when allowed', () => {
    const { values, positionals } = parseFlags('x', ['--dir', 'd', '--set', 'a=1', '--set', 'b=2', 'pos'], { dir: { type: 'string' }, set: { type: 'string', multiple: true, default: [] } }, true);
    expect(values).toMatchObject({ dir: 'd', set: ['a=1', 'b=2'] });
    expect(positionals).toEqual(['pos']);
  });

  it('names the command and its --help in node errors', () => {
    expect(() => parseFlags('engine write', ['--dri', 'x'], { dir: { type: 'string' } })).toThrow(/^durolab engine write: Unknown option '--dri'.* \(see durolab engine write --help\)$/);
    expect(() => parseFlags('broker', ['extra'], { dir: { type: 'string' } })).toThrow(/^durolab broker: .*extra/);
  });
});

describe('parseCommandFlags', () => {
  it('returns the values when -h is absent', () => {
    expect(parseCommandFlags('x', ['--dir', 'd'], { dir: { type: 'string' } }, 'usage')?.values).toMatchObject({ dir: 'd' });
  });

  it('prints the help and returns null for -h', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(parseCommandFlags('x', ['-h'], { dir: { type: 'string' } }, 'usage: x\n')).toBeNull();
      expect(log.mock.calls).toEqual([['usage: x']]);
    } finally {
      log.mockRestore();
    }
  });

  it('rejects unknown flags and positionals', () => {
    expect(() => parseCommandFlags('x', ['--nope'], { dir: { type: 'string' } }, 'usage')).toThrow(/--nope/);
    expect(() => parseCommandFlags('x', ['extra'], { dir: { type: 'string' } }, 'usage')).toThrow(/extra/);
  });
});

describe('value flags', () => {
  it('intFlag takes the default when absent and checks the range', () => {
    expect(intFlag('--port', undefined, 9092, 0, 65535)).toBe(9092);
    expect(intFlag('--port', '0', 9092, 0, 65535)).toBe(0);
    expect(() => intFlag('--port', '70000', 9092, 0, 65535)).toThrow('--port "70000": expected an integer in [0, 65535]');
    expect(() => intFlag('--rounds', '1.5', 2, 1, 100)).toThrow('--rounds "1.5": expected an integer in [1, 100]');
    expect(() => parseIntFlag('--records', 'ten', 1)).toThrow(/--records "ten": expected an integer in \[1,/);
  });

  it('sizes, numbers, choices, lists and required flags name the flag and the form', () => {
    expect(parseByteSize('--x', '64KiB')).toBe(65536);
    expect(() => parseByteSize('--x', '12 parsecs')).toThrow(/--x "12 parsecs": expected a whole number of bytes in \[1, /);
    expect(parseNumberFlag('--s', '0.5', 0.01, 600)).toBe(0.5);
    expect(() => parseNumberFlag('--s', 'forever', 0.01, 600)).toThrow('--s "forever": expected a number in [0.01, 600]');
    expect(parseChoice('--v', 'on', ['on', 'off'])).toBe('on');
    expect(() => parseChoice('--v', 'maybe', ['on', 'off'])).toThrow('--v "maybe": expected one of on, off');
    expect(parseList('--l', 'a, b', (s) => s.toUpperCase())).toEqual(['A', 'B']);
    expect(() => parseList('--l', ' , ', (s) => s)).toThrow('--l " , ": expected a comma-separated list');
    expect(() => requireString('engine dump', '--dir', undefined, 'the partition directory')).toThrow('durolab engine dump: --dir is required (the partition directory)');
  });
});

describe('checkOutFile', () => {
  it('refuses a directory or a path under a file at once, and resolves a file path', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-out-file-'));
    try {
      const file = path.join(dir, 'a-file');
      fs.writeFileSync(file, 'x');
      expect(() => checkOutFile('--out', dir)).toThrow(`--out ${dir}: is a directory (expected the path of a file to write)`);
      expect(() => checkOutFile('--out', path.join(file, 'x.json'))).toThrow(`--out ${path.join(file, 'x.json')}: a parent of this path is a file, not a directory`);
      expect(checkOutFile('--out', file)).toBe(file);
      expect(checkOutFile('--out', path.join(dir, 'new', 'x.json'))).toBe(path.join(dir, 'new', 'x.json'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
