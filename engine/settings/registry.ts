// The settings registry: every setting a scenario, a broker/controller config file, `--set` or
// an engine flag can name, with its Kafka name, type, default, bounds, unit, help and where it
// applies. Broker config, log config, engine flags, scenario validation and `durolab settings`
// all read this table; a bound or default written anywhere else is a bug.
import { DEFAULT_MAX_BATCH_BYTES } from '../records/decode.ts';
import { BATCH_HEADER_BYTES } from '../records/types.ts';
import {
  INT32_MAX,
  IO_MODES,
  SYNC_CALLS,
  FSYNC_ERROR_POLICIES,
  acksType,
  booleanType,
  centisecsType,
  durationMsType,
  enumType,
  flushType,
  integerType,
  sizeType,
  type SettingValue,
  type ValueType,
} from './values.ts';

/** Where a setting takes effect. */
export type Scope = 'topic' | 'broker' | 'controller' | 'producer' | 'host-sysctl' | 'vm-guest' | 'vm-disk';
export const SCOPES: readonly Scope[] = ['topic', 'broker', 'controller', 'producer', 'host-sysctl', 'vm-guest', 'vm-disk'];

export interface Setting {
  /** Kafka's name (sysctl(8)'s for kernel knobs): the key users write. */
  name: string;
  type: ValueType;
  /** Normalized default; undefined when something else supplies it (the host's sysctl, flush.* -> flush). */
  default?: SettingValue;
  /** Unit of a bare number. */
  unit?: string;
  help: string;
  appliesTo: readonly Scope[];
  /** A scenario may set or vary it (settings: / matrix:). */
  scenario: boolean;
  /** Short name in cell labels ("segment 1MiB"). */
  label: string;
  /** The engine CLI's flag for it (without --), when not the name with dots as dashes. */
  flag?: string;
  /** Other keys accepted for it in broker config files and --set. */
  aliases?: readonly string[];
  /** Setting this one makes the kernel zero that one (ratio/bytes pairs). */
  exclusiveWith?: string;
  /** Why the bounds are what they are, when it is not obvious. */
  why?: string;
}

/** Entry sizes fix the smallest index that can hold anything: the time index keeps its last slot for the roll entry. */
const MIN_INDEX_BYTES = 24;
/** The aligned staging buffer of io=direct is sized from it and a WebAssembly.Memory stays below 4 GiB. */
const MAX_BATCH_LIMIT = 1 << 30;
const MAX = Number.MAX_SAFE_INTEGER;

const sysctl = { appliesTo: ['host-sysctl', 'vm-guest'] as const, scenario: true };

/** The VM broker's data disk (harness/disk): set in the scenario's `vm.disk:` block, the scalar ones also per cell in settings:/matrix:. */
const vmDisk = { appliesTo: ['vm-disk'] as const };
/** vm.disk.errors / vm.disk.latency are lists and maps: only the `vm.disk:` block holds them. */
const blockOnly = (expected: string): ValueType => ({ type: 'block', expected, range: 'see meaning', parse: () => undefined, display: String, label: String });

