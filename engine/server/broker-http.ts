// The broker's HTTP routes (REPLICATION-DESIGN.md "HTTP API"). The produce route is the hot
// path: a binary body is read once into one buffer and handed to Partition.appendAsLeader
// without parsing; everything that can be rejected is rejected before the body is read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isUtf8 } from 'node:buffer';
import { encodeBatch, readI64, recordsOf, type RecordHeader, type RecordInput } from '../records/index.ts';
import { type Acks, type Partition, BrokerError } from '../replication/index.ts';
import type { BrokerHost } from './broker-host.ts';
import { readConsumerChunks } from './fetch-read.ts';
import { hashLogRange } from './log-hash.ts';
import { partitionRangeQuery, serveReplicaLog } from './replica-read.ts';
import {
  ClientGoneError,
  intParam,
  invalid,
  mediaType,
  parseQuery,
  readBody,
  RECORD_BATCH_TYPE,
  sendError,
  sendJson,
  toBrokerError,
} from './http-util.ts';

const BINARY_TYPES = [RECORD_BATCH_TYPE, 'application/octet-stream'] as const;
export const PRODUCE_TYPES = [...BINARY_TYPES, 'application/json'] as const;
/** JSON escapes and field names make a JSON produce larger than the batch it becomes. */
export const JSON_BODY_SLACK = 64 * 1024;
const MAX_FETCH_WAIT_MS = 60_000;
const MAX_PRODUCE_TIMEOUT_MS = 300_000;

export function createBrokerHandler(broker: BrokerHost): (req: IncomingMessage, res: ServerResponse) => void {
  const stats = broker.httpStats;
  return (req, res) => {
    stats.requests++;
    route(broker, req, res).catch((err: unknown) => {
      if (err instanceof ClientGoneError) {
        stats.clientGone++;
        res.destroy();
        return;
      }
      const be = withLeaderUrl(broker, toBrokerError(err));
      stats.errors[be.code] = (stats.errors[be.code] ?? 0) + 1;
      if (be.code === 'KAFKA_STORAGE_ERROR') broker.noteStorageError(be);
      sendError(res, be, mustClose(req, be, broker.settings.messageMaxBytes + JSON_BODY_SLACK));
    });
  };
}

/**
 * An error answered before the body was read: node discards (reads) the rest of a small body
 * and keeps the connection; a body that is too large, of unknown length, or whose reading we
 * stopped must not be read at all, so the connection closes after the answer.
 */
function mustClose(req: IncomingMessage, e: BrokerError, cap: number): boolean {
  if (req.complete) return false;
  if (e.code === 'MESSAGE_TOO_LARGE' || req.readableFlowing === false) return true;
  const length = req.headers['content-length'];
  return length === undefined || !(Number(length) <= cap);
}

function withLeaderUrl(broker: BrokerHost, e: BrokerError): BrokerError {
  if (e.code !== 'NOT_LEADER_OR_FOLLOWER' || 'leaderUrl' in e.details) return e;
  const leader = typeof e.details.leader === 'number' ? e.details.leader : -1;
  return new BrokerError(e.code, e.message, { ...e.details, leader, leaderUrl: leader >= 0 ? (broker.peerUrl(leader) ?? null) : null });
}

function notFound(method: string, path: string): BrokerError {
  return new BrokerError(
    'INVALID_REQUEST',
    `no route ${method} ${path}: expected /v1/topics/{topic}/partitions/{p}/records, /v1/replication/topics/{topic}/partitions/{p}/epoch-end-offset, /v1/metrics, /v1/health, /v1/admin/log-hash or /v1/admin/replica-log`,
  );
}

function topicName(s: string): string {
  try {
    const t = decodeURIComponent(s);
    if (t !== '') return t;
  } catch {
    // fall through to the error naming the parameter
  }
  throw invalid('topic', 'a URL-encoded topic name in the path', s);
}

function partitionIndex(s: string): number {
  if (!/^\d{1,10}$/.test(s) || Number(s) > 0x7fffffff) throw invalid('partition', 'a partition number >= 0 in the path', s);
  return Number(s);
}

