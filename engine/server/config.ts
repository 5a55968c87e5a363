// Broker and controller settings: Kafka-style `key=value` .properties (or a flat/nested .json),
// overridden by `--set key=value`. Every key is known here so a typo fails loudly with the
// file and key instead of silently running the wrong experiment.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseFlushPolicy, resolveLogConfig, type FlushPolicy, type IoMode, type LogConfig, type SyncCall } from '../storage/index.ts';

export interface HttpSettings {
  /** Idle keep-alive connections are closed after this long. */
  keepAliveTimeoutMs: number;
  /** A client must finish sending its headers within this (slowloris defence). */
  headersTimeoutMs: number;
  /** A client must finish sending its whole request (headers + body) within this. */
  requestTimeoutMs: number;
}

export interface BrokerSettings {
  log: Partial<LogConfig>;
  /** message.max.bytes: also the produce body cap. */
  messageMaxBytes: number;
  minInsyncReplicas: number;
  replicaLagTimeMaxMs: number;
  replicaFetchWaitMaxMs: number;
  replicaFetchMaxBytes: number;
  replicaFetchBackoffMs: number;
  heartbeatIntervalMs: number;
  /** Default acks=all produce timeout when the request names none (Kafka's request.timeout.ms). */
  requestTimeoutMs: number;
  http: HttpSettings;
  /** kafka.port: the Kafka protocol listener's port on the broker's host (0 = any free port, -1 = no listener). */
  kafkaPort: number;
  /** socket.request.max.bytes: largest Kafka request frame accepted (checked on the size prefix). */
  socketRequestMaxBytes: number;
}

export interface ControllerSettings {
  sessionTimeoutMs: number;
  uncleanLeaderElection: boolean;
  tickMs: number;
}

export const DEFAULT_MESSAGE_MAX_BYTES = 1048588;

export const DEFAULT_BROKER_SETTINGS: Readonly<BrokerSettings> = Object.freeze({
  log: {},
  messageMaxBytes: DEFAULT_MESSAGE_MAX_BYTES,
  minInsyncReplicas: 1,
  replicaLagTimeMaxMs: 30_000,
  replicaFetchWaitMaxMs: 500,
  replicaFetchMaxBytes: 1 << 20,
  replicaFetchBackoffMs: 100,
  heartbeatIntervalMs: 100,
  requestTimeoutMs: 30_000,
  http: { keepAliveTimeoutMs: 30_000, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 },
  kafkaPort: 0,
  socketRequestMaxBytes: 104_857_600,
});

export const DEFAULT_CONTROLLER_SETTINGS: Readonly<ControllerSettings> = Object.freeze({
  sessionTimeoutMs: 1500,
  uncleanLeaderElection: false,
  tickMs: 100,
});

/** Raw settings: key -> string value, with where each came from for error messages. */
export interface RawSettings {
  values: Map<string, string>;
  sources: Map<string, string>;
}

interface KeySpec {
  help: string;
  apply?: (b: BrokerSettings, v: string, where: string) => void;
  applyController?: (c: ControllerSettings, v: string, where: string) => void;
}

