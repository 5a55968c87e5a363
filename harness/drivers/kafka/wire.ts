// A minimal Kafka protocol client over one TCP connection, on durolab's own codec
// (engine/protocol: Apache Kafka's message definitions). The harness uses it where it needs
// bytes and broker-side figures a client library hides: Metadata (leaders, replicas, ISR,
// epochs), ListOffsets (log start, high watermark), Fetch (the stored RecordBatch bytes, so the
// checker validates every CRC itself) and CreateTopics (with topic configs); wire-admin.ts adds
// the audit's reads and a planned leader move over it, and an optional SASL/PLAIN login. Produce
// goes through a real client library (producer.ts).
import net from 'node:net';
import { encodeRequest, decodeResponse } from '../../../engine/protocol/frame.ts';
import { clientApiSpec, type ApiName, type ApiSpec } from '../../../engine/protocol/messages.ts';
import { kafkaErrorName } from '../../../engine/protocol/error-codes.ts';
import type { Struct } from '../../../engine/protocol/schema.ts';

/** The request versions used: Kafka 4 serves all of them, and so does durolab's listener. */
const VERSIONS = {
  Metadata: 12,
  Fetch: 12,
  ListOffsets: 7,
  CreateTopics: 7,
  // wire-admin.ts: the audit's reads and a planned leader move.
  ApiVersions: 3,
  DescribeCluster: 1,
  DescribeConfigs: 4,
  ElectLeaders: 2,
  AlterPartitionReassignments: 0,
  SaslHandshake: 1,
  SaslAuthenticate: 2,
  CreatePartitions: 3,
} as const;

function spec(name: ApiName): ApiSpec {
  const s = clientApiSpec(name);
  if (!s) throw new Error(`kafka wire: no message definition for ${name}`);
  return s;
}

export type WireApi = keyof typeof VERSIONS;

/** A Kafka error answer, by Kafka's error name; NETWORK_EXCEPTION when the connection failed or closed. */
export class KafkaWireError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
    this.name = 'KafkaWireError';
  }
}

/** host:port of a broker's Kafka listener. */
export function parseAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  const port = Number(address.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`expected a Kafka address host:port, found '${address}'`);
  return { host: address.slice(0, i), port };
}

/** SASL/PLAIN credentials (over a SASL_PLAINTEXT listener: the password crosses the network in the clear). */
export interface SaslPlain {
  user: string;
  password: string;
}

export class KafkaWire {
  private socket: net.Socket | null = null;
  /** The connection being made (and authenticated), so concurrent requests wait for one. */
  private connecting: Promise<net.Socket> | null = null;
  private buffered: Buffer = Buffer.alloc(0);
  /** Chunks received after `buffered` while a frame is incomplete (joined once it is whole, not per chunk). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the frame at the head of `buffered` needs (length prefix included), once known. */
  private need = 0;
  private nextCorrelation = 1;
  private readonly waiting = new Map<number, { spec: ApiSpec; version: number; resolve: (b: Struct) => void; reject: (e: Error) => void }>();

  constructor(
    readonly address: string,
    private readonly timeoutMs = 10_000,
    private readonly sasl: SaslPlain | null = null,
  ) {}

  private connect(): Promise<net.Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    this.connecting = this.open()
      .then(async (s) => {
        if (this.sasl) await this.authenticate(s, this.sasl);
        return s;
      })
      .finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** SaslHandshake (PLAIN) then SaslAuthenticate, as Kafka clients do before any other request. */
  private async authenticate(s: net.Socket, sasl: SaslPlain): Promise<void> {
    const fail = (name: string, message: string): never => {
      s.destroy();
      this.socket = null;
      throw new KafkaWireError(name, message);
    };
    const hs = await this.send(s, 'SaslHandshake', { Mechanism: 'PLAIN' });
    if ((hs.ErrorCode as number) !== 0) {
      const name = kafkaErrorName(hs.ErrorCode as number);
      fail(name, `kafka wire: ${this.address}: SASL PLAIN refused: ${name} (mechanisms enabled there: ${(hs.Mechanisms as string[]).join(', ') || 'none'})`);
    }
    const auth = await this.send(s, 'SaslAuthenticate', { AuthBytes: Buffer.from(`\0${sasl.user}\0${sasl.password}`, 'utf8') });
    if ((auth.ErrorCode as number) !== 0) {
      const name = kafkaErrorName(auth.ErrorCode as number);
      fail(name, `kafka wire: ${this.address}: SASL PLAIN as '${sasl.user}': ${name}${auth.ErrorMessage ? `: ${String(auth.ErrorMessage)}` : ''}`);
    }
  }

