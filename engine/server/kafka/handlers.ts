// What the Kafka listener does with each decoded request. Produce and Fetch go through the same
// Partition calls as the HTTP routes (appendAsLeader with acks / min ISR / delayed produce,
// readForConsumer + waitForData long polls); Metadata answers from the controller's view the
// broker received with its last heartbeat (leaders, replicas, ISR, leader epochs, Kafka ports).
import { createHash } from 'node:crypto';
import { recordsOf } from '../../records/index.ts';
import { BrokerError, asBrokerError, type Acks, type Partition, type PartitionAssignment } from '../../replication/index.ts';
import { StorageError } from '../../storage/errors.ts';
import { CorruptBatchError } from '../../records/errors.ts';
import { kafkaErrorCode, type ProtocolErrorName } from '../../protocol/error-codes.ts';
import { API_VERSIONS } from '../../protocol/messages.ts';
import type { Struct } from '../../protocol/schema.ts';
import type { KafkaErrorName } from '../../replication/errors.ts';
import type { ProducerStates } from './producer-state.ts';
import type { ConfigEntry } from './config-view.ts';
import { FileRegions } from '../../protocol/spliced-frame.ts';
import { pinRegions, releaseRegions, type FetchTransfer } from './zero-copy.ts';

/** What the handlers need from the broker (engine/server/broker.ts implements it). */
export interface KafkaBrokerView {
  readonly id: number;
  partition(topic: string, partition: number): Partition | undefined;
  /** Cluster brokers (with their Kafka host:port) and every partition, as of the last heartbeat. */
  clusterView(): { brokers: ReadonlyArray<{ id: number; alive: boolean; kafka?: string }>; partitions: readonly PartitionAssignment[] };
  createTopic(name: string, partitions: number, replicationFactor: number): Promise<void>;
  /** AlterPartitionReassignments (a new order of the same replicas) and ElectLeaders PREFERRED, decided by the controller. */
  reorderReplicas(topic: string, partition: number, replicas: number[]): Promise<void>;
  electPreferred(topic: string, partition: number): Promise<void>;
  /** DescribeConfigs: the broker's and a topic's configs in Kafka's names. */
  configView(): { broker: ConfigEntry[]; topic: ConfigEntry[] };
}

const MAX_FETCH_WAIT_MS = 60_000;
const MAX_PRODUCE_TIMEOUT_MS = 300_000;

export interface Failure {
  code: number;
  message: string;
  name: string;
}

export function failure(err: unknown): Failure {
  if (err instanceof BrokerError) return { code: kafkaErrorCode(err.code), message: err.message, name: err.code };
  // A storage failure (the storage layer's own errors, a corrupt stored batch, an errno from the
  // file system: EIO on a read of a bad block) is answered as the HTTP API answers it, mapped once
  // (engine/replication/errors.ts asBrokerError): KAFKA_STORAGE_ERROR, CORRUPT_MESSAGE, ...
  if (err instanceof StorageError || err instanceof CorruptBatchError || /^E[A-Z0-9]+$/.test(String((err as NodeJS.ErrnoException | null)?.code ?? ''))) {
    const be = asBrokerError(err, 'storage');
    return { code: kafkaErrorCode(be.code), message: be.message, name: be.code };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: kafkaErrorCode('UNKNOWN_SERVER_ERROR'), message, name: 'UNKNOWN_SERVER_ERROR' };
}

function named(name: KafkaErrorName | ProtocolErrorName, message: string): Failure {
  return { code: kafkaErrorCode(name), message, name };
}

export interface HandlerStats {
  errors: Record<string, number>;
  /** Retried idempotent batches answered with their first offsets (appended once). */
  duplicateBatches: number;
  /** Records bytes of consumer fetches by how they were answered (sendfile: zero-copy; copy: read into memory). */
  fetchBytes: { sendfile: number; copy: number };
}

export function count(stats: HandlerStats, name: string): void {
  stats.errors[name] = (stats.errors[name] ?? 0) + 1;
}

