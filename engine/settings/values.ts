// The value types of the settings registry: each one reads a value from YAML/JSON (numbers,
// booleans) or from a string (CLI flag, .properties, --set), normalizes it (sizes in bytes,
// durations in ms, acks -1 -> 'all') and prints it back as an exact compact form (cell ids)
// and as words (labels). The io modes, sync calls, acks and the flush grammar are declared
// here and nowhere else.
import { formatDurationMs, formatSize, parseDuration, parseSize } from '../units.ts';

export type SettingValue = string | number | boolean;

export const IO_MODES = ['buffered', 'direct', 'dsync'] as const;
export type IoMode = (typeof IO_MODES)[number];
export const SYNC_CALLS = ['fsync', 'fdatasync'] as const;
export type SyncCall = (typeof SYNC_CALLS)[number];
/** What the log does when fsync/fdatasync fails: go offline (Kafka) or retry and acknowledge (the ATC'20 fsync-failure bug, for comparison). */
export const FSYNC_ERROR_POLICIES = ['fail-stop', 'retry'] as const;
export type FsyncErrorPolicy = (typeof FSYNC_ERROR_POLICIES)[number];
export type Acks = 0 | 1 | 'all';
export const ACKS: readonly Acks[] = [0, 1, 'all'];

export type FlushPolicy =
  | { kind: 'never' }
  | { kind: 'per-batch' }
  | { kind: 'messages'; every: number }
  | { kind: 'ms'; every: number };

export const INT32_MAX = 2 ** 31 - 1;

/** The one flush grammar. N and T are written without leading zeros, so one policy has one spelling (and one cell id). */
export const FLUSH_GRAMMAR = 'never|per-batch|messages:N|ms:T';
const FLUSH_RE = /^(?:never|per-batch|messages:([1-9]\d*)|ms:([1-9]\d*))$/;

/** The policy, or undefined when `v` is not in the grammar (surrounding blanks are ignored). */
export function tryParseFlushPolicy(v: unknown): FlushPolicy | undefined {
  if (typeof v !== 'string') return undefined;
  const text = v.trim();
  const m = FLUSH_RE.exec(text);
  if (!m) return undefined;
  if (text === 'never' || text === 'per-batch') return { kind: text };
  const every = Number(m[1] ?? m[2]);
  // ms:T drives setInterval, which holds at most 2^31-1 ms (larger fires every 1 ms).
  if (!Number.isSafeInteger(every) || (m[2] !== undefined && every > INT32_MAX)) return undefined;
  return m[1] !== undefined ? { kind: 'messages', every } : { kind: 'ms', every };
}

export function parseFlushPolicy(v: string): FlushPolicy {
  const p = tryParseFlushPolicy(v);
  if (!p) throw new Error(`flush ${JSON.stringify(v)} is not valid: expected ${FLUSH_GRAMMAR} (N >= 1 messages, 1 <= T <= 2^31-1 ms, no leading zeros)`);
  return p;
}

export function formatFlushPolicy(p: FlushPolicy): string {
  return p.kind === 'never' || p.kind === 'per-batch' ? p.kind : `${p.kind}:${p.every}`;
}

export function labelFlushPolicy(p: FlushPolicy): string {
  if (p.kind === 'never') return 'no flush';
  if (p.kind === 'per-batch') return 'flush per batch';
  if (p.kind === 'messages') return p.every === 1 ? 'flush every message' : `flush every ${p.every} msgs`;
  return `flush every ${p.every} ms`;
}

/** How a setting's values are read, checked and printed. */
export interface ValueType {
  /** Short type name for the reference: size, duration, integer, boolean, enum, flush, acks. */
  type: string;
  /** What a valid value looks like, for "expected ..." in errors. */
  expected: string;
  /** Accepted range for the reference ("61 B .. 2GiB-1", "buffered|direct|dsync"). */
  range: string;
  /** Numeric bounds, in the normalized unit, for numeric types. */
  bounds?: { min: number; max: number };
  /** Every valid value, for types with a short list (enum, boolean, acks); the edge forms for flush. */
  choices?: readonly SettingValue[];
  /** Normalized value, or undefined when `v` (a YAML/JSON value or a CLI/properties string) is not valid. */
  parse(v: unknown): SettingValue | undefined;
  /** Exact, compact form (cell ids). */
  display(v: SettingValue): string;
  /** Words for a label; `name` is the setting's short label name. */
  label(v: SettingValue, name: string): string;
}

const sizeText = (n: number): string =>
  n === INT32_MAX ? '2GiB-1' : n === Number.MAX_SAFE_INTEGER ? 'unbounded' : n >= 1024 ? formatSize(n) : `${n} ${n === 1 ? 'byte' : 'bytes'}`;

