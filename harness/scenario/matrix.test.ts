import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SETTINGS, cellId, cellSettings, compileScenario, expandMatrix, flushPolicy, formatDurationMs, formatSize, parseDuration, parseSize } from './index.ts';
import { scenarioRefusal } from './scenario-test-helpers.ts';

function compile(text: string) {
  return compileScenario(text, 'test.yaml', { defaultName: 'test' });
}

const issues = (text: string) => scenarioRefusal(compile, text).issues;

describe('matrix expansion', () => {
  it('is the cartesian product in file order, first key slowest', () => {
    const s = compile(`question: q\ncluster: { brokers: 3 }\nmatrix:\n  flush: [never, per-batch]\n  acks: [1, all]\n`);
    expect(s.matrix.map((c) => c.id)).toEqual([
      'flush=never,acks=1',
      'flush=never,acks=all',
      'flush=per-batch,acks=1',
      'flush=per-batch,acks=all',
    ]);
    expect(s.matrix[3]).toEqual({ id: 'flush=per-batch,acks=all', label: 'flush per batch, acks=all', params: { flush: 'per-batch', acks: 'all' } });
  });

  it('ids follow the file order of keys, not a fixed one', () => {
    const s = compile(`question: q\ncluster: { brokers: 3 }\nmatrix:\n  acks: [1]\n  flush: [never]\n`);
    expect(s.matrix.map((c) => c.id)).toEqual(['acks=1,flush=never']);
  });

  it('ids do not depend on how a value was spelled', () => {
    const a = compile(`question: q\nmatrix:\n  segment.bytes: [65536, 1GiB]\n  segment.ms: [604800000, 250]\n  acks: [-1]\n`);
    const b = compile(`question: q\nmatrix:\n  segment.bytes: [64KiB, 1073741824]\n  segment.ms: [7d, 250ms]\n  acks: [all]\n`);
    expect(a.matrix.map((c) => c.id)).toEqual(b.matrix.map((c) => c.id));
    expect(a.matrix[0].id).toBe('segment.bytes=64KiB,segment.ms=7d,acks=all');
    expect(a.matrix[1].params).toEqual({ 'segment.bytes': 65536, 'segment.ms': 250, acks: 'all' });
  });

  it('exclude removes matching cells and include adds labelled ones', () => {
    const s = compile(`question: q
settings: { sync: fsync }
matrix:
  io: [buffered, direct, dsync]
  flush: [never, per-batch]
  exclude:
    - { io: dsync, flush: per-batch }
    - { io: direct }
  include:
    - { io: direct, flush: per-batch, sync: fdatasync, label: O_DIRECT + fdatasync }
`);
    expect(s.matrix.map((c) => [c.id, c.label])).toEqual([
      ['io=buffered,flush=never', 'buffered, no flush'],
      ['io=buffered,flush=per-batch', 'buffered, flush per batch'],
      ['io=dsync,flush=never', 'O_DSYNC, no flush'],
      ['io=direct,flush=per-batch,sync=fdatasync', 'O_DIRECT + fdatasync'],
    ]);
    expect(cellSettings(s, s.matrix[1]).sync).toBe('fsync');
    expect(cellSettings(s, s.matrix[3])).toMatchObject({ io: 'direct', sync: 'fdatasync', flush: { kind: 'per-batch' } });
  });

  it('a matrix of only include cells, and no matrix at all', () => {
    const s = compile(`question: q\nmatrix:\n  include:\n    - { label: defaults }\n    - { acks: 1 }\n`);
    expect(s.matrix).toEqual([
      { id: 'base', label: 'defaults', params: {} },
      { id: 'acks=1', label: 'acks=1', params: { acks: 1 } },
    ]);
    expect(compile('question: q\n').matrix).toEqual([{ id: 'base', label: 'base settings', params: {} }]);
  });

  it('refuses duplicate values, duplicate include cells and exclude keys outside the matrix', () => {
    const found = issues(`question: q
matrix:
  io: [buffered, direct]
  segment.bytes: [64KiB, 65536]
  include:
    - { io: direct, segment.bytes: 64KiB }
  exclude:
    - { flush: never }
`);
    expect(found.map((i) => [i.path, i.expected, i.found])).toEqual([
      ['matrix.segment.bytes[1]', 'distinct values', '64KiB a second time'],
      ['matrix.include[0]', 'a cell not already in the matrix', "a second 'io=direct,segment.bytes=64KiB'"],
      ['matrix.exclude[0].flush', 'a matrix key (io, segment.bytes)', "'flush'"],
    ]);
    expect(found.map((i) => i.line)).toEqual([4, 6, 8]);
  });

  it('refuses a matrix that excludes every cell, and one that is too large', () => {
    expect(expandMatrix({ axes: [['io', ['direct']]], include: [], exclude: [{ io: 'direct' }] }).problems).toEqual([
      { path: ['matrix'], expected: 'at least one cell', found: 'every cell excluded' },
    ]);
    const big = Array.from({ length: 40 }, (_, i) => i + 1);
    const r = expandMatrix({ axes: [['vm.dirty_ratio', big], ['vm.dirty_background_ratio', big]], include: [], exclude: [] });
    expect(r.problems[0]).toMatchObject({ expected: 'at most 1000 cells', found: '1600 cells' });
  });
});