function int(v: string, where: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const t = v.trim();
  if (!/^-?\d+$/.test(t)) throw new Error(`${where}: expected an integer, got '${v}'`);
  const n = Number(t);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${where}: expected an integer in [${min}, ${max}], got ${v}`);
  }
  return n;
}

function bool(v: string, where: string): boolean {
  const t = v.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw new Error(`${where}: expected true or false, got '${v}'`);
}

function flush(v: string, where: string): FlushPolicy {
  try {
    return parseFlushPolicy(v);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}

const KEYS: Record<string, KeySpec> = {
  io: {
    help: 'write path: buffered | direct | dsync (default buffered)',
    apply: (b, v, w) => {
      if (v !== 'buffered' && v !== 'direct' && v !== 'dsync') {
        throw new Error(`${w}: expected buffered, direct or dsync, got '${v}'`);
      }
      b.log.io = v as IoMode;
    },
  },
  flush: { help: 'flush policy: never | per-batch | messages:N | ms:T (default never: kernel writeback)', apply: (b, v, w) => (b.log.flush = flush(v, w)) },
  'flush.messages': { help: "Kafka's name: flush every N messages (same as flush=messages:N)", apply: (b, v, w) => (b.log.flush = { kind: 'messages', every: int(v, w, 1) }) },
  'flush.ms': { help: "Kafka's name: flush every T ms (same as flush=ms:T)", apply: (b, v, w) => (b.log.flush = { kind: 'ms', every: int(v, w, 1) }) },
  sync: {
    help: 'flush call: fsync | fdatasync (default fdatasync)',
    apply: (b, v, w) => {
      if (v !== 'fsync' && v !== 'fdatasync') throw new Error(`${w}: expected fsync or fdatasync, got '${v}'`);
      b.log.sync = v as SyncCall;
    },
  },
  'segment.bytes': { help: 'roll a segment at this size (default 1073741824)', apply: (b, v, w) => (b.log.segmentBytes = int(v, w, 1024)) },
  'segment.ms': { help: 'roll a segment at this age (default 604800000 = 7 days)', apply: (b, v, w) => (b.log.segmentMs = int(v, w, 1)) },
  'segment.index.bytes': { help: 'offset index size limit per segment (default 10485760)', apply: (b, v, w) => (b.log.segmentIndexBytes = int(v, w, 16)) },
  'index.interval.bytes': { help: 'bytes between sparse index entries (default 4096)', apply: (b, v, w) => (b.log.indexIntervalBytes = int(v, w, 0)) },
  'message.max.bytes': {
    help: 'largest batch (and produce body) accepted (default 1048588)',
    apply: (b, v, w) => {
      b.messageMaxBytes = int(v, w, 61, 1 << 30);
      b.log.maxBatchBytes = b.messageMaxBytes;
    },
  },
  'min.insync.replicas': { help: 'acks=all needs this many in-sync replicas (default 1)', apply: (b, v, w) => (b.minInsyncReplicas = int(v, w, 1)) },
  'replica.lag.time.max.ms': { help: 'a follower not caught up for this long leaves the ISR (default 30000)', apply: (b, v, w) => (b.replicaLagTimeMaxMs = int(v, w, 1)) },
  'replica.fetch.wait.max.ms': { help: 'follower long-poll wait (default 500)', apply: (b, v, w) => (b.replicaFetchWaitMaxMs = int(v, w, 0, 60_000)) },
  'replica.fetch.max.bytes': { help: 'bytes per follower fetch (default 1048576; one batch always fits)', apply: (b, v, w) => (b.replicaFetchMaxBytes = int(v, w, 1)) },
  'replica.fetch.backoff.ms': { help: 'follower pause after a failed fetch, doubling to 2 s (default 100)', apply: (b, v, w) => (b.replicaFetchBackoffMs = int(v, w, 1, 60_000)) },
  'broker.heartbeat.interval.ms': { help: 'heartbeat period to the controller (default 100)', apply: (b, v, w) => (b.heartbeatIntervalMs = int(v, w, 1, 60_000)) },
  'heartbeat.interval.ms': { help: 'alias of broker.heartbeat.interval.ms', apply: (b, v, w) => (b.heartbeatIntervalMs = int(v, w, 1, 60_000)) },
  'request.timeout.ms': { help: 'acks=all timeout when a produce names no timeoutMs (default 30000)', apply: (b, v, w) => (b.requestTimeoutMs = int(v, w, 1)) },
  'http.keepalive.timeout.ms': { help: 'idle keep-alive connections close after this (default 30000)', apply: (b, v, w) => (b.http.keepAliveTimeoutMs = int(v, w, 1)) },
  'http.headers.timeout.ms': { help: 'clients must send their headers within this (default 10000)', apply: (b, v, w) => (b.http.headersTimeoutMs = int(v, w, 1)) },
  'http.request.timeout.ms': { help: 'clients must send the whole request within this (default 30000)', apply: (b, v, w) => (b.http.requestTimeoutMs = int(v, w, 1)) },
  'kafka.port': { help: 'Kafka protocol listener port on the --listen host (default 0: any free port; -1: no listener)', apply: (b, v, w) => (b.kafkaPort = int(v, w, -1, 65535)) },
  'socket.request.max.bytes': { help: 'largest Kafka request frame, checked before it is read (default 104857600)', apply: (b, v, w) => (b.socketRequestMaxBytes = int(v, w, 1024, 0x7fffffff)) },
  // Controller keys: read by `durolab cluster` (in-process controller); brokers ignore them so
  // one file can configure a whole cluster.
  'broker.session.timeout.ms': { help: 'controller: a broker silent this long is fenced (default 1500)', applyController: (c, v, w) => (c.sessionTimeoutMs = int(v, w, 1)) },
  'unclean.leader.election.enable': { help: 'controller: elect an out-of-sync replica when no ISR member is alive (default false)', applyController: (c, v, w) => (c.uncleanLeaderElection = bool(v, w)) },
  'controller.tick.ms': { help: 'controller: how often it checks sessions (default 100)', applyController: (c, v, w) => (c.tickMs = int(v, w, 1, 10_000)) },
};

export function settingsHelp(): string {
  const width = Math.max(...Object.keys(KEYS).map((k) => k.length));
  return Object.entries(KEYS)
    .map(([k, s]) => `  ${k.padEnd(width)}  ${s.help}`)
    .join('\n');
}

export function emptyRaw(): RawSettings {
  return { values: new Map(), sources: new Map() };
}

function put(raw: RawSettings, key: string, value: string, where: string): void {
  if (!(key in KEYS)) {
    throw new Error(`${where}: unknown setting '${key}' (known: ${Object.keys(KEYS).join(', ')})`);
  }
  raw.values.set(key, value);
  raw.sources.set(key, where);
}

/** Java .properties subset: `key=value` or `key: value`, `#`/`!` comments, blank lines. */
export function parseProperties(text: string, file: string, raw: RawSettings = emptyRaw()): RawSettings {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (!m) throw new Error(`${file}:${i + 1}: expected key=value, got '${line}'`);
    put(raw, m[1], m[2].trim(), `${file}:${i + 1} (${m[1]})`);
  }
  return raw;
}