  private open(): Promise<net.Socket> {
    const { host, port } = parseAddress(this.address);
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port, noDelay: true });
      const fail = (err: Error) => {
        s.destroy();
        reject(new KafkaWireError('NETWORK_EXCEPTION', `kafka wire: connect ${this.address}: ${err.message}`));
      };
      s.setTimeout(this.timeoutMs, () => fail(new Error(`no connection within ${this.timeoutMs} ms`)));
      s.once('error', fail);
      s.once('connect', () => {
        s.off('error', fail);
        s.setTimeout(0);
        this.socket = s;
        this.buffered = Buffer.alloc(0);
        this.pending = [];
        this.pendingBytes = 0;
        this.need = 0;
        s.on('data', (d: Buffer) => this.onData(d));
        s.on('error', (err) => this.failAll(err));
        s.on('close', () => this.failAll(new Error('connection closed')));
        resolve(s);
      });
    });
  }

  private onData(d: Buffer): void {
    // Joining every chunk onto what is held copies a large Fetch answer once per chunk: hold
    // the chunks until the frame they belong to is complete, then join them once.
    if (this.need > 0 && this.buffered.length + this.pendingBytes + d.length < this.need) {
      this.pending.push(d);
      this.pendingBytes += d.length;
      return;
    }
    this.buffered = this.buffered.length || this.pending.length ? Buffer.concat([this.buffered, ...this.pending, d]) : d;
    this.pending = [];
    this.pendingBytes = 0;
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + size) break;
      const frame = this.buffered.subarray(4, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      const correlation = frame.readInt32BE(0);
      const w = this.waiting.get(correlation);
      if (!w) continue;
      this.waiting.delete(correlation);
      try {
        w.resolve(decodeResponse(w.spec, w.version, Buffer.from(frame)).body);
      } catch (err) {
        w.reject(new Error(`kafka wire: ${this.address}: ${w.spec.name} v${w.version} answer does not parse: ${(err as Error).message}`));
      }
    }
    this.need = this.buffered.length >= 4 ? 4 + this.buffered.readInt32BE(0) : 0;
  }

  private failAll(err: Error): void {
    this.socket = null;
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id);
      w.reject(new KafkaWireError('NETWORK_EXCEPTION', `kafka wire: ${this.address}: ${w.spec.name}: ${err.message}`));
    }
  }

  async request(name: WireApi, body: Struct): Promise<Struct> {
    return this.send(await this.connect(), name, body);
  }

  private send(socket: net.Socket, name: WireApi, body: Struct): Promise<Struct> {
    const s = spec(name);
    const version = VERSIONS[name];
    const correlation = this.nextCorrelation++;
    return new Promise<Struct>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(correlation);
        reject(new Error(`kafka wire: ${this.address}: no ${name} answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiting.set(correlation, {
        spec: s,
        version,
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      socket.write(encodeRequest(s, version, correlation, 'durolab-harness', body));
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  // --- the requests the harness makes -------------------------------------------------------

  async metadata(topics: string[] | null): Promise<ClusterMetadata> {
    const body = await this.request('Metadata', {
      Topics: topics === null ? null : topics.map((name) => ({ TopicId: Buffer.alloc(16), Name: name })),
      AllowAutoTopicCreation: false,
      IncludeTopicAuthorizedOperations: false,
    });
    const brokers = (body.Brokers as Struct[]).map((b) => ({ id: b.NodeId as number, host: b.Host as string, port: b.Port as number }));
    const parts: PartitionMetadata[] = [];
    const topicErrors: Record<string, string> = {};
    for (const t of body.Topics as Struct[]) {
      const code = t.ErrorCode as number;
      if (code !== 0) topicErrors[t.Name as string] = kafkaErrorName(code);
      for (const p of t.Partitions as Struct[]) {
        parts.push({
          topic: t.Name as string,
          partition: p.PartitionIndex as number,
          error: (p.ErrorCode as number) === 0 ? null : kafkaErrorName(p.ErrorCode as number),
          leader: p.LeaderId as number,
          leaderEpoch: p.LeaderEpoch as number,
          replicas: p.ReplicaNodes as number[],
          isr: p.IsrNodes as number[],
        });
      }
    }
    return { brokers, controllerId: body.ControllerId as number, partitions: parts, topicErrors };
  }

  /** CreatePartitions: grows the topic to `count` partitions in all. */
  async createPartitions(topic: string, count: number, timeoutMs = 60_000): Promise<void> {
    const body = await this.request('CreatePartitions', { Topics: [{ Name: topic, Count: count, Assignments: null }], TimeoutMs: timeoutMs, ValidateOnly: false });
    const r = (body.Results as Struct[])[0];
    if (!r) throw new Error(`CreatePartitions ${topic} on ${this.address}: empty answer`);
    const code = r.ErrorCode as number;
    if (code !== 0) {
      const name = kafkaErrorName(code);
      throw new KafkaWireError(name, `CreatePartitions ${topic} to ${count} on ${this.address}: ${name}${r.ErrorMessage ? `: ${String(r.ErrorMessage)}` : ''}`);
    }
  }

  async createTopic(opts: { topic: string; partitions: number; replicationFactor: number; configs: Record<string, string>; timeoutMs?: number }): Promise<void> {
    const body = await this.request('CreateTopics', {
      Topics: [
        {
          Name: opts.topic,
          NumPartitions: opts.partitions,
          ReplicationFactor: opts.replicationFactor,
          Assignments: [],
          Configs: Object.entries(opts.configs).map(([Name, Value]) => ({ Name, Value })),
        },
      ],
      timeoutMs: opts.timeoutMs ?? 30_000,
      validateOnly: false,
    });
    const t = (body.Topics as Struct[])[0];
    if (!t) throw new Error(`CreateTopics ${opts.topic} on ${this.address}: empty answer`);
    const code = t.ErrorCode as number;
    if (code !== 0) {
      const name = kafkaErrorName(code);
      throw new KafkaWireError(name, `CreateTopics ${opts.topic} (configs ${JSON.stringify(opts.configs)}) on ${this.address}: ${name}${t.ErrorMessage ? `: ${String(t.ErrorMessage)}` : ''}`);
    }
  }

  /** ListOffsets: timestamp -1 = the high watermark (read uncommitted), -2 = the log start. */
  async listOffset(topic: string, partition: number, timestamp: -1 | -2): Promise<number> {
    const body = await this.request('ListOffsets', {
      ReplicaId: -1,
      IsolationLevel: 0,
      Topics: [{ Name: topic, Partitions: [{ PartitionIndex: partition, CurrentLeaderEpoch: -1, Timestamp: timestamp }] }],
    });
    const p = ((body.Topics as Struct[])[0]?.Partitions as Struct[] | undefined)?.[0];
    if (!p) throw new Error(`ListOffsets ${topic}-${partition} on ${this.address}: empty answer`);
    if ((p.ErrorCode as number) !== 0) {
      const name = kafkaErrorName(p.ErrorCode as number);
      throw new KafkaWireError(name, `ListOffsets ${topic}-${partition} on ${this.address}: ${name}`);
    }
    return p.Offset as number;
  }

  /** ListOffsets of several partitions in one request: each partition's offset, or Kafka's error name for it. */
  async listOffsets(topic: string, partitions: readonly number[], timestamp: -1 | -2): Promise<Map<number, number | { error: string }>> {
    const body = await this.request('ListOffsets', {
      ReplicaId: -1,
      IsolationLevel: 0,
      Topics: [{ Name: topic, Partitions: partitions.map((p) => ({ PartitionIndex: p, CurrentLeaderEpoch: -1, Timestamp: timestamp })) }],
    });
    const out = new Map<number, number | { error: string }>();
    for (const p of ((body.Topics as Struct[])[0]?.Partitions as Struct[] | undefined) ?? []) {
      const code = p.ErrorCode as number;
      out.set(p.PartitionIndex as number, code === 0 ? (p.Offset as number) : { error: `ListOffsets ${topic}-${p.PartitionIndex as number} on ${this.address}: ${kafkaErrorName(code)}` });
    }
    for (const p of partitions) if (!out.has(p)) out.set(p, { error: `ListOffsets ${topic}-${p} on ${this.address}: the answer names no such partition` });
    return out;
  }

  /** One Fetch of a partition from `offset`: the stored batches' bytes and the high watermark (a long poll with `wait`). */
  async fetch(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    wait: { maxWaitMs: number; minBytes: number } = { maxWaitMs: 0, minBytes: 0 },
  ): Promise<{ records: Buffer; highWatermark: number; logStartOffset: number }> {
    const body = await this.request('Fetch', {
      ClusterId: null,
      ReplicaId: -1,
      MaxWaitMs: wait.maxWaitMs,
      MinBytes: wait.minBytes,
      MaxBytes: maxBytes,
      IsolationLevel: 0,
      SessionId: 0,
      SessionEpoch: -1,
      Topics: [{ Topic: topic, Partitions: [{ Partition: partition, CurrentLeaderEpoch: -1, FetchOffset: offset, LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: maxBytes }] }],
      ForgottenTopicsData: [],
      RackId: '',
    });
    if ((body.ErrorCode as number) !== 0) {
      const name = kafkaErrorName(body.ErrorCode as number);
      throw new KafkaWireError(name, `Fetch ${topic}-${partition}@${offset} on ${this.address}: ${name}`);
    }
    const p = ((body.Responses as Struct[])[0]?.Partitions as Struct[] | undefined)?.[0];
    if (!p) throw new Error(`Fetch ${topic}-${partition} on ${this.address}: empty answer`);
    if ((p.ErrorCode as number) !== 0) {
      const name = kafkaErrorName(p.ErrorCode as number);
      throw new KafkaWireError(name, `Fetch ${topic}-${partition}@${offset} on ${this.address}: ${name}`);
    }
    return { records: (p.Records as Buffer | null) ?? Buffer.alloc(0), highWatermark: p.HighWatermark as number, logStartOffset: p.LogStartOffset as number };
  }
}

export interface PartitionMetadata {
  topic: string;
  partition: number;
  error: string | null;
  /** -1 while the partition has no leader. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
}

export interface ClusterMetadata {
  brokers: Array<{ id: number; host: string; port: number }>;
  controllerId: number;
  partitions: PartitionMetadata[];
  topicErrors: Record<string, string>;
}

/** Asks each address in turn until one answers (a killed broker must not blind the harness). */
export async function metadataFromAny(addresses: string[], topics: string[] | null, timeoutMs = 3000): Promise<ClusterMetadata> {
  const errors: string[] = [];
  for (const a of addresses) {
    const w = new KafkaWire(a, timeoutMs);
    try {
      return await w.metadata(topics);
    } catch (err) {
      errors.push((err as Error).message);
    } finally {
      w.close();
    }
  }
  throw new Error(`no Kafka broker answered Metadata (${addresses.join(', ')}): ${errors.join('; ')}`);
}
