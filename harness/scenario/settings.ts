// The settings a scenario may set or vary, under Kafka's names (and sysctl(8)'s for the
// kernel's writeback knobs). Each one knows how to read a value from YAML, what to say when
// it cannot, and how to print it in a cell id and label. Values are normalized (sizes in
// bytes, segment.ms in ms, centisecs as centisecs, acks -1 -> 'all') so `where` clauses and
// cells compare equal whatever spelling the file used.

import type { FlushPolicy, IoMode, LogConfig, SyncCall } from '../../engine/storage/types.ts';
import { formatDurationMs, formatSize, parseDuration, parseSize } from './units.ts';

export type SettingValue = string | number | boolean;
export type Acks = 0 | 1 | 'all';

export interface SettingSpec {
  /** What a valid value looks like, for error messages ("expected ..."). */
  expected: string;
  /** Normalized value, or undefined when the input is not valid. */
  parse(value: unknown): SettingValue | undefined;
  /** Exact, compact form for cell ids. */
  display(value: SettingValue): string;
  /** Words for a human label. */
  label(value: SettingValue): string;
  sysctl?: boolean;
}

const INT32_MAX = 2 ** 31 - 1;

function oneOf(values: readonly string[], labels: Record<string, string> = {}): SettingSpec {
  return {
    expected: values.join('|'),
    parse: (v) => (typeof v === 'string' && values.includes(v) ? v : undefined),
    display: String,
    label: (v) => labels[String(v)] ?? String(v),
  };
}

function size(min: number, max: number, name: string): SettingSpec {
  const low = min >= 1024 ? formatSize(min) : `${min} bytes`;
  const range =
    max === Number.MAX_SAFE_INTEGER ? `of at least ${low}` : `from ${low} to ${max === INT32_MAX ? '2GiB-1' : formatSize(max)}`;
  return {
    expected: `a size ${range} (bytes, or a string like 64KiB, 1GiB)`,
    parse: (v) => {
      const bytes = parseSize(v);
      return bytes !== undefined && bytes >= min && bytes <= max ? bytes : undefined;
    },
    display: (v) => formatSize(Number(v)),
    label: (v) => `${name} ${formatSize(Number(v))}`,
  };
}

function durationMs(min: number, name: string): SettingSpec {
  return {
    expected: `a duration >= ${formatDurationMs(min)} (milliseconds, or a string like 250ms, 30s, 7d)`,
    parse: (v) => {
      const ms = parseDuration(v, 1);
      return ms !== undefined && Number.isSafeInteger(ms) && ms >= min ? ms : undefined;
    },
    display: (v) => formatDurationMs(Number(v)),
    label: (v) => `${name} ${formatDurationMs(Number(v))}`,
  };
}

function integer(min: number, max: number, name: string, sysctl = false): SettingSpec {
  return {
    expected: `an integer from ${min} to ${max}`,
    parse: (v) => {
      const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
      return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
    },
    display: String,
    label: (v) => `${name} ${v}`,
    sysctl,
  };
}

/** vm.dirty_*_centisecs: a number is centiseconds (the sysctl's own unit); a string is a duration. */
function centisecs(name: string): SettingSpec {
  return {
    expected: 'centiseconds (an integer >= 0) or a duration in whole centiseconds like 500ms, 30s, 1h',
    parse: (v) => {
      const cs = typeof v === 'number' ? v : parseDuration(v, 10);
      return cs !== undefined && Number.isInteger(cs) && cs >= 0 && cs <= INT32_MAX ? cs : undefined;
    },
    display: (v) => formatDurationMs(Number(v) * 10),
    label: (v) => `${name} ${formatDurationMs(Number(v) * 10)}`,
    sysctl: true,
  };
}

function sysctlBytes(min: number, name: string): SettingSpec {
  return { ...size(min, Number.MAX_SAFE_INTEGER, name), sysctl: true };
}

const FLUSH_RE = /^(?:never|per-batch|messages:([1-9]\d*)|ms:([1-9]\d*))$/;

const flushSpec: SettingSpec = {
  expected: 'never|per-batch|messages:N|ms:T',
  parse: (v) => (typeof v === 'string' && FLUSH_RE.test(v) ? v : undefined),
  display: String,
  label: (v) => {
    const p = flushPolicy(String(v));
    if (p.kind === 'never') return 'no flush';
    if (p.kind === 'per-batch') return 'flush per batch';
    if (p.kind === 'messages') return p.every === 1 ? 'flush every message' : `flush every ${p.every} msgs`;
    return `flush every ${p.every} ms`;
  },
};

const acksSpec: SettingSpec = {
  expected: '0|1|all',
  parse: (v) => {
    if (v === 0 || v === '0') return 0;
    if (v === 1 || v === '1') return 1;
    if (v === 'all' || v === -1 || v === '-1') return 'all';
    return undefined;
  },
  display: String,
  label: (v) => `acks=${v}`,
};

const booleanSpec = (name: string): SettingSpec => ({
  expected: 'true|false',
  parse: (v) => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined),
  display: String,
  label: (v) => `${name}=${v}`,
});

