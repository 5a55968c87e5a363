import { describe, expect, it } from 'vitest';
import { parseDuration, parseSize } from './units.ts';

// The scenario-facing cases live in harness/scenario/matrix.test.ts; these pin what the engine
// CLI relies on (parseByteSize in engine/common/flags.ts).
describe('parseSize', () => {
  it('reads bare numbers and units in any case, 1024- and 1000-based', () => {
    expect(parseSize('4096')).toBe(4096);
    expect(parseSize(' 64 kib ')).toBe(65536);
    expect(parseSize('1m')).toBe(1048576);
    expect(parseSize('1MB')).toBe(1_000_000);
    expect(parseSize('1TiB')).toBe(2 ** 40);
    expect(parseSize('2b')).toBe(2);
  });

  it('rejects negative, fractional-byte and unknown-unit sizes', () => {
    expect(parseSize('-1')).toBeUndefined();
    expect(parseSize('0.5')).toBeUndefined();
    expect(parseSize('1.3KiB')).toBeUndefined();
    expect(parseSize('3 pages')).toBeUndefined();
    expect(parseSize('')).toBeUndefined();
  });
});

describe('parseDuration', () => {
  it('converts into the requested unit', () => {
    expect(parseDuration('30s', 1)).toBe(30_000);
    expect(parseDuration('250ms', 10)).toBe(25);
    expect(parseDuration('2min', 60_000)).toBe(2);
    expect(parseDuration('2 fortnights', 1)).toBeUndefined();
  });
});