/** Leader check plus KIP-320's CurrentLeaderEpoch fencing (-1 = the client does not know). */
function leaderFor(broker: KafkaBrokerView, topic: string, index: number, currentLeaderEpoch: number): Partition {
  const p = broker.partition(topic, index);
  if (!p) {
    // A partition of the cluster that lives elsewhere: the client's metadata is stale.
    const elsewhere = broker.clusterView().partitions.find((x) => x.topic === topic && x.partition === index);
    if (elsewhere) throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `broker ${broker.id} has no replica of ${topic}-${index} (leader: ${elsewhere.leader})`);
    throw new BrokerError('UNKNOWN_TOPIC_OR_PARTITION', `broker ${broker.id} has no replica of ${topic}-${index}`);
  }
  if (p.role !== 'leader') throw new BrokerError('NOT_LEADER_OR_FOLLOWER', `broker ${broker.id} is not the leader of ${topic}-${index} (leader: ${p.leaderId})`);
  if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== p.leaderEpoch) {
    const name = currentLeaderEpoch < p.leaderEpoch ? 'FENCED_LEADER_EPOCH' : 'UNKNOWN_LEADER_EPOCH';
    throw Object.assign(new Error(`${topic}-${index}: client leader epoch ${currentLeaderEpoch}, broker's ${p.leaderEpoch}`), { kafkaName: name });
  }
  return p;
}

function failureOf(err: unknown): Failure {
  const k = (err as { kafkaName?: ProtocolErrorName }).kafkaName;
  if (k) return named(k, (err as Error).message);
  // The engine stores uncompressed batches only: Kafka's name for that refusal.
  if (err instanceof BrokerError && err.details.reason === 'unsupported-compression') return named('UNSUPPORTED_COMPRESSION_TYPE', err.message);
  return failure(err);
}

// ------------------------------------------------------------------------------- ApiVersions

export function apiVersionsBody(errorCode = 0): Struct {
  return { ErrorCode: errorCode, ApiKeys: API_VERSIONS.map((a) => ({ ApiKey: a.key, MinVersion: a.advertisedMinVersion ?? a.minVersion, MaxVersion: a.maxVersion })), ThrottleTimeMs: 0 };
}

// ------------------------------------------------------------------------------- Metadata

function parseHostPort(s: string): { host: string; port: number } | null {
  const i = s.lastIndexOf(':');
  if (i <= 0) return null;
  const port = Number(s.slice(i + 1));
  return Number.isInteger(port) && port > 0 ? { host: s.slice(0, i).replace(/^\[|\]$/g, ''), port } : null;
}

/** The cluster id durolab's Metadata and DescribeCluster give. */
export const DUROLAB_CLUSTER_ID = 'durolab';

/** A stable topic id (Metadata v10+ shows one; durolab routes by name). */
export function topicId(name: string): Buffer {
  return createHash('sha256').update(`durolab-topic:${name}`).digest().subarray(0, 16);
}

/** The null topic id (Kafka's Uuid.ZERO_UUID): answers name no topic with it; never written to. */
const ZERO_TOPIC_ID = Buffer.alloc(16);

/** Topic names by their id (hex): an id is a pure function of its name, so an entry never goes wrong. */
const topicNamesById = new Map<string, string>();

/** The topic a topic id names (Fetch v13+ asks by id), or null: looked up among the names the cluster knows on a miss. */
function topicNameOf(broker: KafkaBrokerView, id: Buffer): string | null {
  const hex = id.toString('hex');
  const known = topicNamesById.get(hex);
  if (known !== undefined) return known;
  const seen = new Set<string>();
  for (const p of broker.clusterView().partitions) {
    if (seen.has(p.topic)) continue;
    seen.add(p.topic);
    topicNamesById.set(topicId(p.topic).toString('hex'), p.topic);
  }
  return topicNamesById.get(hex) ?? null;
}

