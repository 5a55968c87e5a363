// How the lab's topic is a JetStream stream (shared by target: nats, which creates it, and
// driver nats, which publishes to it and reads it back): one stream per topic, file storage,
// `replicas` = cluster.replicationFactor, the topic as its one subject. A JetStream stream is one
// sequence (the lab's partition 0): its stream sequence is the record's offset.
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError, StorageType, jetstreamManager, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';

/** The stream's name for a topic: JetStream names may not hold '.', '*', '>', whitespace or path separators. */
export function natsStreamName(topic: string): string {
  const name = topic.replace(/[^A-Za-z0-9_-]/g, '_');
  if (name === '') throw new Error(`topic ${JSON.stringify(topic)}: no JetStream stream name can be made of it`);
  return name;
}

/** The subject the load publishes to (the topic as written; a JetStream subject may hold dots). */
export function natsSubject(topic: string): string {
  if (/[\s*>]/.test(topic) || topic.startsWith('.') || topic.endsWith('.') || topic.includes('..')) {
    throw new Error(`topic ${JSON.stringify(topic)} is not a NATS subject (no whitespace, '*' or '>', no empty token between dots)`);
  }
  return topic;
}

/** The only partition a JetStream stream has in the lab's terms. */
export const NATS_PARTITION = 0;

/** Refuses any partition but the stream's one, naming the topic and the partition asked for. */
export function onlyPartition(topic: string, partition: number): void {
  if (partition !== NATS_PARTITION) throw new Error(`nats: topic ${topic} is one JetStream stream, partition ${NATS_PARTITION} only (asked for partition ${partition})`);
}

/**
 * A connection to any of `servers` that reconnects for as long as it is open (brokers come and go
 * in a fault trial). A server that stops answering (paused, cut off) is taken as gone after two
 * unanswered pings a second apart, not nats.js's default 2 minutes, and the client moves to another.
 * reconnect false: a one-shot connection to the first server that answers (no retries).
 */
export function connectNats(servers: readonly string[], name: string, timeoutMs = 5000, reconnect = true): Promise<NatsConnection> {
  return connect({ servers: [...servers], name, reconnect, maxReconnectAttempts: -1, reconnectTimeWait: 100, timeout: timeoutMs, ignoreClusterUpdates: true, pingInterval: 1000, maxPingOut: 2 });
}

/** The stream a cell's topic is created as. */
export interface NatsStreamSpec {
  topic: string;
  replicas: number;
  maxMsgSize: number;
}

/** Creates the stream (file storage, `replicas` replicas, the topic as its subject); a stream config the server refuses throws naming the stream and the server's reason. */
export async function createNatsStream(jsm: JetStreamManager, spec: NatsStreamSpec): Promise<StreamInfo> {
  const config = { name: natsStreamName(spec.topic), subjects: [natsSubject(spec.topic)], storage: StorageType.File, num_replicas: spec.replicas, max_msg_size: spec.maxMsgSize };
  try {
    return await jsm.streams.add(config);
  } catch (err) {
    throw new Error(`nats: creating stream ${config.name} (subjects [${config.subjects.join(', ')}], file storage, num_replicas ${spec.replicas}, max_msg_size ${spec.maxMsgSize}) was refused: ${(err as Error).message}`);
  }
}

/** JetStream's API answer "stream not found" (10059). */
export function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === 10059;
}

/** The stream's info as its leader answers it now, or null when there is no such stream. */
export async function natsStreamInfo(jsm: JetStreamManager, topic: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(natsStreamName(topic));
  } catch (err) {
    if (isStreamNotFound(err)) return null;
    throw err;
  }
}

export { jetstreamManager };
export type { NatsConnection, JetStreamManager, StreamInfo };