export const SETTINGS: readonly Setting[] = [
  // Topic / log (engine/storage LogConfig).
  { name: 'io', type: enumType(IO_MODES, { direct: 'O_DIRECT', dsync: 'O_DSYNC' }), default: 'buffered', help: 'write path: buffered write(2) into the page cache, O_DIRECT, or O_DSYNC', appliesTo: ['topic'], scenario: true, label: 'io' },
  { name: 'flush', type: flushType(), default: 'never', help: 'flush policy: never (kernel writeback), after every batch, every N messages or every T ms', appliesTo: ['topic'], scenario: true, label: 'flush' },
  { name: 'flush.messages', type: integerType(1, MAX), unit: 'messages', help: "Kafka's name for flush=messages:N", appliesTo: ['topic'], scenario: false, label: 'flush every' },
  { name: 'flush.ms', type: durationMsType(1), unit: 'ms', why: 'a timer: Node holds at most 2^31-1 ms', help: "Kafka's name for flush=ms:T", appliesTo: ['topic'], scenario: false, label: 'flush every' },
  { name: 'sync', type: enumType(SYNC_CALLS), default: 'fdatasync', help: 'the call a flush makes: fsync or fdatasync', appliesTo: ['topic'], scenario: true, label: 'sync' },
  { name: 'log.fsync.error', type: enumType(FSYNC_ERROR_POLICIES), default: 'fail-stop', help: "when fsync/fdatasync fails (EIO): fail-stop takes the log offline until restart, as Kafka does (produce answers KAFKA_STORAGE_ERROR); retry logs the error, retries the call and acknowledges on success, the unsafe behaviour studied at ATC'20 (Linux marked the failed pages clean, so the retry succeeds without the data), kept for comparison", appliesTo: ['topic'], scenario: true, label: 'fsync error', why: 'retry is unsafe by design: it exists to measure what fail-stop prevents' },
  { name: 'segment.bytes', type: sizeType(BATCH_HEADER_BYTES, INT32_MAX), default: 1024 ** 3, unit: 'bytes', help: 'roll a segment at this size', appliesTo: ['topic'], scenario: true, label: 'segment', why: `a segment must hold at least one RecordBatch header (${BATCH_HEADER_BYTES} bytes); Kafka stores it as int32` },
  { name: 'segment.ms', type: durationMsType(1, MAX), default: 7 * 86_400_000, unit: 'ms', help: 'roll a segment at this age', appliesTo: ['topic'], scenario: true, label: 'roll', why: 'compared with batch timestamps, never used as a timer' },
  { name: 'segment.index.bytes', type: sizeType(MIN_INDEX_BYTES, INT32_MAX), default: 10 * 1024 ** 2, unit: 'bytes', help: 'offset/time index size limit per segment (a full index rolls the segment)', appliesTo: ['topic'], scenario: true, label: 'index max', why: `the time index keeps its last slot for the roll entry: ${MIN_INDEX_BYTES} bytes is the smallest index that holds anything` },
  { name: 'index.interval.bytes', type: sizeType(0, INT32_MAX), default: 4096, unit: 'bytes', help: 'bytes between sparse index entries', appliesTo: ['topic'], scenario: true, label: 'index interval' },
  { name: 'message.max.bytes', type: sizeType(BATCH_HEADER_BYTES, MAX_BATCH_LIMIT), default: DEFAULT_MAX_BATCH_BYTES, unit: 'bytes', help: 'largest batch (and produce body) accepted', appliesTo: ['broker', 'topic'], scenario: true, label: 'max batch', flag: 'max-batch-bytes', why: 'io=direct stages a batch in an aligned WebAssembly buffer, which stays below 4 GiB' },
  // Replication.
  { name: 'min.insync.replicas', type: integerType(1, INT32_MAX), default: 1, unit: 'replicas', help: 'acks=all needs this many in-sync replicas (a scenario defaults to cluster.minInsyncReplicas); the controller reads it too, for eligible.leader.replicas', appliesTo: ['broker', 'topic', 'controller'], scenario: true, label: 'min ISR' },
  { name: 'replica.lag.time.max.ms', type: durationMsType(1), default: 30_000, unit: 'ms', help: 'a follower not caught up for this long leaves the ISR', appliesTo: ['broker'], scenario: true, label: 'replica lag max' },
  { name: 'replica.fetch.wait.max.ms', type: durationMsType(0, 60_000), default: 500, unit: 'ms', help: 'follower long-poll wait', appliesTo: ['broker'], scenario: false, label: 'fetch wait' },
  { name: 'replica.fetch.max.bytes', type: sizeType(1, MAX), default: 1 << 20, unit: 'bytes', help: 'bytes per follower fetch (one batch always fits)', appliesTo: ['broker'], scenario: false, label: 'fetch max' },
  { name: 'replica.fetch.backoff.ms', type: durationMsType(1, 60_000), default: 100, unit: 'ms', help: 'follower pause after a failed fetch, doubling to 2 s', appliesTo: ['broker'], scenario: false, label: 'fetch backoff' },
  { name: 'broker.heartbeat.interval.ms', type: durationMsType(1, 60_000), default: 100, unit: 'ms', help: 'heartbeat period to the controller', appliesTo: ['broker'], scenario: false, label: 'heartbeat', aliases: ['heartbeat.interval.ms'] },
  { name: 'fetch.max.bytes', type: sizeType(1024, 1 << 30), default: 50 * 1024 * 1024, unit: 'bytes', help: 'a fetch is answered with at most this many bytes, whatever it asks (one batch larger than this is still served whole); 50 MiB is Kafka\'s consumer default (its broker default is 55 MiB)', appliesTo: ['broker'], scenario: false, label: 'consumer fetch max' },
  { name: 'fetch.transfer', type: enumType(['sendfile', 'copy']), default: 'sendfile', help: "how the Kafka listener sends a consumer Fetch's records: sendfile = zero-copy, sendfile(2) from the segment files to the socket on a worker thread, as Kafka's FileRecords.transferTo (dist/sendfile.node; where it is not built, the copy path, and the broker's log says why); copy = read them into memory, then write them (what a broker without sendfile does, kept for comparison)", appliesTo: ['broker'], scenario: true, label: 'fetch' },
  { name: 'max.connections', type: integerType(1, 1_000_000), default: 1000, unit: 'connections', help: 'open client connections at most; further ones are closed on accept (Kafka: unlimited; 1000 covers a benchmark many times over and keeps a socket flood from exhausting memory)', appliesTo: ['broker'], scenario: false, label: 'max connections' },
  { name: 'kafka.port', type: integerType(-1, 65535), default: 0, unit: 'port', help: 'Kafka protocol listener port on the --listen host (0: any free port, kept when the cluster restarts a broker; -1: no listener)', appliesTo: ['broker'], scenario: false, label: 'kafka port' },
  { name: 'socket.request.max.bytes', type: sizeType(1024, 0x7fffffff), default: 104_857_600, unit: 'bytes', help: 'largest Kafka request frame, checked on its size prefix before it is read (Kafka\'s default, 100 MiB)', appliesTo: ['broker'], scenario: false, label: 'max request frame' },
  { name: 'request.timeout.ms', type: durationMsType(1), default: 30_000, unit: 'ms', help: 'acks=all timeout when a produce names no timeoutMs', appliesTo: ['broker'], scenario: false, label: 'request timeout' },
  { name: 'http.keepalive.timeout.ms', type: durationMsType(1), default: 30_000, unit: 'ms', help: 'idle keep-alive connections close after this', appliesTo: ['broker'], scenario: false, label: 'keep-alive' },
  { name: 'http.headers.timeout.ms', type: durationMsType(1), default: 10_000, unit: 'ms', help: 'clients must send their headers within this (at most http.request.timeout.ms)', appliesTo: ['broker'], scenario: false, label: 'headers timeout' },
  { name: 'http.request.timeout.ms', type: durationMsType(1), default: 30_000, unit: 'ms', help: 'clients must send the whole request within this', appliesTo: ['broker'], scenario: false, label: 'request body timeout' },
  // Controller (brokers ignore these so one file can configure a whole cluster).
  { name: 'broker.session.timeout.ms', type: durationMsType(1), default: 1500, unit: 'ms', help: 'a broker silent this long is fenced', appliesTo: ['controller'], scenario: false, label: 'session timeout' },
  { name: 'unclean.leader.election.enable', type: booleanType(), default: false, help: 'elect an out-of-sync replica when no ISR member is alive', appliesTo: ['controller', 'topic'], scenario: true, label: 'unclean' },
  { name: 'eligible.leader.replicas', type: booleanType(), default: true, help: "KIP-966, as Kafka 4.4 formats a new cluster (its eligible.leader.replicas.version=1; false maps to 0): when the ISR shrinks below min.insync.replicas, the replicas that left it while it was at or below the minimum become eligible leader replicas; with the ISR empty the controller elects one of them, and a broker that restarts without a clean shutdown (a partition log without its clean-shutdown marker) leaves every ISR and ELR, so a leader that lost its unflushed tail is not elected again over a replica that has it. false: the last ISR member stays in the ISR and is elected again when it returns, whatever it lost (KIP-841)", appliesTo: ['controller'], scenario: true, label: 'ELR' },
  { name: 'controller.tick.ms', type: durationMsType(1, 10_000), default: 100, unit: 'ms', help: 'how often the controller checks sessions', appliesTo: ['controller'], scenario: false, label: 'tick' },
  // Producer.
  { name: 'acks', type: acksType(), default: 'all', help: "replicas that must have a batch before it is acknowledged (the Java producer's default since Kafka 3.0)", appliesTo: ['producer'], scenario: true, label: 'acks' },
  // Kernel writeback (process target: the host's global sysctls; vm target: the guest's). No default: the kernel's apply.
  // The VM data disk (vm target; harness/model/disk-spec.ts reads the vm.disk: block).
  { name: 'vm.disk.model', type: enumType(['file', 'volatile-cache']), default: 'file', help: "the VM broker's data disk: file = a sparse host file under virtio-blk (no volatile cache: every write QEMU passed on survives a cut); volatile-cache = the harness's NBD server, which keeps unflushed writes in memory until the guest's FLUSH (or a FUA write) and loses them at a power cut as vm.disk.onCut says; every WRITE/FLUSH/TRIM goes to a write log on the host clock", ...vmDisk, scenario: true, label: 'disk' },
  { name: 'vm.disk.onCut', type: enumType(['drop-unflushed', 'random-subset', 'reorder', 'torn']), default: 'drop-unflushed', help: 'volatile-cache: what a power cut does to unflushed writes (seeded from the trial seed; crash-states onCut means the same, harness/disk/on-cut.ts): drop-unflushed loses all; random-subset keeps each run of each write (its contiguous sectors within one 4 KiB-aligned block) with p=1/2; reorder keeps a non-empty suffix of them and loses the non-empty run of writes before it; torn keeps them in order up to one write that persists only a proper prefix of its 512-byte sectors', ...vmDisk, scenario: true, label: 'on cut' },
  { name: 'vm.disk.flush', type: enumType(['honoured', 'ignored']), default: 'honoured', help: 'volatile-cache: honoured persists the cache at FLUSH and a FUA write at once; ignored is a lying drive that acknowledges both and persists nothing until a clean power-down', ...vmDisk, scenario: true, label: 'disk flush' },
  { name: 'vm.disk.writeLogLimit', type: sizeType(64 * 1024, MAX), default: 1024 ** 3, unit: 'bytes', help: "volatile-cache: the NBD write log's size limit per disk; a request that would pass it is refused (ENOSPC to the guest) and the trial fails with the write log's message", ...vmDisk, scenario: true, label: 'write log max' },
  { name: 'vm.disk.errors', type: blockOnly('a list of {on: write|flush, nth: N, mode: once|sticky} or {on: sectors, from: S, to: S, mode: once|sticky}'), help: 'volatile-cache: injected EIO, a list in the vm.disk: block: `{on: write, nth: N}` fails the Nth WRITE the disk receives (counted from its first boot; also TRIM/WRITE_ZEROES), `{on: flush, nth: N}` the Nth FLUSH, `{on: sectors, from: S, to: S}` every write touching 512-byte sectors S..S; mode once (default for nth) or sticky (default for sectors: every later match fails too). Failed requests change nothing and are not in the write log', ...vmDisk, scenario: false, label: 'disk errors' },
  { name: 'vm.disk.latency', type: blockOnly('{perOp: 200us, jitter: 100us, stallEvery: 10s, stallFor: 500ms}'), help: 'volatile-cache: per-request delay in the vm.disk: block: perOp fixed, plus a uniform jitter in [0, jitter] (seeded), and stalls: at the end of every stallEvery of the disk\'s life, requests wait out a stall of stallFor (requests are served one at a time, so a stall holds everything behind it)', ...vmDisk, scenario: false, label: 'disk latency' },
  { name: 'vm.dirty_expire_centisecs', type: centisecsType(), unit: 'centisecs', help: 'dirty pages older than this are written back', ...sysctl, label: 'dirty expire' },
  { name: 'vm.dirty_writeback_centisecs', type: centisecsType(), unit: 'centisecs', help: 'period of the writeback flusher threads', ...sysctl, label: 'dirty writeback' },
  { name: 'vm.dirty_background_ratio', type: integerType(0, 100), unit: 'percent', help: 'background writeback starts at this % of available memory dirty', ...sysctl, label: 'dirty bg ratio', exclusiveWith: 'vm.dirty_background_bytes' },
  { name: 'vm.dirty_background_bytes', type: sizeType(1, MAX), unit: 'bytes', help: 'background writeback starts at this many dirty bytes', ...sysctl, label: 'dirty bg bytes', exclusiveWith: 'vm.dirty_background_ratio', why: 'the kernel rejects 0' },
  { name: 'vm.dirty_ratio', type: integerType(0, 100), unit: 'percent', help: 'writers block at this % of available memory dirty', ...sysctl, label: 'dirty ratio', exclusiveWith: 'vm.dirty_bytes' },
  { name: 'vm.dirty_bytes', type: sizeType(8192, MAX), unit: 'bytes', help: 'writers block at this many dirty bytes', ...sysctl, label: 'dirty bytes', exclusiveWith: 'vm.dirty_ratio', why: 'the kernel rejects less than two pages' },
];