/** JSON: flat `{"segment.bytes": 1048576}` or nested `{"segment": {"bytes": 1048576}}`. */
export function parseJsonSettings(text: string, file: string, raw: RawSettings = emptyRaw()): RawSettings {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new Error(`${file}: expected a JSON object of settings`);
  }
  const walk = (o: Record<string, unknown>, prefix: string): void => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, key);
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') put(raw, key, String(v), `${file} (${key})`);
      else throw new Error(`${file} (${key}): expected a string, number or boolean`);
    }
  };
  walk(obj as Record<string, unknown>, '');
  return raw;
}

export function readSettingsFile(file: string, raw: RawSettings = emptyRaw()): RawSettings {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--config ${file}: cannot read: ${(err as Error).message}`);
  }
  return path.extname(file).toLowerCase() === '.json' ? parseJsonSettings(text, file, raw) : parseProperties(text, file, raw);
}

/** `--set key=value` overrides, applied after the file. */
export function applySetFlags(sets: readonly string[], raw: RawSettings = emptyRaw()): RawSettings {
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new Error(`--set ${s}: expected key=value`);
    put(raw, s.slice(0, eq).trim(), s.slice(eq + 1).trim(), `--set ${s}`);
  }
  return raw;
}

export function loadRawSettings(configFile: string | undefined, sets: readonly string[]): RawSettings {
  const raw = configFile ? readSettingsFile(configFile) : emptyRaw();
  return applySetFlags(sets, raw);
}

export function brokerSettings(raw: RawSettings): BrokerSettings {
  const b: BrokerSettings = structuredClone(DEFAULT_BROKER_SETTINGS) as BrokerSettings;
  for (const [key, value] of raw.values) {
    KEYS[key].apply?.(b, value, raw.sources.get(key) ?? key);
  }
  // Kafka's produce path rejects batches above message.max.bytes; the log must agree.
  b.log.maxBatchBytes ??= b.messageMaxBytes;
  // Fail at start-up, naming the setting, rather than when the first partition opens.
  resolveLogConfig(b.log);
  if (b.http.headersTimeoutMs > b.http.requestTimeoutMs) {
    throw new Error(`http.headers.timeout.ms (${b.http.headersTimeoutMs}) must not exceed http.request.timeout.ms (${b.http.requestTimeoutMs})`);
  }
  return b;
}

export function controllerSettings(raw: RawSettings): ControllerSettings {
  const c: ControllerSettings = { ...DEFAULT_CONTROLLER_SETTINGS };
  for (const [key, value] of raw.values) {
    KEYS[key].applyController?.(c, value, raw.sources.get(key) ?? key);
  }
  return c;
}

/** Back to `--set` form so a cluster can hand its settings to child brokers verbatim. */
export function rawToSetFlags(raw: RawSettings): string[] {
  return [...raw.values].map(([k, v]) => `${k}=${v}`);
}

/** `--topic NAME:PARTITIONS` (standalone broker) or `NAME:PARTITIONS[:RF]` (cluster). */
export function parseTopicSpec(s: string, withRf: boolean): { name: string; partitions: number; replicationFactor: number } {
  const parts = s.split(':');
  const ok = withRf ? parts.length === 2 || parts.length === 3 : parts.length === 2;
  const form = withRf ? 'NAME:PARTITIONS[:RF]' : 'NAME:PARTITIONS';
  if (!ok || !/^[A-Za-z0-9._-]{1,249}$/.test(parts[0])) throw new Error(`--topic ${s}: expected ${form} (topic names use A-Z a-z 0-9 . _ -)`);
  const partitions = Number(parts[1]);
  if (!/^\d+$/.test(parts[1]) || partitions < 1 || partitions > 10_000) throw new Error(`--topic ${s}: PARTITIONS must be an integer in [1, 10000]`);
  const replicationFactor = parts.length === 3 ? Number(parts[2]) : 1;
  if (parts.length === 3 && (!/^\d+$/.test(parts[2]) || replicationFactor < 1)) throw new Error(`--topic ${s}: RF must be an integer >= 1`);
  return { name: parts[0], partitions, replicationFactor };
}