function methodNotAllowed(res: ServerResponse, allow: string, method: string, path: string): void {
  sendJson(res, 405, { error: 'INVALID_REQUEST', message: `${method} ${path}: method not allowed (allowed: ${allow})` }, { allow });
}

async function route(broker: BrokerHost, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const search = q < 0 ? '' : url.slice(q + 1);
  const method = req.method ?? 'GET';
  const stats = broker.httpStats;

  if (path.startsWith('/v1/topics/')) {
    const parts = path.slice('/v1/topics/'.length).split('/');
    if (parts.length !== 4 || parts[1] !== 'partitions' || parts[3] !== 'records') throw notFound(method, path);
    const topic = topicName(parts[0]);
    const index = partitionIndex(parts[2]);
    if (method === 'POST') {
      stats.byRoute.produce++;
      return produce(broker, req, res, topic, index, search);
    }
    if (method === 'GET') return fetch(broker, req, res, topic, index, search);
    return methodNotAllowed(res, 'GET, POST', method, path);
  }
  if (path.startsWith('/v1/replication/topics/')) {
    const parts = path.slice('/v1/replication/topics/'.length).split('/');
    if (parts.length !== 4 || parts[1] !== 'partitions' || parts[3] !== 'epoch-end-offset') throw notFound(method, path);
    if (method !== 'GET') return methodNotAllowed(res, 'GET', method, path);
    stats.byRoute.epochEndOffset++;
    const p = broker.partitionOrThrow(topicName(parts[0]), partitionIndex(parts[2]));
    const epoch = intParam(parseQuery(search, ['epoch']), 'epoch', undefined, -1, 0x7fffffff);
    return sendJson(res, 200, p.endOffsetForEpoch(epoch));
  }
  if (method !== 'GET') {
    stats.byRoute.unknown++;
    throw notFound(method, path);
  }
  switch (path) {
    case '/v1/metrics':
      stats.byRoute.metrics++;
      return sendJson(res, 200, metrics(broker, parseQuery(search, ['resetEventLoop']).get('resetEventLoop') === '1'));
    case '/v1/health':
      stats.byRoute.health++;
      parseQuery(search, []);
      return sendJson(res, 200, health(broker));
    case '/v1/admin/log-hash': {
      stats.byRoute.logHash++;
      const { topic, index, p, from, upTo } = partitionRangeQuery(broker, search);
      const answer = await hashLogRange(p, from, upTo, () => res.destroyed);
      return sendJson(res, 200, { brokerId: broker.id, topic, partition: index, ...answer });
    }
    case '/v1/admin/replica-log':
      stats.byRoute.replicaLog++;
      return serveReplicaLog(broker, res, search);
    default:
      stats.byRoute.unknown++;
      throw notFound(method, path);
  }
}

function parseAcks(v: string | null): Acks {
  if (v === null || v === 'all' || v === '-1') return 'all';
  if (v === '1') return 1;
  if (v === '0') return 0;
  throw invalid('acks', '0, 1 or all (or -1)', v);
}

