// What the broker's HTTP handler (broker-http.ts) needs from a broker: its identity, settings,
// partitions and counters. Broker (broker.ts) implements it; the handler depends on this
// interface only, so broker.ts -> broker-http.ts is the one direction between the two.
import type { BrokerError, Partition } from '../replication/index.ts';
import type { BrokerSettings } from './config.ts';
import type { EventLoopDelaySummary } from './event-loop-delay.ts';
import type { FetcherStats } from './fetcher.ts';

type RouteName = 'produce' | 'fetch' | 'replicaFetch' | 'epochEndOffset' | 'metrics' | 'health' | 'logHash' | 'replicaLog' | 'unknown';

export class HttpStats {
  requests = 0;
  byRoute: Record<RouteName, number> = { produce: 0, fetch: 0, replicaFetch: 0, epochEndOffset: 0, metrics: 0, health: 0, logHash: 0, replicaLog: 0, unknown: 0 };
  /** Error answers by Kafka error name (everything else was answered 2xx). */
  errors: Record<string, number> = {};
  /** Errors of acks=0 produces, which were answered 204 before the append finished. */
  acks0Errors: Record<string, number> = {};
  /** Malformed HTTP or header/request timeouts, answered by node's parser (400/408). */
  clientErrors = 0;
  /** Requests whose client disconnected before the body was complete (nothing appended). */
  clientGone = 0;
  produceBytes = 0;
  /** Connections closed on accept because max.connections were open. */
  connectionsRefused = 0;
}

/** A partition the broker was assigned but could not open (its log directory failed). */
export interface OpenFailure {
  topic: string;
  partition: number;
  error: string;
}

/** Heartbeats to the controller: counts, the last success and the last error. */
export interface HeartbeatStats {
  ok: number;
  failed: number;
  lastOkMs: number;
  lastError: string | null;
}

export interface BrokerHost {
  readonly id: number;
  /** The URL other brokers and clients use. */
  readonly url: string;
  readonly dataDir: string;
  readonly startedAtMs: number;
  readonly settings: BrokerSettings;
  readonly httpStats: HttpStats;
  readonly openFailures: readonly OpenFailure[];
  readonly heartbeat: Readonly<HeartbeatStats>;
  /** "local" or the controller URL, for /v1/health. */
  readonly controllerDescription: string;
  /** The partition, or a BrokerError UNKNOWN_TOPIC_OR_PARTITION. */
  partitionOrThrow(topic: string, partition: number): Partition;
  allPartitions(): Partition[];
  peerUrl(id: number): string | undefined;
  /** NOT_LEADER_OR_FOLLOWER for `p`, naming the leader. */
  notLeader(p: Partition): BrokerError;
  fetcherStats(): FetcherStats[];
  /** The Kafka protocol listener's address and counters, or null when it is off (kafka.port=-1). */
  kafkaMetrics(): Record<string, unknown> | null;
  /** Event-loop delay since start or the last reset; `reset` starts a new window. */
  eventLoopDelay(reset: boolean): EventLoopDelaySummary;
  /** A KAFKA_STORAGE_ERROR answered: the broker logs its cause once per errno and log dir (storage-error-log.ts). */
  noteStorageError(e: BrokerError): void;
}