export const SETTINGS: Readonly<Record<string, SettingSpec>> = {
  io: oneOf(['buffered', 'direct', 'dsync'], { direct: 'O_DIRECT', dsync: 'O_DSYNC' }),
  flush: flushSpec,
  sync: oneOf(['fsync', 'fdatasync']),
  acks: acksSpec,
  // Kafka's lower bounds where it has one (segment.bytes >= 14); Kafka stores these as int32.
  'segment.bytes': size(14, INT32_MAX, 'segment'),
  'segment.ms': durationMs(1, 'roll'),
  'segment.index.bytes': size(8, INT32_MAX, 'index max'),
  'index.interval.bytes': size(0, INT32_MAX, 'index interval'),
  'message.max.bytes': size(1, INT32_MAX, 'max batch'),
  'min.insync.replicas': integer(1, 64, 'min ISR'),
  'replica.lag.time.max.ms': durationMs(1, 'replica lag max'),
  'unclean.leader.election.enable': booleanSpec('unclean'),
  'vm.dirty_expire_centisecs': centisecs('dirty expire'),
  'vm.dirty_writeback_centisecs': centisecs('dirty writeback'),
  'vm.dirty_background_ratio': integer(0, 100, 'dirty bg ratio', true),
  // The kernel rejects 0 for the *_bytes knobs and less than two pages for dirty_bytes.
  'vm.dirty_background_bytes': sysctlBytes(1, 'dirty bg bytes'),
  'vm.dirty_ratio': integer(0, 100, 'dirty ratio', true),
  'vm.dirty_bytes': sysctlBytes(8192, 'dirty bytes'),
};

export const SETTING_NAMES: readonly string[] = Object.keys(SETTINGS);

export function isSysctl(name: string): boolean {
  return SETTINGS[name]?.sysctl === true;
}

/** Writing one of a ratio/bytes pair makes the kernel zero the other: a layer may set only one. */
export const SYSCTL_EXCLUSIVE: ReadonlyArray<[string, string]> = [
  ['vm.dirty_ratio', 'vm.dirty_bytes'],
  ['vm.dirty_background_ratio', 'vm.dirty_background_bytes'],
];

export function flushPolicy(value: string): FlushPolicy {
  const m = FLUSH_RE.exec(value);
  if (!m) throw new Error(`flush: expected never|per-batch|messages:N|ms:T, found '${value}'`);
  if (value === 'never') return { kind: 'never' };
  if (value === 'per-batch') return { kind: 'per-batch' };
  if (m[1] !== undefined) return { kind: 'messages', every: Number(m[1]) };
  return { kind: 'ms', every: Number(m[2]) };
}

/** Engine and topic defaults (Kafka's, where Kafka has one). Sysctls have none: the host's apply. */
export const DEFAULT_SETTINGS: Readonly<Record<string, SettingValue>> = {
  io: 'buffered',
  flush: 'never',
  sync: 'fdatasync',
  acks: 'all', // the Java producer's default since Kafka 3.0
  'segment.bytes': 1024 ** 3,
  'segment.ms': 7 * 86_400_000,
  'segment.index.bytes': 10 * 1024 ** 2,
  'index.interval.bytes': 4096,
  'message.max.bytes': 1024 * 1024 + 12,
  'replica.lag.time.max.ms': 30_000,
  'unclean.leader.election.enable': false,
};

export interface ResolvedSettings {
  io: IoMode;
  flush: FlushPolicy;
  sync: SyncCall;
  acks: Acks;
  segmentBytes: number;
  segmentMs: number;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  /** message.max.bytes */
  maxBatchBytes: number;
  minInsyncReplicas: number;
  replicaLagTimeMaxMs: number;
  uncleanLeaderElectionEnable: boolean;
  /** sysctl name (vm.dirty_expire_centisecs) -> value to write; only those the scenario sets. */
  sysctls: Record<string, number>;
}

/**
 * Layers of settings, later ones overriding earlier ones. A layer that sets one of a
 * ratio/bytes sysctl pair drops the other inherited from below, as the kernel does.
 */
export function overlaySettings(...layers: Array<Record<string, SettingValue>>): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const layer of layers) {
    for (const [a, b] of SYSCTL_EXCLUSIVE) {
      if (a in layer) delete out[b];
      if (b in layer) delete out[a];
    }
    Object.assign(out, layer);
  }
  return out;
}

export function resolveSettings(params: Record<string, SettingValue>, minInsyncReplicas: number): ResolvedSettings {
  const p = { ...DEFAULT_SETTINGS, ...params };
  const sysctls: Record<string, number> = {};
  for (const [name, value] of Object.entries(p)) if (isSysctl(name)) sysctls[name] = Number(value);
  return {
    io: p.io as IoMode,
    flush: flushPolicy(String(p.flush)),
    sync: p.sync as SyncCall,
    acks: p.acks as Acks,
    segmentBytes: Number(p['segment.bytes']),
    segmentMs: Number(p['segment.ms']),
    segmentIndexBytes: Number(p['segment.index.bytes']),
    indexIntervalBytes: Number(p['index.interval.bytes']),
    maxBatchBytes: Number(p['message.max.bytes']),
    minInsyncReplicas: p['min.insync.replicas'] === undefined ? minInsyncReplicas : Number(p['min.insync.replicas']),
    replicaLagTimeMaxMs: Number(p['replica.lag.time.max.ms']),
    uncleanLeaderElectionEnable: p['unclean.leader.election.enable'] === true,
    sysctls,
  };
}

/** The segment engine's part of resolved settings. */
export function logConfig(s: ResolvedSettings): LogConfig {
  return {
    io: s.io,
    flush: s.flush,
    sync: s.sync,
    segmentBytes: s.segmentBytes,
    segmentMs: s.segmentMs,
    segmentIndexBytes: s.segmentIndexBytes,
    indexIntervalBytes: s.indexIntervalBytes,
    maxBatchBytes: s.maxBatchBytes,
    // Kafka always validates batches; turning it off is for engine benchmarks, not scenarios.
    verifyBatches: true,
  };
}