async function produce(broker: BrokerHost, req: IncomingMessage, res: ServerResponse, topic: string, index: number, search: string): Promise<void> {
  const q = parseQuery(search, ['acks', 'timeoutMs']);
  const acks = parseAcks(q.get('acks'));
  const timeoutMs = intParam(q, 'timeoutMs', broker.settings.requestTimeoutMs, 1, MAX_PRODUCE_TIMEOUT_MS);
  const p = broker.partitionOrThrow(topic, index);
  const type = mediaType(req);
  const binary = type === RECORD_BATCH_TYPE || type === 'application/octet-stream';
  if (!binary && type !== 'application/json') {
    throw new BrokerError('UNSUPPORTED_MEDIA_TYPE', `content-type '${type || '(none)'}' is not accepted for produce: expected one of ${PRODUCE_TYPES.join(', ')}`, {
      accepted: PRODUCE_TYPES,
    });
  }
  if (p.role !== 'leader') throw broker.notLeader(p);
  const max = broker.settings.messageMaxBytes;
  const body = await readBody(req, binary ? max : max + JSON_BODY_SLACK);
  broker.httpStats.produceBytes += body.length;
  const batch = binary ? body : batchFromJson(body);
  if (acks === 0) {
    // Kafka's acks=0: the producer hears nothing back, so the answer goes out before the
    // append (and any flush) happens; failures only show in metrics.
    res.writeHead(204).end();
    const pending = p.appendAsLeader(batch, { acks, timeoutMs });
    pending.catch((err: unknown) => {
      const name = toBrokerError(err).code;
      broker.httpStats.acks0Errors[name] = (broker.httpStats.acks0Errors[name] ?? 0) + 1;
    });
    return;
  }
  let r: Awaited<ReturnType<typeof p.appendAsLeader>>;
  try {
    r = await p.appendAsLeader(batch, { acks, timeoutMs });
  } catch (err) {
    // Echo the batch identity in the error too, so a pipelining client can tell which
    // request failed (the harness's ack ledger marks it failed, not merely unanswered).
    const e = toBrokerError(err);
    if (batch.length < 61) throw e;
    // A copy: one error instance may fail several parked requests at once.
    throw new BrokerError(e.code, e.message, { ...e.details, producerId: readI64(batch, 43), baseSequence: batch.readInt32BE(53) });
  }
  // producerId/baseSequence echo the batch's identity so a pipelining client (the harness's
  // ack ledger) can tell which request an answer belongs to.
  sendProduceAnswer(res, r.baseOffset, r.lastOffset, r.logAppendTimeMs, r.hw, readI64(batch, 43), batch.readInt32BE(53));
}

/**
 * The produce answer, the hot path's only response: every field is an integer, so the JSON is
 * one template string (same bytes as JSON.stringify of the object) and the headers a flat
 * array node writes as they are, without building and validating a headers object.
 */
function sendProduceAnswer(res: ServerResponse, baseOffset: number, lastOffset: number, logAppendTimeMs: number, hw: number, producerId: number, baseSequence: number): void {
  if (res.headersSent || res.destroyed) return;
  const text = `{"baseOffset":${baseOffset},"lastOffset":${lastOffset},"logAppendTimeMs":${logAppendTimeMs},"hw":${hw},"producerId":${producerId},"baseSequence":${baseSequence}}`;
  // ASCII only: the string length is the byte length.
  res.writeHead(200, ['content-type', 'application/json', 'content-length', String(text.length)]);
  res.end(text);
}

function jsonBytes(v: unknown, field: string): Buffer | null {
  if (v === null) return null;
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  throw new BrokerError('INVALID_REQUEST', `JSON produce body: ${field} must be a string or null, got ${typeof v}`, { field });
}

/** `{"records":[{"key"?, "value", "headers"?}]}` -> one RecordBatch v2 (strings as UTF-8). */
export function batchFromJson(body: Buffer): Buffer {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BrokerError('INVALID_REQUEST', `JSON produce body is not valid JSON: ${(err as Error).message}`);
  }
  const records = (doc as { records?: unknown } | null)?.records;
  if (!Array.isArray(records) || records.length === 0) {
    throw new BrokerError('INVALID_REQUEST', 'JSON produce body: expected {"records": [{"key"?, "value", "headers"?}, ...]} with at least one record', { field: 'records' });
  }
  const inputs: RecordInput[] = records.map((r: unknown, i: number) => {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) {
      throw new BrokerError('INVALID_REQUEST', `JSON produce body: records[${i}] must be an object`, { field: `records[${i}]` });
    }
    const o = r as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (k !== 'key' && k !== 'value' && k !== 'headers') {
        throw new BrokerError('INVALID_REQUEST', `JSON produce body: records[${i}].${k} is not a record field (key, value, headers)`, { field: `records[${i}].${k}` });
      }
    }
    if (!('value' in o)) throw new BrokerError('INVALID_REQUEST', `JSON produce body: records[${i}].value is missing (use null for none)`, { field: `records[${i}].value` });
    const input: RecordInput = { value: jsonBytes(o.value, `records[${i}].value`) };
    if (o.key !== undefined) input.key = jsonBytes(o.key, `records[${i}].key`);
    if (o.headers !== undefined) input.headers = jsonHeaders(o.headers, i);
    return input;
  });
  return encodeBatch({ records: inputs });
}

