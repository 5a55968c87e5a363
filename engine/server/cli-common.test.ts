import { describe, expect, it } from 'vitest';
import { intFlag, parseCommandFlags } from './cli-common.ts';

describe('parseCommandFlags', () => {
  it('returns typed values, repeatable flags as arrays', () => {
    const v = parseCommandFlags(['--dir', 'd', '--set', 'a=1', '--set', 'b=2'], { dir: { type: 'string' }, set: { type: 'string', multiple: true, default: [] } }, 'usage');
    expect(v).toMatchObject({ dir: 'd', set: ['a=1', 'b=2'] });
  });

  it('prints the help and returns null for -h', () => {
    const logged: unknown[] = [];
    const log = console.log;
    console.log = (...a: unknown[]) => void logged.push(...a);
    try {
      expect(parseCommandFlags(['-h'], { dir: { type: 'string' } }, 'usage: x')).toBeNull();
    } finally {
      console.log = log;
    }
    expect(logged).toEqual(['usage: x']);
  });

  it('rejects unknown flags and positionals', () => {
    expect(() => parseCommandFlags(['--nope'], { dir: { type: 'string' } }, 'usage')).toThrow(/--nope/);
    expect(() => parseCommandFlags(['extra'], { dir: { type: 'string' } }, 'usage')).toThrow(/extra/);
  });
});

describe('intFlag', () => {
  it('takes the default when absent and checks the range', () => {
    expect(intFlag('port', undefined, 9092, 0, 65535)).toBe(9092);
    expect(intFlag('port', '0', 9092, 0, 65535)).toBe(0);
    expect(() => intFlag('port', '70000', 9092, 0, 65535)).toThrow('--port 70000: expected an integer in [0, 65535]');
    expect(() => intFlag('rounds', '0', 2, 1, 100)).toThrow('--rounds 0: expected an integer in [1, 100]');
    expect(() => intFlag('rounds', '1.5', 2, 1, 100)).toThrow('--rounds 1.5: expected an integer in [1, 100]');
  });
});
