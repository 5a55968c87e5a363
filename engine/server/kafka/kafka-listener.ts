// The broker's Kafka protocol listener: plain TCP beside the HTTP API. Frames are read off the
// int32 size prefix (checked against socket.request.max.bytes before any of the body is kept),
// handled as they arrive (so pipelined produces append in order) and answered in request order.
// What Kafka answers with a closed connection (unknown API key, unsupported version of an API
// other than ApiVersions, a frame that does not parse) closes the connection here too, after
// the answers to earlier requests went out; nothing of such a frame reaches a log.
import net from 'node:net';
import { kafkaErrorCode } from '../../protocol/error-codes.ts';
import { encodeResponse, encodeResponseFrame, readRequestHeader, readRequestPrefix } from '../../protocol/frame.ts';
import { frameRegions, isSplicedFrame, type SplicedFrame } from '../../protocol/spliced-frame.ts';
import { API_KEYS, apiSpec, type ApiSpec } from '../../protocol/messages.ts';
import { ProtocolError, Reader } from '../../protocol/primitives.ts';
import { decodeMessage, type Struct } from '../../protocol/schema.ts';
import { ProducerStates } from './producer-state.ts';
import { releaseRegions, sendSplicedFrame, type FetchTransfer } from './zero-copy.ts';
import { GroupCoordinator } from './group-coordinator.ts';
import { GROUP_APIS, groupRequest } from './group-handlers.ts';
import { alterPartitionReassignments, describeCluster, describeConfigs, electLeaders } from './admin-handlers.ts';
import { apiVersionsBody, createTopics, fetch, initProducerId, listOffsets, metadata, produce, ProducerIdAllocator, type KafkaBrokerView } from './handlers.ts';

export interface KafkaListenerOptions {
  host: string;
  port: number;
  maxRequestBytes: number;
  /** How a consumer Fetch's records are sent (fetch.transfer). */
  fetchTransfer: FetchTransfer;
  log: (msg: string) => void;
}

export class KafkaStats {
  connections = 0;
  openConnections = 0;
  requests = 0;
  byApi: Record<string, number> = {};
  /** Partition-level error answers by Kafka error name. */
  errors: Record<string, number> = {};
  /** Retried idempotent batches answered NONE with their first offsets, not appended again. */
  duplicateBatches = 0;
  fetchBytes = { sendfile: 0, copy: 0 };
  /** Connections closed for a bad frame, by reason (oversize, unknown-api, unsupported-version, malformed, internal). */
  closed: Record<string, number> = {};
}

interface Slot {
  done: boolean;
  response: Buffer | SplicedFrame | null;
  close: boolean;
}

type Answer = Buffer | SplicedFrame;

const PAUSE_AT = 128;
const RESUME_AT = 32;

export class KafkaListener {
  readonly stats = new KafkaStats();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly producerIds: ProducerIdAllocator;
  readonly producerStates = new ProducerStates();
  /** Serves groups while this broker is the cluster's coordinator (offsets in memory only). */
  readonly groups = new GroupCoordinator();
  private lastLogMs = 0;
  address = '';

  private constructor(
    private readonly broker: KafkaBrokerView,
    private readonly opts: KafkaListenerOptions,
  ) {
    this.producerIds = new ProducerIdAllocator(broker.id);
    this.server = net.createServer({ noDelay: true }, (s) => this.accept(s));
  }

