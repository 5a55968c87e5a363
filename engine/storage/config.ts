// Log settings: defaults and bounds come from the settings registry (engine/settings); this
// file maps them onto LogConfig's fields and turns a bad value into an error naming the
// setting (by our name and Kafka's) and the accepted range.
import {
  IO_MODES,
  SYNC_CALLS,
  FSYNC_ERROR_POLICIES,
  FLUSH_GRAMMAR,
  formatFlushPolicy,
  getSetting,
  parseFlushPolicy,
  settingDefault,
  tryParseFlushPolicy,
  type IoMode,
  type SettingValue,
  type SyncCall,
  type FsyncErrorPolicy,
} from '../settings/index.ts';
import type { FlushPolicy, LogConfig } from './types.ts';

export { IO_MODES, SYNC_CALLS, parseFlushPolicy };
export { formatFlushPolicy };

/** LogConfig's numeric fields and the registry setting each one is. */
export const LOG_NUMERIC_FIELDS = {
  segmentBytes: 'segment.bytes',
  segmentMs: 'segment.ms',
  segmentIndexBytes: 'segment.index.bytes',
  indexIntervalBytes: 'index.interval.bytes',
  maxBatchBytes: 'message.max.bytes',
} as const satisfies Partial<Record<keyof LogConfig, string>>;

/** LogConfig's fields by the registry setting each one is (verifyBatches is the engine's own switch, not a setting). */
export const LOG_FIELDS = { io: 'io', flush: 'flush', sync: 'sync', fsyncError: 'log.fsync.error', ...LOG_NUMERIC_FIELDS } as const;

/** Registry values by Kafka name (already parsed and bounded) as LogConfig fields; names that are not log settings are ignored. */
export function logConfigFromSettings(values: Readonly<Record<string, SettingValue>>): Partial<LogConfig> {
  const out: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(LOG_FIELDS)) {
    const v = values[name];
    if (v !== undefined) out[field] = name === 'flush' ? parseFlushPolicy(String(v)) : v;
  }
  return out as Partial<LogConfig>;
}

export function defaultLogConfig(): LogConfig {
  return {
    io: settingDefault<IoMode>('io'),
    flush: parseFlushPolicy(settingDefault<string>('flush')),
    sync: settingDefault<SyncCall>('sync'),
    segmentBytes: settingDefault<number>('segment.bytes'),
    segmentMs: settingDefault<number>('segment.ms'),
    segmentIndexBytes: settingDefault<number>('segment.index.bytes'),
    indexIntervalBytes: settingDefault<number>('index.interval.bytes'),
    maxBatchBytes: settingDefault<number>('message.max.bytes'),
    verifyBatches: true,
    fsyncError: settingDefault<FsyncErrorPolicy>('log.fsync.error'),
  };
}

function checkFlushPolicy(p: unknown): FlushPolicy {
  if (typeof p === 'string') return parseFlushPolicy(p);
  const o = p as { kind?: unknown; every?: unknown } | null;
  if (o !== null && typeof o === 'object') {
    // One grammar: an object is checked by spelling it and parsing it back.
    const parsed = tryParseFlushPolicy(formatFlushPolicy(o as FlushPolicy));
    if (parsed) return parsed;
  }
  throw new Error(`log setting flush (flush.messages / flush.ms) is ${JSON.stringify(p)}: expected ${FLUSH_GRAMMAR} (N, T >= 1)`);
}

function checkInt(field: keyof typeof LOG_NUMERIC_FIELDS, v: unknown): number {
  const kafka = LOG_NUMERIC_FIELDS[field];
  const { min, max } = getSetting(kafka).type.bounds as { min: number; max: number };
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new Error(`log setting ${field} (${kafka}) must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

function checkEnum<T extends string>(name: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !allowed.includes(v as T)) {
    throw new Error(`log setting ${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

/** Fills defaults and checks every setting; unknown keys are an error (they are usually typos). */
export function resolveLogConfig(partial: Partial<LogConfig> = {}): LogConfig {
  const d = defaultLogConfig();
  const known = new Set(Object.keys(d));
  for (const k of Object.keys(partial)) {
    if (!known.has(k)) throw new Error(`unknown log setting ${JSON.stringify(k)}: expected one of ${[...known].join(', ')}`);
  }
  const m = { ...d, ...Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) } as LogConfig;
  return {
    io: checkEnum('io', m.io, IO_MODES),
    flush: checkFlushPolicy(m.flush),
    sync: checkEnum('sync', m.sync, SYNC_CALLS),
    segmentBytes: checkInt('segmentBytes', m.segmentBytes),
    segmentMs: checkInt('segmentMs', m.segmentMs),
    segmentIndexBytes: checkInt('segmentIndexBytes', m.segmentIndexBytes),
    indexIntervalBytes: checkInt('indexIntervalBytes', m.indexIntervalBytes),
    maxBatchBytes: checkInt('maxBatchBytes', m.maxBatchBytes),
    verifyBatches: checkBool('verifyBatches', m.verifyBatches),
    fsyncError: checkEnum('fsyncError (log.fsync.error)', m.fsyncError, FSYNC_ERROR_POLICIES),
  };
}

function checkBool(name: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new Error(`log setting ${name} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}