function jsonHeaders(h: unknown, i: number): RecordHeader[] {
  const field = `records[${i}].headers`;
  if (Array.isArray(h)) {
    return h.map((e: unknown, j: number) => {
      const o = e as { key?: unknown; value?: unknown } | null;
      if (!o || typeof o !== 'object' || typeof o.key !== 'string') {
        throw new BrokerError('INVALID_REQUEST', `JSON produce body: ${field}[${j}] must be {"key": string, "value": string|null}`, { field: `${field}[${j}]` });
      }
      return { key: o.key, value: jsonBytes(o.value ?? null, `${field}[${j}].value`) };
    });
  }
  if (h !== null && typeof h === 'object') {
    return Object.entries(h as Record<string, unknown>).map(([key, value]) => ({ key, value: jsonBytes(value, `${field}.${key}`) }));
  }
  throw new BrokerError('INVALID_REQUEST', `JSON produce body: ${field} must be an array of {key, value} or an object`, { field });
}

function wantsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  return accept !== undefined && accept.includes('application/json') && !accept.includes(RECORD_BATCH_TYPE);
}

async function fetch(broker: BrokerHost, req: IncomingMessage, res: ServerResponse, topic: string, index: number, search: string): Promise<void> {
  const q = parseQuery(search, ['offset', 'maxBytes', 'maxWaitMs', 'replicaId', 'leaderEpoch']);
  const forReplica = q.has('replicaId') || q.has('leaderEpoch');
  broker.httpStats.byRoute[forReplica ? 'replicaFetch' : 'fetch']++;
  // fetch.max.bytes caps every answer whatever the request asks (Log.read still returns one
  // whole batch when the first one is larger, as Kafka does).
  const maxBytes = Math.min(intParam(q, 'maxBytes', 1 << 20, 1, 1 << 30), broker.settings.fetchMaxBytes);
  const maxWaitMs = intParam(q, 'maxWaitMs', 0, 0, MAX_FETCH_WAIT_MS);
  let replicaId = -1;
  let replicaEpoch = -1;
  if (forReplica) {
    if (!q.has('replicaId') || !q.has('leaderEpoch')) {
      throw invalid(q.has('replicaId') ? 'leaderEpoch' : 'replicaId', 'replicaId and leaderEpoch together (replica fetch) or neither (consumer fetch)', null);
    }
    replicaId = intParam(q, 'replicaId', undefined, 0, 0x7fffffff);
    replicaEpoch = intParam(q, 'leaderEpoch', undefined, 0, 0x7fffffff);
  }
  const p = broker.partitionOrThrow(topic, index);
  const offset = q.has('offset') ? intParam(q, 'offset', undefined, 0) : p.log.logStartOffset;
  // A consumer fetch is read in chunks with event-loop turns between them (fetch-read.ts).
  const read = async (): Promise<FetchAnswer> => {
    if (!forReplica) return { ...(await readConsumerChunks(p, offset, maxBytes, () => res.destroyed)), leaderEpoch: p.leaderEpoch };
    const x = p.readForReplica(replicaId, offset, maxBytes, replicaEpoch);
    return { parts: [x.data], bytes: x.data.length, nextOffset: x.nextOffset, highWatermark: x.highWatermark, logStartOffset: x.logStartOffset, leaderEpoch: x.leaderEpoch };
  };
  let r = await read();
  if (r.bytes === 0 && maxWaitMs > 0) {
    await p.waitForData(offset, maxWaitMs, forReplica);
    if (res.destroyed) return;
    r = await read();
  }
  if (res.destroyed) return;
  if (!forReplica && wantsJson(req)) return sendJson(res, 200, fetchJson(p, r));
  res.writeHead(200, {
    'content-type': RECORD_BATCH_TYPE,
    'content-length': r.bytes,
    'x-high-watermark': String(r.highWatermark),
    'x-next-offset': String(r.nextOffset),
    'x-log-start-offset': String(r.logStartOffset),
    'x-leader-epoch': String(r.leaderEpoch),
  });
  for (let i = 0; i < r.parts.length - 1; i++) res.write(r.parts[i]);
  res.end(r.parts[r.parts.length - 1]);
}