export function metadata(broker: KafkaBrokerView, version: number, body: Struct): Struct {
  const view = broker.clusterView();
  const brokers = view.brokers
    .filter((b) => b.alive && b.kafka)
    .map((b) => ({ id: b.id, addr: parseHostPort(b.kafka!) }))
    .filter((b) => b.addr !== null)
    .sort((a, b) => a.id - b.id);
  const alive = new Set(view.brokers.filter((b) => b.alive).map((b) => b.id));
  const byTopic = new Map<string, PartitionAssignment[]>();
  for (const p of view.partitions) {
    let list = byTopic.get(p.topic);
    if (!list) byTopic.set(p.topic, (list = []));
    list.push(p);
  }
  const requested = body.Topics as Array<{ Name: string | null }> | null;
  const names = requested === null ? [...byTopic.keys()].sort() : requested.map((t) => t.Name ?? '');
  const topics = names.map((name) => {
    const parts = byTopic.get(name);
    if (!parts) return { ErrorCode: kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'), Name: name, TopicId: Buffer.alloc(16), IsInternal: false, Partitions: [] };
    return {
      ErrorCode: 0,
      Name: name,
      TopicId: topicId(name),
      IsInternal: false,
      Partitions: [...parts]
        .sort((a, b) => a.partition - b.partition)
        .map((p) => ({
          ErrorCode: p.leader < 0 ? kafkaErrorCode('LEADER_NOT_AVAILABLE') : 0,
          PartitionIndex: p.partition,
          LeaderId: p.leader,
          LeaderEpoch: p.leaderEpoch,
          ReplicaNodes: p.replicas,
          IsrNodes: p.isr,
          OfflineReplicas: p.replicas.filter((id) => !alive.has(id)),
        })),
    };
  });
  void version;
  return {
    ThrottleTimeMs: 0,
    Brokers: brokers.map((b) => ({ NodeId: b.id, Host: b.addr!.host, Port: b.addr!.port, Rack: null })),
    ClusterId: DUROLAB_CLUSTER_ID,
    // Clients send CreateTopics to the "controller"; any durolab broker forwards it.
    ControllerId: brokers.length ? brokers[0].id : -1,
    Topics: topics,
  };
}

// ------------------------------------------------------------------------------- Produce

function acksOf(n: number): Acks | null {
  return n === -1 ? 'all' : n === 1 ? 1 : n === 0 ? 0 : null;
}

/** Null: acks=0, Kafka sends no response. Appends start synchronously, in request order. */
export function produce(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats, producers: ProducerStates): Promise<Struct> | null {
  const acks = acksOf(body.Acks as number);
  const timeoutMs = Math.min(Math.max(1, body.TimeoutMs as number), MAX_PRODUCE_TIMEOUT_MS);
  const transactional = body.TransactionalId !== null;
  const topics = body.TopicData as Array<{ Name: string; PartitionData: Array<{ Index: number; Records: Buffer | null }> }>;
  const results = topics.map((t) => ({
    Name: t.Name,
    parts: t.PartitionData.map(async (pd) => {
      const base = { Index: pd.Index, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1, RecordErrors: [], ErrorMessage: null as string | null };
      try {
        if (acks === null) throw Object.assign(new Error(`acks must be -1, 0 or 1, got ${String(body.Acks)}`), { kafkaName: 'INVALID_REQUIRED_ACKS' });
        if (transactional) throw Object.assign(new Error('transactions are not supported by durolab'), { kafkaName: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' });
        if (pd.Records === null || pd.Records.length === 0) throw new BrokerError('CORRUPT_MESSAGE', `produce ${t.Name}-${pd.Index}: no records`);
        const p = leaderFor(broker, t.Name, pd.Index, -1);
        const { verdict, header } = producers.check(p, pd.Records);
        if (verdict.kind === 'out-of-order') throw Object.assign(new Error(verdict.message), { kafkaName: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
        if (verdict.kind === 'fenced') throw Object.assign(new Error(verdict.message), { kafkaName: 'INVALID_PRODUCER_EPOCH' });
        if (verdict.kind === 'duplicate') {
          // Like a delayed produce: acks=all hears back once the original is committed.
          if (acks === 'all' && p.highWatermark <= verdict.lastOffset) await p.waitForData(verdict.lastOffset, timeoutMs, false);
          if (acks === 'all' && p.highWatermark <= verdict.lastOffset) {
            throw new BrokerError(p.role === 'leader' ? 'REQUEST_TIMED_OUT' : 'NOT_LEADER_OR_FOLLOWER', `${t.Name}-${pd.Index}: duplicate of offsets ${verdict.baseOffset}..${verdict.lastOffset}, not committed within ${timeoutMs} ms`);
          }
          // Kafka (UnifiedLog.append with a duplicate from analyzeAndValidateProducerState)
          // answers NONE with the first append's offsets; counted here so a retry stays visible.
          stats.duplicateBatches++;
          return { ...base, ErrorCode: 0, BaseOffset: verdict.baseOffset, LogStartOffset: p.logStartOffset };
        }
        const leoBefore = p.logEndOffset;
        const pending = p.appendAsLeader(pd.Records, { acks, timeoutMs });
        // The log append itself is synchronous: record the producer's batch before any other request runs.
        if (header && p.logEndOffset > leoBefore) producers.appended(p, header, leoBefore, p.logEndOffset - 1);
        const r = await pending;
        return { ...base, ErrorCode: 0, BaseOffset: r.baseOffset, LogStartOffset: p.logStartOffset };
      } catch (err) {
        const f = failureOf(err);
        count(stats, f.name);
        return { ...base, ErrorCode: f.code, ErrorMessage: f.message };
      }
    }),
  }));
  const all = Promise.all(results.map(async (t) => ({ Name: t.Name, PartitionResponses: await Promise.all(t.parts) }))).then((Responses) => ({ Responses, ThrottleTimeMs: 0 }));
  if (acks === 0) {
    void all;
    return null;
  }
  void version;
  return all;
}

// ------------------------------------------------------------------------------- Fetch

interface FetchPartitionReq {
  Partition: number;
  CurrentLeaderEpoch: number;
  FetchOffset: number;
  PartitionMaxBytes: number;
}

/**
 * Fetch. With transfer 'sendfile' each partition's records are FileRegions (file slices on
 * descriptors of their own) that the listener sends with sendfile(2); with 'copy' (or where the
 * addon is missing, or a descriptor cannot be duplicated) they are read into a Buffer.
 */
export async function fetch(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats, transfer: FetchTransfer = 'copy'): Promise<Struct> {
  // v13+ names topics by id: resolved once per request (UNKNOWN_TOPIC_ID per partition when unknown).
  const topics = (body.Topics as Array<{ Topic: string; TopicId?: Buffer; Partitions: FetchPartitionReq[] }>).map((t) => ({
    ...t,
    Topic: version >= 13 ? (topicNameOf(broker, t.TopicId ?? ZERO_TOPIC_ID) ?? '') : t.Topic,
  }));
  const maxWaitMs = Math.min(Math.max(0, body.MaxWaitMs as number), MAX_FETCH_WAIT_MS);
  const minBytes = Math.max(0, body.MinBytes as number);
  const maxBytes = Math.max(1, body.MaxBytes as number);
  const forReplica = (body.ReplicaId as number) >= 0;

  /** One partition's records, as file regions or read into memory. */
  const readRecords = (p: Partition, offset: number, limit: number): { records: Buffer | FileRegions; bytes: number; highWatermark: number; logStartOffset: number } => {
    if (limit === 0) return { ...p.readForConsumer(offset, 1), records: Buffer.alloc(0), bytes: 0 };
    if (transfer === 'sendfile') {
      const s = p.sliceForConsumer(offset, limit);
      if (s.bytes === 0) return { records: Buffer.alloc(0), bytes: 0, highWatermark: s.highWatermark, logStartOffset: s.logStartOffset };
      const pinned = pinRegions(s.slices);
      if (pinned) {
        stats.fetchBytes.sendfile += s.bytes;
        return { records: pinned, bytes: s.bytes, highWatermark: s.highWatermark, logStartOffset: s.logStartOffset };
      }
    }
    const r = p.readForConsumer(offset, limit);
    stats.fetchBytes.copy += r.data.length;
    return { records: r.data, bytes: r.data.length, highWatermark: r.highWatermark, logStartOffset: r.logStartOffset };
  };

  const readAll = (): { responses: Struct[]; bytes: number; waitOn: Array<{ p: Partition; offset: number }>; pinned: FileRegions[] } => {
    let budget = maxBytes;
    let bytes = 0;
    const waitOn: Array<{ p: Partition; offset: number }> = [];
    const pinned: FileRegions[] = [];
    const responses = topics.map((t) => ({
      Topic: t.Topic,
      TopicId: t.TopicId ?? ZERO_TOPIC_ID,
      Partitions: t.Partitions.map((fp) => {
        const base = { PartitionIndex: fp.Partition, HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, AbortedTransactions: [], PreferredReadReplica: -1, Records: Buffer.alloc(0) };
        if (t.Topic === '' && version >= 13) {
          count(stats, 'UNKNOWN_TOPIC_ID');
          return { ...base, ErrorCode: kafkaErrorCode('UNKNOWN_TOPIC_ID') };
        }
        try {
          if (forReplica) throw new BrokerError('INVALID_REQUEST', `fetch ${t.Topic}-${fp.Partition}: replica fetches (ReplicaId ${String(body.ReplicaId)}) go over durolab's HTTP API, not the Kafka listener`);
          const p = leaderFor(broker, t.Topic, fp.Partition, fp.CurrentLeaderEpoch);
          // Kafka returns at least one batch (the first non-empty partition's) even above the
          // limits; once the response is full, later partitions answer with no records.
          const limit = bytes > 0 && budget <= 0 ? 0 : Math.max(1, Math.min(fp.PartitionMaxBytes, budget));
          const r = readRecords(p, fp.FetchOffset, limit);
          if (r.records instanceof FileRegions) pinned.push(r.records);
          budget = Math.max(0, budget - r.bytes);
          bytes += r.bytes;
          if (r.bytes === 0) waitOn.push({ p, offset: fp.FetchOffset });
          return { ...base, ErrorCode: 0, HighWatermark: r.highWatermark, LastStableOffset: r.highWatermark, LogStartOffset: r.logStartOffset, Records: r.records };
        } catch (err) {
          const f = failureOf(err);
          count(stats, f.name);
          const p = broker.partition(t.Topic, fp.Partition);
          const leader = version >= 12 && p && f.name === 'NOT_LEADER_OR_FOLLOWER' ? { CurrentLeader: { LeaderId: p.leaderId, LeaderEpoch: p.leaderEpoch } } : {};
          return { ...base, ErrorCode: f.code, ...leader };
        }
      }),
    }));
    return { responses, bytes, waitOn, pinned };
  };

  let r = readAll();
  if (r.bytes < Math.max(1, minBytes) && maxWaitMs > 0 && r.waitOn.length > 0) {
    // The first answer is dropped: its descriptors go with it.
    for (const f of r.pinned) releaseRegions(f.regions);
    await Promise.race(r.waitOn.map((w) => w.p.waitForData(w.offset, maxWaitMs, false)));
    r = readAll();
  }
  return { ThrottleTimeMs: 0, ErrorCode: 0, SessionId: 0, Responses: r.responses };
}

// ------------------------------------------------------------------------------- ListOffsets

const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;

export function listOffsets(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats): Struct {
  const topics = body.Topics as Array<{ Name: string; Partitions: Array<{ PartitionIndex: number; CurrentLeaderEpoch: number; Timestamp: number }> }>;
  void version;
  return {
    ThrottleTimeMs: 0,
    Topics: topics.map((t) => ({
      Name: t.Name,
      Partitions: t.Partitions.map((lp) => {
        try {
          const p = leaderFor(broker, t.Name, lp.PartitionIndex, lp.CurrentLeaderEpoch);
          const found = offsetFor(p, lp.Timestamp);
          return { PartitionIndex: lp.PartitionIndex, ErrorCode: 0, Timestamp: found.timestamp, Offset: found.offset, LeaderEpoch: p.leaderEpoch };
        } catch (err) {
          const f = failureOf(err);
          count(stats, f.name);
          return { PartitionIndex: lp.PartitionIndex, ErrorCode: f.code, Timestamp: -1, Offset: -1, LeaderEpoch: -1 };
        }
      }),
    })),
  };
}

function offsetFor(p: Partition, ts: number): { offset: number; timestamp: number } {
  if (ts === LATEST) return { offset: p.highWatermark, timestamp: -1 };
  if (ts === EARLIEST) return { offset: p.logStartOffset, timestamp: -1 };
  if (ts === MAX_TIMESTAMP) {
    throw new BrokerError('INVALID_REQUEST', `ListOffsets ${p.topic}-${p.partition}: the max-timestamp lookup (-3) is not supported by durolab`);
  }
  if (ts < 0) throw new BrokerError('INVALID_REQUEST', `ListOffsets ${p.topic}-${p.partition}: timestamp ${ts} is neither -1, -2 nor >= 0`);
  const offset = p.log.offsetForTimestamp(ts);
  if (offset === null || offset >= p.highWatermark) return { offset: -1, timestamp: -1 };
  const data = p.log.read(offset, 1, p.highWatermark).data;
  for (const rec of recordsOf(data)) if (rec.offset === offset) return { offset, timestamp: rec.timestamp };
  return { offset, timestamp: ts };
}

// ------------------------------------------------------------------------------- InitProducerId

/**
 * Producer ids unique across brokers and restarts without a coordinator: broker id in the high
 * bits, a millisecond clock (never repeating) below. Epochs start at 0 and are bumped when a
 * client re-initialises its id (v3+).
 */
export class ProducerIdAllocator {
  private last = 0;
  constructor(private readonly brokerId: number) {
    if (brokerId >= 4096) throw new Error(`producer ids need broker ids below 4096, got ${brokerId}`);
  }

  next(): number {
    this.last = Math.max(this.last + 1, Date.now());
    return this.brokerId * 2 ** 41 + this.last;
  }
}

export function initProducerId(alloc: ProducerIdAllocator, body: Struct): Struct {
  if (body.TransactionalId !== null) {
    return { ThrottleTimeMs: 0, ErrorCode: kafkaErrorCode('TRANSACTIONAL_ID_AUTHORIZATION_FAILED'), ProducerId: -1, ProducerEpoch: -1 };
  }
  // Without a transactional id Kafka's coordinator always hands out a new producer id at epoch 0,
  // whatever id and epoch the request carries (an idempotent producer bumps its epoch itself,
  // KIP-360): echoing the request's id would give every client that sends 0/0 the same id.
  return { ThrottleTimeMs: 0, ErrorCode: 0, ProducerId: alloc.next(), ProducerEpoch: 0 };
}

// ------------------------------------------------------------------------------- CreateTopics

export async function createTopics(broker: KafkaBrokerView, version: number, body: Struct, stats: HandlerStats): Promise<Struct> {
  const topics = body.Topics as Array<{ Name: string; NumPartitions: number; ReplicationFactor: number; Assignments: unknown[] }>;
  void version;
  const results = await Promise.all(
    topics.map(async (t) => {
      const partitions = t.NumPartitions === -1 ? 1 : t.NumPartitions;
      const rf = t.ReplicationFactor === -1 ? 1 : t.ReplicationFactor;
      const base = { Name: t.Name, TopicId: topicId(t.Name), NumPartitions: partitions, ReplicationFactor: rf, Configs: [] };
      try {
        if (t.Assignments.length > 0) throw new BrokerError('INVALID_REQUEST', `CreateTopics ${t.Name}: manual replica assignments are not supported; give NumPartitions and ReplicationFactor`);
        if (!body.validateOnly) await broker.createTopic(t.Name, partitions, rf);
        return { ...base, ErrorCode: 0, ErrorMessage: null };
      } catch (err) {
        const f = failure(err);
        count(stats, f.name);
        return { ...base, TopicId: Buffer.alloc(16), NumPartitions: -1, ReplicationFactor: -1, ErrorCode: f.code, ErrorMessage: f.message };
      }
    }),
  );
  return { ThrottleTimeMs: 0, Topics: results };
}
