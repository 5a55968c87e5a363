import { describe, expect, it } from 'vitest';
import { defaultLogConfig, formatFlushPolicy, parseFlushPolicy, resolveLogConfig } from './index.ts';

describe('log settings', () => {
  it('defaults are Kafka\'s', () => {
    expect(defaultLogConfig()).toEqual({
      io: 'buffered',
      flush: { kind: 'never' },
      sync: 'fdatasync',
      segmentBytes: 1073741824,
      segmentMs: 604800000,
      segmentIndexBytes: 10485760,
      indexIntervalBytes: 4096,
      maxBatchBytes: 1048588,
      verifyBatches: true,
      fsyncError: 'fail-stop',
    });
    expect(resolveLogConfig({})).toEqual(defaultLogConfig());
  });

  it('parses and formats flush policies, and names the value and the forms on bad input', () => {
    for (const s of ['never', 'per-batch', 'messages:1', 'messages:10000', 'ms:1', 'ms:1000']) {
      expect(formatFlushPolicy(parseFlushPolicy(s))).toBe(s);
    }
    expect(parseFlushPolicy('messages:5')).toEqual({ kind: 'messages', every: 5 });
    expect(parseFlushPolicy('ms:250')).toEqual({ kind: 'ms', every: 250 });
    // One spelling per policy (the registry's grammar): a leading zero is refused everywhere.
    for (const bad of ['', 'always', 'messages:0', 'messages:01', 'ms:007', 'ms:-5', 'ms:1.5', 'messages:', 'per_batch', 'ms:99999999999999999999']) {
      expect(() => parseFlushPolicy(bad)).toThrow(new RegExp(`flush ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid: expected never\\|per-batch\\|messages:N\\|ms:T`));
    }
  });

  it('rejects out-of-range settings with an error naming the setting, Kafka\'s name and the range', () => {
    expect(() => resolveLogConfig({ segmentBytes: 10 })).toThrow(/segmentBytes \(segment\.bytes\) must be an integer in \[61, 2147483647\], got 10/);
    expect(() => resolveLogConfig({ segmentBytes: 2 ** 31 })).toThrow(/segment\.bytes/);
    expect(() => resolveLogConfig({ segmentMs: 0 })).toThrow(/segmentMs \(segment\.ms\)/);
    expect(() => resolveLogConfig({ segmentIndexBytes: 8 })).toThrow(/segmentIndexBytes \(segment\.index\.bytes\) must be an integer in \[24,/);
    expect(() => resolveLogConfig({ indexIntervalBytes: -1 })).toThrow(/index\.interval\.bytes/);
    expect(() => resolveLogConfig({ maxBatchBytes: 1.5 })).toThrow(/maxBatchBytes \(message\.max\.bytes\)/);
    expect(() => resolveLogConfig({ io: 'mmap' as never })).toThrow(/log setting io must be one of buffered, direct, dsync, got "mmap"/);
    expect(() => resolveLogConfig({ sync: 'sync' as never })).toThrow(/sync must be one of fsync, fdatasync/);
    expect(() => resolveLogConfig({ flush: { kind: 'messages', every: 0 } })).toThrow(/log setting flush .* expected never\|per-batch\|messages:N\|ms:T/);
    expect(() => resolveLogConfig({ segmentbytes: 5 } as never)).toThrow(/unknown log setting "segmentbytes": expected one of io, flush/);
    expect(() => resolveLogConfig({ verifyBatches: 'yes' as never })).toThrow(/verifyBatches must be true or false/);
  });

  it('accepts a flush policy as text (from scenario files) and leaves undefined fields at their defaults', () => {
    const c = resolveLogConfig({ flush: 'messages:100' as never, segmentBytes: undefined, io: 'direct' });
    expect(c.flush).toEqual({ kind: 'messages', every: 100 });
    expect(c.segmentBytes).toBe(1073741824);
    expect(c.io).toBe('direct');
  });
});
