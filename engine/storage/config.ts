// Log settings: Kafka's defaults and the checks that turn a bad value into an error naming
// the setting (by our name and Kafka's) and the accepted range.
import { BATCH_HEADER_BYTES } from '../records/index.ts';
import type { FlushPolicy, IoMode, LogConfig, SyncCall } from './types.ts';

const INT32_MAX = 0x7fffffff;

export const IO_MODES: readonly IoMode[] = ['buffered', 'direct', 'dsync'];
export const SYNC_CALLS: readonly SyncCall[] = ['fsync', 'fdatasync'];

/** Entry sizes fix the smallest index that can hold anything: the time index keeps its last slot for the roll entry. */
const MIN_INDEX_BYTES = 24;
/** The aligned staging buffer of io=direct is sized from it and a WebAssembly.Memory stays below 4 GiB. */
const MAX_BATCH_LIMIT = 1 << 30;

export function defaultLogConfig(): LogConfig {
  return {
    io: 'buffered',
    flush: { kind: 'never' },
    sync: 'fdatasync',
    segmentBytes: 1 << 30,
    segmentMs: 7 * 24 * 3600 * 1000,
    segmentIndexBytes: 10 * 1024 * 1024,
    indexIntervalBytes: 4096,
    maxBatchBytes: 1048588,
    verifyBatches: true,
  };
}

const FLUSH_FORMS = "'never', 'per-batch', 'messages:N' (N >= 1 records) or 'ms:T' (T >= 1 milliseconds)";

export function parseFlushPolicy(s: string): FlushPolicy {
  const text = typeof s === 'string' ? s.trim() : s;
  if (text === 'never') return { kind: 'never' };
  if (text === 'per-batch') return { kind: 'per-batch' };
  const m = typeof text === 'string' ? /^(messages|ms):(\d+)$/.exec(text) : null;
  if (m) {
    const every = Number(m[2]);
    if (Number.isSafeInteger(every) && every >= 1) {
      return m[1] === 'messages' ? { kind: 'messages', every } : { kind: 'ms', every };
    }
  }
  throw new Error(`flush policy ${JSON.stringify(s)} is not valid: expected ${FLUSH_FORMS}`);
}

export function formatFlushPolicy(p: FlushPolicy): string {
  switch (p.kind) {
    case 'never':
    case 'per-batch':
      return p.kind;
    case 'messages':
    case 'ms':
      return `${p.kind}:${p.every}`;
  }
}

function checkFlushPolicy(p: unknown): FlushPolicy {
  if (typeof p === 'string') return parseFlushPolicy(p);
  const o = p as { kind?: unknown; every?: unknown } | null;
  if (o !== null && typeof o === 'object') {
    if (o.kind === 'never' || o.kind === 'per-batch') return { kind: o.kind };
    if ((o.kind === 'messages' || o.kind === 'ms') && Number.isSafeInteger(o.every) && (o.every as number) >= 1) {
      return { kind: o.kind, every: o.every as number };
    }
  }
  throw new Error(`log setting flush (flush.messages / flush.ms) is ${JSON.stringify(p)}: expected ${FLUSH_FORMS}`);
}

function checkInt(name: string, kafka: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new Error(`log setting ${name} (${kafka}) must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
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
  const segmentBytes = checkInt('segmentBytes', 'segment.bytes', m.segmentBytes, BATCH_HEADER_BYTES, INT32_MAX);
  const maxBatchBytes = checkInt('maxBatchBytes', 'message.max.bytes', m.maxBatchBytes, BATCH_HEADER_BYTES, MAX_BATCH_LIMIT);
  return {
    io: checkEnum('io', m.io, IO_MODES),
    flush: checkFlushPolicy(m.flush),
    sync: checkEnum('sync', m.sync, SYNC_CALLS),
    segmentBytes,
    segmentMs: checkInt('segmentMs', 'segment.ms', m.segmentMs, 1, Number.MAX_SAFE_INTEGER),
    segmentIndexBytes: checkInt('segmentIndexBytes', 'segment.index.bytes', m.segmentIndexBytes, MIN_INDEX_BYTES, INT32_MAX),
    indexIntervalBytes: checkInt('indexIntervalBytes', 'index.interval.bytes', m.indexIntervalBytes, 0, INT32_MAX),
    maxBatchBytes,
    verifyBatches: checkBool('verifyBatches', m.verifyBatches),
  };
}

function checkBool(name: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new Error(`log setting ${name} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}