  static async start(broker: KafkaBrokerView, opts: KafkaListenerOptions): Promise<KafkaListener> {
    const l = new KafkaListener(broker, opts);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`kafka.port ${opts.port} on ${opts.host}: cannot listen: ${err.message}`));
      l.server.once('error', onError);
      l.server.listen(opts.port, opts.host, () => {
        l.server.off('error', onError);
        resolve();
      });
    });
    const addr = l.server.address() as net.AddressInfo;
    l.address = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${addr.port}`;
    return l;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo | null)?.port ?? -1;
  }

  async close(): Promise<void> {
    this.groups.close();
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private logLimited(msg: string): void {
    const now = Date.now();
    if (now - this.lastLogMs < 1000) return;
    this.lastLogMs = now;
    this.opts.log(`kafka listener: ${msg}`);
  }

  private accept(socket: net.Socket): void {
    this.stats.connections++;
    this.stats.openConnections++;
    this.sockets.add(socket);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    const chunks: Buffer[] = [];
    let buffered = 0;
    let frameSize = -1;
    const queue: Slot[] = [];
    let closing = false;

    const closeFor = (reason: string, msg: string): void => {
      this.stats.closed[reason] = (this.stats.closed[reason] ?? 0) + 1;
      this.logLimited(`${peer}: ${msg}; closing the connection`);
    };

    /** A spliced frame being sent: later answers wait for it (answers go out in request order). */
    let sending = false;
    const dropQueued = (): void => {
      for (const slot of queue.splice(0)) if (slot.response && isSplicedFrame(slot.response)) releaseRegions(frameRegions(slot.response));
    };
    const flush = (): void => {
      while (!sending && queue.length > 0 && queue[0].done) {
        const slot = queue.shift()!;
        const response = slot.response;
        if (response && isSplicedFrame(response)) {
          if (socket.destroyed) {
            releaseRegions(frameRegions(response));
          } else {
            sending = true;
            sendSplicedFrame(socket, response).then(
              () => {
                sending = false;
                flush();
              },
              (err: Error) => {
                closeFor('send', `a fetch answer could not be sent whole (${err.message})`);
                closing = true;
                dropQueued();
                socket.destroy();
              },
            );
          }
        } else if (response && !socket.destroyed) socket.write(response);
        if (slot.close) {
          closing = true;
          dropQueued();
          socket.end();
          return;
        }
      }
      // A client that does not read its answers stops being read (bounded memory per connection).
      if (socket.writableNeedDrain) socket.pause();
      else if (socket.isPaused() && queue.length <= RESUME_AT && !closing) socket.resume();
    };
    socket.on('drain', () => {
      if (socket.isPaused() && !sending && queue.length <= RESUME_AT && !closing) socket.resume();
    });

    const handle = (frame: Buffer): void => {
      const slot: Slot = { done: false, response: null, close: false };
      queue.push(slot);
      const finish = (answer: Answer | null, close = false): void => {
        let response = answer;
        // An answer for a connection going away is dropped here, its descriptors with it (once).
        if ((closing || socket.destroyed) && response && isSplicedFrame(response)) {
          releaseRegions(frameRegions(response));
          response = null;
        }
        slot.done = true;
        slot.response = response;
        slot.close = close;
        flush();
      };
      let pending: Promise<Answer | null> | Answer | null;
      try {
        pending = this.dispatch(frame, (reason, msg) => closeFor(reason, msg));
      } catch (err) {
        if (!(err instanceof CloseConnection)) closeFor('internal', `request failed: ${err instanceof Error ? err.stack : String(err)}`);
        finish(null, true);
        return;
      }
      if (pending instanceof Promise) {
        pending.then(
          (r) => finish(r),
          (err: unknown) => {
            closeFor('internal', `request failed: ${err instanceof Error ? err.stack : String(err)}`);
            finish(null, true);
          },
        );
      } else finish(pending);
    };

    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      chunks.push(chunk);
      buffered += chunk.length;
      while (!closing) {
        if (frameSize < 0) {
          if (buffered < 4) return;
          const head = chunks[0].length >= 4 ? chunks[0] : Buffer.concat(chunks);
          frameSize = head.readInt32BE(0);
          if (frameSize < 0 || frameSize > this.opts.maxRequestBytes) {
            closeFor('oversize', `request size ${frameSize} is outside [0, ${this.opts.maxRequestBytes}] (socket.request.max.bytes)`);
            closing = true;
            socket.destroy();
            return;
          }
        }
        if (buffered < 4 + frameSize) return;
        const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
        const frame = all.subarray(4, 4 + frameSize);
        const rest = all.subarray(4 + frameSize);
        chunks.length = 0;
        buffered = rest.length;
        if (rest.length > 0) chunks.push(rest);
        frameSize = -1;
        this.stats.requests++;
        handle(frame);
        if (queue.length >= PAUSE_AT) socket.pause();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closing = true;
      dropQueued();
      this.stats.openConnections--;
      this.sockets.delete(socket);
    });
  }

  /** A response frame, null for no response (acks=0), or a promise of either. */
  private dispatch(frame: Buffer, onClose: (reason: string, msg: string) => void): Promise<Answer | null> | Answer | null {
    if (frame.length < 8) {
      onClose('malformed', `request of ${frame.length} bytes is shorter than a request header`);
      throw new CloseConnection();
    }
    const prefix = readRequestPrefix(frame);
    const spec = apiSpec(prefix.apiKey);
    if (!spec) {
      onClose('unknown-api', `unknown API key ${prefix.apiKey} (correlation id ${prefix.correlationId})`);
      throw new CloseConnection();
    }
    if (prefix.apiVersion < spec.minVersion || prefix.apiVersion > spec.maxVersion) {
      if (spec.key === API_KEYS.ApiVersions) {
        // Kafka's answer to a too-new ApiVersions: v0 layout, UNSUPPORTED_VERSION, and the list.
        this.stats.byApi.ApiVersions = (this.stats.byApi.ApiVersions ?? 0) + 1;
        return encodeResponse(spec, 0, prefix.correlationId, apiVersionsBody(kafkaErrorCode('UNSUPPORTED_VERSION')));
      }
      onClose('unsupported-version', `${spec.name} v${prefix.apiVersion} is not supported (versions ${spec.minVersion}-${spec.maxVersion}; ApiVersions lists them)`);
      throw new CloseConnection();
    }
    const version = prefix.apiVersion;
    let body: Struct;
    try {
      const r = new Reader(frame, `${spec.name} v${version} request`);
      readRequestHeader(r, spec);
      const bodyStart = r.pos;
      body = decodeMessage(spec.request, version, r);
      if (r.remaining === LIBRDKAFKA_NULL_TOPICS_PAD && isLibrdkafkaAllTopicsMetadata(spec, version, frame, bodyStart)) {
        // librdkafka (2.x, issue #5049) asks for all topics in Metadata v9+ with a 4-byte
        // placeholder for the null compact array: skip its 3 extra zero bytes and read the rest
        // where the client put it (Kafka ignores bytes after a body, so it works there).
        r.pos = bodyStart + LIBRDKAFKA_NULL_TOPICS_PAD;
        body = decodeMessage(spec.request, version, r);
      }
      if (r.remaining !== 0) r.fail(`${r.remaining} bytes left after the request body`);
    } catch (err) {
      if (err instanceof ProtocolError) {
        onClose('malformed', `correlation id ${prefix.correlationId}: ${err.message}`);
        throw new CloseConnection();
      }
      throw err;
    }
    this.stats.byApi[spec.name] = (this.stats.byApi[spec.name] ?? 0) + 1;
    const answer = (b: Struct): Answer => encodeResponseFrame(spec, version, prefix.correlationId, b);
    return this.route(spec, version, body, answer);
  }

  private route(spec: ApiSpec, version: number, body: Struct, answer: (b: Struct) => Answer): Promise<Answer | null> | Answer | null {
    const b = this.broker;
    if (GROUP_APIS.has(spec.name)) {
      const r = groupRequest(b, this.groups, spec.name, version, body);
      return r instanceof Promise ? r.then(answer) : answer(r);
    }
    switch (spec.key) {
      case API_KEYS.ApiVersions:
        return answer(apiVersionsBody());
      case API_KEYS.Metadata:
        return answer(metadata(b, version, body));
      case API_KEYS.Produce: {
        const p = produce(b, version, body, this.stats, this.producerStates);
        return p === null ? null : p.then(answer);
      }
      case API_KEYS.Fetch:
        return fetch(b, version, body, this.stats, this.opts.fetchTransfer).then(answer);
      case API_KEYS.ListOffsets:
        return answer(listOffsets(b, version, body, this.stats));
      case API_KEYS.InitProducerId:
        return answer(initProducerId(this.producerIds, body));
      case API_KEYS.CreateTopics:
        return createTopics(b, version, body, this.stats).then(answer);
      case API_KEYS.DescribeConfigs:
        return answer(describeConfigs(b, version, body, this.stats));
      case API_KEYS.DescribeCluster:
        return answer(describeCluster(b, version, body));
      case API_KEYS.ElectLeaders:
        return electLeaders(b, version, body, this.stats).then(answer);
      case API_KEYS.AlterPartitionReassignments:
        return alterPartitionReassignments(b, version, body, this.stats).then(answer);
      default:
        throw new Error(`no handler for ${spec.name}`);
    }
  }
}

class CloseConnection extends Error {}

/** The extra bytes of librdkafka's all-topics Metadata request (a 4-byte null placeholder where a 1-byte varint belongs). */
const LIBRDKAFKA_NULL_TOPICS_PAD = 3;

function isLibrdkafkaAllTopicsMetadata(spec: ApiSpec, version: number, frame: Buffer, bodyStart: number): boolean {
  return spec.key === API_KEYS.Metadata && version >= 9 && frame.length >= bodyStart + 4 && frame.readUInt32BE(bodyStart) === 0;
}