interface FetchAnswer {
  parts: Buffer[];
  bytes: number;
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
  leaderEpoch: number;
}

function jsonField(b: Buffer | null): { text: string | null; base64: boolean } {
  if (b === null) return { text: null, base64: false };
  return isUtf8(b) ? { text: b.toString('utf8'), base64: false } : { text: b.toString('base64'), base64: true };
}

function fetchJson(p: Partition, r: FetchAnswer): unknown {
  const records = [];
  for (const rec of recordsOf(r.parts.length === 1 ? r.parts[0] : Buffer.concat(r.parts, r.bytes))) {
    const key = jsonField(rec.key);
    const value = jsonField(rec.value);
    const out: Record<string, unknown> = { offset: rec.offset, timestamp: rec.timestamp, key: key.text, value: value.text };
    if (key.base64) out.keyEncoding = 'base64';
    if (value.base64) out.valueEncoding = 'base64';
    if (rec.headers.length > 0) {
      out.headers = rec.headers.map((h) => {
        const v = jsonField(h.value);
        return v.base64 ? { key: h.key, value: v.text, valueEncoding: 'base64' } : { key: h.key, value: v.text };
      });
    }
    records.push(out);
  }
  return {
    topic: p.topic,
    partition: p.partition,
    highWatermark: r.highWatermark,
    nextOffset: r.nextOffset,
    logStartOffset: r.logStartOffset,
    leaderEpoch: r.leaderEpoch,
    records,
  };
}

function metrics(broker: BrokerHost, resetEventLoop: boolean): unknown {
  return {
    eventLoopDelay: broker.eventLoopDelay(resetEventLoop),
    brokerId: broker.id,
    url: broker.url,
    pid: process.pid,
    uptimeMs: Date.now() - broker.startedAtMs,
    http: broker.httpStats,
    kafka: broker.kafkaMetrics(),
    heartbeat: broker.heartbeat,
    partitions: broker.allPartitions().map((p) => p.metrics()),
    failedLogDirs: failedLogDirs(broker),
    fetchers: broker.fetcherStats(),
    memory: process.memoryUsage(),
  };
}

/** Partitions whose log went offline after an I/O error (Kafka's offline log dirs): they stay so until the broker restarts. */
function failedLogDirs(broker: BrokerHost): Array<{ topic: string; partition: number; dir: string; error: string }> {
  return broker.allPartitions().flatMap((p) => {
    const error = p.log.offlineReason;
    return error === null ? [] : [{ topic: p.topic, partition: p.partition, dir: p.log.dir, error }];
  });
}

function health(broker: BrokerHost): unknown {
  const led: string[] = [];
  const followed: string[] = [];
  const other: string[] = [];
  const recovery: unknown[] = [];
  for (const p of broker.allPartitions()) {
    const name = `${p.topic}-${p.partition}`;
    (p.role === 'leader' ? led : p.role === 'follower' ? followed : other).push(name);
    recovery.push({ topic: p.topic, partition: p.partition, ...p.log.recovery });
  }
  const failed = failedLogDirs(broker);
  return {
    status: broker.openFailures.length === 0 && failed.length === 0 ? 'ok' : 'degraded',
    brokerId: broker.id,
    pid: process.pid,
    url: broker.url,
    controller: broker.controllerDescription,
    uptimeMs: Date.now() - broker.startedAtMs,
    dataDir: broker.dataDir,
    partitions: { led, followed, other },
    recovery,
    openFailures: broker.openFailures,
    failedLogDirs: failed,
    lastHeartbeatMs: broker.heartbeat.lastOkMs,
  };
}