const byName = new Map<string, Setting>();
for (const s of SETTINGS) for (const key of [s.name, ...(s.aliases ?? [])]) byName.set(key, s);

/** The setting a key names (aliases included), or undefined. */
export function findSetting(key: string): Setting | undefined {
  return byName.get(key);
}

export function getSetting(name: string): Setting {
  const s = byName.get(name);
  if (!s) throw new Error(`unknown setting '${name}'`);
  return s;
}

/** Its default, for settings that have one (throws otherwise: a caller asking for it has a bug). */
export function settingDefault<T extends SettingValue = SettingValue>(name: string): T {
  const s = getSetting(name);
  if (s.default === undefined) throw new Error(`setting '${name}' has no default`);
  return s.default as T;
}

export const SCENARIO_SETTINGS: readonly Setting[] = SETTINGS.filter((s) => s.scenario);

export function isSysctl(s: Setting): boolean {
  return s.appliesTo.includes('host-sysctl');
}

/** Read by brokers or the controller from .properties/.json and `--set`. */
export function isServerSetting(s: Setting): boolean {
  return s.appliesTo.some((a) => a === 'topic' || a === 'broker' || a === 'controller');
}

/** Pairs where writing one makes the kernel zero the other: a layer may set only one. */
export const SYSCTL_EXCLUSIVE: ReadonlyArray<[string, string]> = SETTINGS.flatMap((s, i) =>
  s.exclusiveWith !== undefined && SETTINGS.findIndex((o) => o.name === s.exclusiveWith) > i ? [[s.name, s.exclusiveWith] as [string, string]] : [],
);

/** A value for `name` given as text (flag, .properties, --set); the error names `where` and the accepted form. */
export function parseSettingText(name: string, text: string, where: string): SettingValue {
  const s = getSetting(name);
  const v = s.type.parse(text);
  if (v === undefined) throw new Error(`${where}: expected ${s.type.expected}, got '${text}'`);
  return v;
}
