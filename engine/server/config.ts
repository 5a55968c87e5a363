// Broker and controller settings: Kafka-style `key=value` .properties (or a flat/nested .json),
// overridden by `--set key=value`. The keys, their parsers, bounds and defaults are the settings
// registry's (engine/settings); this file says where each lands. A typo fails loudly with the
// file and key instead of silently running the wrong experiment.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS, findSetting, isServerSetting, parseSettingText, settingDefault, type Setting, type SettingValue } from '../settings/index.ts';
import { LOG_FIELDS, logConfigFromSettings, resolveLogConfig, type LogConfig } from '../storage/index.ts';
import type { FetchTransfer } from './kafka/zero-copy.ts';

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
  /** fetch.max.bytes: a fetch is answered with at most this many bytes, whatever maxBytes it asks. */
  fetchMaxBytes: number;
  fetchTransfer: FetchTransfer;
  /** max.connections: connections accepted beyond this are closed at once. */
  maxConnections: number;
  http: HttpSettings;
  /** kafka.port: the Kafka protocol listener's port on the broker's host (0 = any free port, -1 = no listener). */
  kafkaPort: number;
  /** socket.request.max.bytes: largest Kafka request frame accepted (checked on the size prefix). */
  socketRequestMaxBytes: number;
}

export interface ControllerSettings {
  sessionTimeoutMs: number;
  uncleanLeaderElection: boolean;
  /** eligible.leader.replicas (KIP-966). */
  eligibleLeaderReplicas: boolean;
  /** min.insync.replicas, for the ELR rules. */
  minInsyncReplicas: number;
  tickMs: number;
}

const ms = (name: string): number => settingDefault<number>(name);

export const DEFAULT_MESSAGE_MAX_BYTES = settingDefault<number>('message.max.bytes');

export const DEFAULT_FETCH_MAX_BYTES = settingDefault<number>('fetch.max.bytes');
export const DEFAULT_MAX_CONNECTIONS = settingDefault<number>('max.connections');

export const DEFAULT_BROKER_SETTINGS: Readonly<BrokerSettings> = Object.freeze({
  log: {},
  messageMaxBytes: DEFAULT_MESSAGE_MAX_BYTES,
  minInsyncReplicas: settingDefault<number>('min.insync.replicas'),
  replicaLagTimeMaxMs: ms('replica.lag.time.max.ms'),
  replicaFetchWaitMaxMs: ms('replica.fetch.wait.max.ms'),
  replicaFetchMaxBytes: settingDefault<number>('replica.fetch.max.bytes'),
  replicaFetchBackoffMs: ms('replica.fetch.backoff.ms'),
  heartbeatIntervalMs: ms('broker.heartbeat.interval.ms'),
  requestTimeoutMs: ms('request.timeout.ms'),
  fetchMaxBytes: DEFAULT_FETCH_MAX_BYTES,
  fetchTransfer: settingDefault<FetchTransfer>('fetch.transfer'),
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  http: { keepAliveTimeoutMs: ms('http.keepalive.timeout.ms'), headersTimeoutMs: ms('http.headers.timeout.ms'), requestTimeoutMs: ms('http.request.timeout.ms') },
  kafkaPort: settingDefault<number>('kafka.port'),
  socketRequestMaxBytes: settingDefault<number>('socket.request.max.bytes'),
});

export const DEFAULT_CONTROLLER_SETTINGS: Readonly<ControllerSettings> = Object.freeze({
  sessionTimeoutMs: ms('broker.session.timeout.ms'),
  uncleanLeaderElection: settingDefault<boolean>('unclean.leader.election.enable'),
  eligibleLeaderReplicas: settingDefault<boolean>('eligible.leader.replicas'),
  minInsyncReplicas: settingDefault<number>('min.insync.replicas'),
  tickMs: ms('controller.tick.ms'),
});

/** Raw settings: key -> string value, with where each came from for error messages. */
export interface RawSettings {
  values: Map<string, string>;
  sources: Map<string, string>;
}

/**
 * Where a registry setting lands in the broker's or the controller's settings, beyond the log
 * settings (LogConfig fields, mapped by engine/storage's LOG_FIELDS). Values arrive parsed and
 * bounded by the registry.
 */
interface Consumer {
  broker?: (b: BrokerSettings, v: SettingValue) => void;
  controller?: (c: ControllerSettings, v: SettingValue) => void;
}