describe('cellSettings', () => {
  it('overlays the cell on base settings with Kafka defaults underneath', () => {
    const s = compile(`question: q
target: vm
cluster: { brokers: 3, minInsyncReplicas: 2 }
settings:
  flush: ms:250
  segment.bytes: 256KiB
  vm.dirty_ratio: 20
matrix:
  min.insync.replicas: [1, 3]
  vm.dirty_bytes: [16MiB]
`);
    expect(cellSettings(s, s.matrix[1])).toEqual({
      io: 'buffered',
      flush: { kind: 'ms', every: 250 },
      sync: 'fdatasync',
      acks: 'all',
      segmentBytes: 262144,
      segmentMs: 604_800_000,
      segmentIndexBytes: 10 * 1024 * 1024,
      indexIntervalBytes: 4096,
      maxBatchBytes: 1048588,
      minInsyncReplicas: 3,
      replicaLagTimeMaxMs: 30_000,
      uncleanLeaderElectionEnable: false,
      eligibleLeaderReplicas: true,
      // the cell's dirty_bytes replaces the base dirty_ratio, as writing it does in the kernel
      sysctls: { 'vm.dirty_bytes': 16 * 1024 * 1024 },
      values: {
        io: 'buffered',
        flush: 'ms:250',
        sync: 'fdatasync',
        acks: 'all',
        'fetch.transfer': 'sendfile',
        'segment.bytes': 262144,
        'segment.ms': 604_800_000,
        'segment.index.bytes': 10 * 1024 * 1024,
        'index.interval.bytes': 4096,
        'message.max.bytes': 1048588,
        'log.fsync.error': 'fail-stop',
        'min.insync.replicas': 3,
        'replica.lag.time.max.ms': 30_000,
        'unclean.leader.election.enable': false,
        'eligible.leader.replicas': true,
        'vm.dirty_bytes': 16 * 1024 * 1024,
      },
    });
    expect(s.cluster.replicationFactor).toBe(3);
  });

  it('takes min ISR from the cluster when no setting overrides it', () => {
    const s = compile(`question: q\ncluster: { brokers: 3, replicationFactor: 3, minInsyncReplicas: 2 }\n`);
    expect(cellSettings(s, s.matrix[0]).minInsyncReplicas).toBe(2);
  });
});

describe('values', () => {
  it('flush policies', () => {
    expect(flushPolicy('never')).toEqual({ kind: 'never' });
    expect(flushPolicy('per-batch')).toEqual({ kind: 'per-batch' });
    expect(flushPolicy('messages:1000')).toEqual({ kind: 'messages', every: 1000 });
    expect(flushPolicy('ms:10')).toEqual({ kind: 'ms', every: 10 });
    expect(() => flushPolicy('ms:')).toThrow(/flush "ms:" is not valid: expected never\|per-batch\|messages:N\|ms:T/);
    expect(() => flushPolicy('messages:01')).toThrow(/no leading zeros/);
  });

  it('sizes and durations', () => {
    expect(parseSize('64KiB')).toBe(65536);
    expect(parseSize('1GiB')).toBe(2 ** 30);
    expect(parseSize('500MB')).toBe(500_000_000);
    expect(parseSize('1.5KiB')).toBe(1536);
    expect(parseSize('1.3KiB')).toBeUndefined();
    expect(parseSize('12 bananas')).toBeUndefined();
    expect(parseSize(-1)).toBeUndefined();
    expect(parseDuration('250ms', 1)).toBe(250);
    expect(parseDuration('7d', 1)).toBe(604_800_000);
    expect(parseDuration('1h', 10)).toBe(360_000);
    expect(parseDuration('1.5s', 1000)).toBe(1.5);
    expect(parseDuration(5, 1000)).toBe(5);
    expect(parseDuration('5 minutes', 1000)).toBeUndefined();
    expect(formatSize(262144)).toBe('256KiB');
    expect(formatSize(1000)).toBe('1000');
    expect(formatDurationMs(604_800_000)).toBe('7d');
    expect(formatDurationMs(1500)).toBe('1500ms');
  });

  it('formatted sizes and durations read back to the same value, so ids round-trip', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 0, max: 2 ** 40 }), (bytes, ms) => {
        expect(parseSize(formatSize(bytes))).toBe(bytes);
        expect(parseDuration(formatDurationMs(ms), 1)).toBe(ms);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 61, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 40 }), (bytes, ms) => {
        const params = { 'segment.bytes': bytes, 'segment.ms': ms };
        const reread = Object.fromEntries(
          cellId(params)
            .split(',')
            .map((kv) => kv.split('='))
            .map(([k, v]) => [k, SETTINGS[k].parse(v)]),
        );
        expect(reread).toEqual(params);
      }),
    );
  });

  it('YAML merge keys share settings between include cells', () => {
    const s = compile(`question: q
target: vm
settings: &base { io: buffered, flush: never }
matrix:
  include:
    - { <<: *base, vm.dirty_expire_centisecs: 30s }
    - { <<: *base, vm.dirty_expire_centisecs: 1h }
`);
    expect(s.matrix.map((c) => c.id)).toEqual([
      'io=buffered,flush=never,vm.dirty_expire_centisecs=30s',
      'io=buffered,flush=never,vm.dirty_expire_centisecs=1h',
    ]);
  });

  it('centisecs take a number as centiseconds and a string as a duration', () => {
    const s = compile(`question: q\ntarget: vm\nmatrix:\n  vm.dirty_expire_centisecs: [3000, 5s, 1h]\n`);
    expect(s.matrix.map((c) => c.params['vm.dirty_expire_centisecs'])).toEqual([3000, 500, 360000]);
    expect(s.matrix.map((c) => c.id)).toEqual([
      'vm.dirty_expire_centisecs=30s',
      'vm.dirty_expire_centisecs=5s',
      'vm.dirty_expire_centisecs=1h',
    ]);
    expect(issues(`question: q\ntarget: vm\nsettings:\n  vm.dirty_expire_centisecs: 5ms\n`)[0]).toMatchObject({
      path: 'settings.vm.dirty_expire_centisecs',
      found: "'5ms'",
    });
  });
});