export function enumType(values: readonly string[], labels: Record<string, string> = {}): ValueType {
  return {
    type: 'enum',
    expected: values.join('|'),
    choices: values,
    range: values.join('|'),
    parse: (v) => (typeof v === 'string' && values.includes(v.trim()) ? v.trim() : undefined),
    display: String,
    label: (v) => labels[String(v)] ?? String(v),
  };
}

export function sizeType(min: number, max: number): ValueType {
  const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${sizeText(min)}` : `from ${sizeText(min)} to ${sizeText(max)}`;
  return {
    type: 'size',
    expected: `a size ${range} (bytes, or a string like 64KiB, 1GiB)`,
    range: `${sizeText(min)} .. ${sizeText(max)}`,
    bounds: { min, max },
    parse: (v) => {
      const bytes = parseSize(v);
      return bytes !== undefined && bytes >= min && bytes <= max ? bytes : undefined;
    },
    display: (v) => formatSize(Number(v)),
    label: (v, name) => `${name} ${formatSize(Number(v))}`,
  };
}

/** Durations default to at most 2^31-1 ms: Node's timers hold no more (a larger delay fires after 1 ms). */
export function durationMsType(min: number, max = INT32_MAX): ValueType {
  const upper = max === Number.MAX_SAFE_INTEGER ? '' : ` and <= ${max === INT32_MAX ? '2^31-1 ms' : formatDurationMs(max)}`;
  return {
    type: 'duration',
    expected: `a duration >= ${formatDurationMs(min)}${upper} (milliseconds, or a string like 250ms, 30s, 7d)`,
    range: `${formatDurationMs(min)} .. ${max === Number.MAX_SAFE_INTEGER ? 'unbounded' : max === INT32_MAX ? '2^31-1 ms' : formatDurationMs(max)}`,
    bounds: { min, max },
    parse: (v) => {
      const ms = parseDuration(v, 1);
      return ms !== undefined && Number.isSafeInteger(ms) && ms >= min && ms <= max ? ms : undefined;
    },
    display: (v) => formatDurationMs(Number(v)),
    label: (v, name) => `${name} ${formatDurationMs(Number(v))}`,
  };
}

export function integerType(min: number, max: number): ValueType {
  return {
    type: 'integer',
    expected: max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
    range: max === Number.MAX_SAFE_INTEGER ? `${min} .. unbounded` : `${min} .. ${max}`,
    bounds: { min, max },
    parse: (v) => {
      const n = typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
      return typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
    },
    display: String,
    label: (v, name) => `${name} ${v}`,
  };
}

/** vm.dirty_*_centisecs: a number is centiseconds (the sysctl's own unit); a string with a unit is a duration. */
export function centisecsType(): ValueType {
  return {
    type: 'centisecs',
    expected: 'centiseconds (an integer >= 0) or a duration in whole centiseconds like 500ms, 30s, 1h',
    range: `0 .. ${INT32_MAX} cs`,
    bounds: { min: 0, max: INT32_MAX },
    parse: (v) => {
      const cs = typeof v === 'number' ? v : parseDuration(v, 10);
      return cs !== undefined && Number.isInteger(cs) && cs >= 0 && cs <= INT32_MAX ? cs : undefined;
    },
    display: (v) => formatDurationMs(Number(v) * 10),
    label: (v, name) => `${name} ${formatDurationMs(Number(v) * 10)}`,
  };
}

export function booleanType(): ValueType {
  return {
    type: 'boolean',
    expected: 'true|false',
    choices: [true, false],
    range: 'true|false',
    parse: (v) => {
      const t = typeof v === 'string' ? v.trim().toLowerCase() : v;
      return t === true || t === 'true' ? true : t === false || t === 'false' ? false : undefined;
    },
    display: String,
    label: (v, name) => `${name}=${v}`,
  };
}

export function flushType(): ValueType {
  return {
    type: 'flush',
    expected: FLUSH_GRAMMAR,
    choices: ['never', 'per-batch', 'messages:1', `messages:${Number.MAX_SAFE_INTEGER}`, 'ms:1', `ms:${INT32_MAX}`],
    range: `${FLUSH_GRAMMAR} (N >= 1, T in 1 .. 2^31-1)`,
    parse: (v) => {
      const p = tryParseFlushPolicy(v);
      return p ? formatFlushPolicy(p) : undefined;
    },
    display: String,
    label: (v) => labelFlushPolicy(parseFlushPolicy(String(v))),
  };
}

export function acksType(): ValueType {
  return {
    type: 'acks',
    expected: ACKS.join('|'),
    choices: ACKS,
    range: `${ACKS.join('|')} (-1 = all)`,
    parse: (v) => {
      const t = typeof v === 'string' ? v.trim() : v;
      if (t === 0 || t === '0') return 0;
      if (t === 1 || t === '1') return 1;
      if (t === 'all' || t === -1 || t === '-1') return 'all';
      return undefined;
    },
    display: String,
    label: (v) => `acks=${v}`,
  };
}