const CONSUMERS: Record<string, Consumer> = {
  'flush.messages': { broker: (b, v) => (b.log.flush = { kind: 'messages', every: Number(v) }) },
  'flush.ms': { broker: (b, v) => (b.log.flush = { kind: 'ms', every: Number(v) }) },
  'message.max.bytes': { broker: (b, v) => (b.messageMaxBytes = Number(v)) },
  'min.insync.replicas': { broker: (b, v) => (b.minInsyncReplicas = Number(v)), controller: (c, v) => (c.minInsyncReplicas = Number(v)) },
  'replica.lag.time.max.ms': { broker: (b, v) => (b.replicaLagTimeMaxMs = Number(v)) },
  'replica.fetch.wait.max.ms': { broker: (b, v) => (b.replicaFetchWaitMaxMs = Number(v)) },
  'replica.fetch.max.bytes': { broker: (b, v) => (b.replicaFetchMaxBytes = Number(v)) },
  'replica.fetch.backoff.ms': { broker: (b, v) => (b.replicaFetchBackoffMs = Number(v)) },
  'broker.heartbeat.interval.ms': { broker: (b, v) => (b.heartbeatIntervalMs = Number(v)) },
  'fetch.max.bytes': { broker: (b, v) => (b.fetchMaxBytes = Number(v)) },
  'fetch.transfer': { broker: (b, v) => (b.fetchTransfer = v as FetchTransfer) },
  'max.connections': { broker: (b, v) => (b.maxConnections = Number(v)) },
  'kafka.port': { broker: (b, v) => (b.kafkaPort = Number(v)) },
  'socket.request.max.bytes': { broker: (b, v) => (b.socketRequestMaxBytes = Number(v)) },
  'request.timeout.ms': { broker: (b, v) => (b.requestTimeoutMs = Number(v)) },
  'http.keepalive.timeout.ms': { broker: (b, v) => (b.http.keepAliveTimeoutMs = Number(v)) },
  'http.headers.timeout.ms': { broker: (b, v) => (b.http.headersTimeoutMs = Number(v)) },
  'http.request.timeout.ms': { broker: (b, v) => (b.http.requestTimeoutMs = Number(v)) },
  'broker.session.timeout.ms': { controller: (c, v) => (c.sessionTimeoutMs = Number(v)) },
  'unclean.leader.election.enable': { controller: (c, v) => (c.uncleanLeaderElection = v === true) },
  'eligible.leader.replicas': { controller: (c, v) => (c.eligibleLeaderReplicas = v === true) },
  'controller.tick.ms': { controller: (c, v) => (c.tickMs = Number(v)) },
};

const LOG_SETTINGS: ReadonlySet<string> = new Set(Object.values(LOG_FIELDS));

/** The registry's settings a broker or controller config may name (topic, broker and controller scopes). */
export const SERVER_SETTINGS: readonly Setting[] = SETTINGS.filter(isServerSetting);
for (const s of SERVER_SETTINGS) {
  if (!CONSUMERS[s.name] && !LOG_SETTINGS.has(s.name)) throw new Error(`engine/server/config.ts: registry setting '${s.name}' applies to the broker but has no consumer here`);
}
const SERVER_KEYS: readonly string[] = SERVER_SETTINGS.flatMap((s) => [s.name, ...(s.aliases ?? [])]);

export function settingsHelp(): string {
  const width = Math.max(...SERVER_KEYS.map((k) => k.length));
  return SERVER_SETTINGS.flatMap((s) => {
    const scope = s.appliesTo.includes('controller') && !s.appliesTo.includes('broker') ? 'controller: ' : '';
    const def = s.default === undefined ? '' : ` (default ${String(s.default)})`;
    return [`  ${s.name.padEnd(width)}  ${scope}${s.help}${def}`, ...(s.aliases ?? []).map((a) => `  ${a.padEnd(width)}  alias of ${s.name}`)];
  })
    .concat('  (types, ranges and units of each: durolab settings)')
    .join('\n');
}

export function emptyRaw(): RawSettings {
  return { values: new Map(), sources: new Map() };
}

function put(raw: RawSettings, key: string, value: string, where: string): void {
  if (!SERVER_KEYS.includes(key)) {
    throw new Error(`${where}: unknown setting '${key}' (known: ${SERVER_KEYS.join(', ')})`);
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
    const { name } = findSetting(key) as Setting;
    const v = parseSettingText(name, value, raw.sources.get(key) ?? key);
    if (LOG_SETTINGS.has(name)) Object.assign(b.log, logConfigFromSettings({ [name]: v }));
    CONSUMERS[name]?.broker?.(b, v);
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
    const { name } = findSetting(key) as Setting;
    CONSUMERS[name]?.controller?.(c, parseSettingText(name, value, raw.sources.get(key) ?? key));
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
