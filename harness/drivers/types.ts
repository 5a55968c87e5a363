// The client-driver seam, in the manner of OpenMessaging Benchmark's BenchmarkDriver: everything
// the workload, the checker and the broker figures need from the system under test, whatever the
// protocol. A driver connects to a running cluster and hands back a ClusterClient; the runner,
// the checker and the workload speak only to that. `http` (durolab's /v1 API) is the first
// driver; a Kafka wire-protocol driver plugs in beside it (harness/drivers/registry.ts).
import type * as hdr from 'hdr-histogram-js';
import type { Acks } from '../../engine/settings/values.ts';
import type { BatchFactory } from '../history/batch-factory.ts';
import type { DriverName } from '../model/kinds.ts';

/** What a driver needs to know about a running cluster (a target's RunningCluster satisfies it). */
export interface DriverCluster {
  readonly brokers: ReadonlyArray<{ id: number; url: string; dataDir: string; kafka?: string }>;
  /** Current leader of a partition, from the cluster's controller; null while offline. */
  leaderId(topic: string, partition: number): number | null;
}

export interface ConnectOptions {
  /** Broker data dirs are host directories (TargetCapabilities.dataOnHost): replica logs can be read from disk. */
  dataOnHost: boolean;
}

export interface ClientDriver {
  readonly name: DriverName;
  connect(cluster: DriverCluster, opts: ConnectOptions): ClusterClient;
  /**
   * Stored record batches (a partition's bytes as recovery kept them) as the ledger batches this
   * driver's producer wrote: how an offline check reads a crash state as this driver's consumer would.
   * Absent on a driver whose system stores no bytes it can decode (capabilities.storedBatches false):
   * crash states are refused at scenario check, and a recount is not evaluated.
   */
  servedFromStored?(bytes: Buffer): { batches: ServedBatch[]; corrupt: number };
}

/**
 * The hooks a producer calls as batches go out and answers come back: the ack ledger
 * (harness/history/ledger.ts) implements them. Sequences are the idempotent-producer identity
 * (producer id per partition, base sequence per batch) every batch carries.
 */
export interface ProduceLedger {
  readonly recordsPerBatch: number;
  partitions(): number[];
  producerIdOf(partition: number): number;
  /** A batch is about to be sent; returns its base sequence. */
  send(partition: number, sentMs: number, stream?: number): number;
  /**
   * The broker acknowledged the batch at this offset (< 0: acknowledged without an offset, as
   * librdkafka reports a retry the broker found a duplicate of); `recordOffsets` gives each
   * record's own outcome when a client reported them apart (an offset, or the ledger's
   * ACKED_WITHOUT_OFFSET / RECORD_NOT_ACKED), `error` why the records not acknowledged failed.
   */
  ack(partition: number, baseSequence: number, baseOffset: number, ackMs: number, recordOffsets?: readonly number[], error?: string): void;
  /** The broker refused the batch; `error` is Kafka's error name (or the client's, e.g. CLIENT_TIMEOUT). */
  fail(partition: number, baseSequence: number, error: string, atMs: number): void;
  /** The batch's connection never connected: none of it reached a socket (not an unknown outcome). */
  neverSent(partition: number, baseSequence: number, atMs: number): void;
  /** acks=0: sent, never confirmed. */
  unconfirmed(partition: number, baseSequence: number, atMs: number): void;
  /** A produce answer reported this high watermark. */
  noteHw(partition: number, hw: number): void;
  batches(partition: number): Iterable<{ baseSequence: number; status: string }>;
}

export interface ProduceOptions {
  topic: string;
  /** Partition -> id of the broker leading it when the load starts. */
  leaders: ReadonlyMap<number, number>;
  acks: Acks;
  /** Produce request timeout (acks=all waits up to this for the ISR). */
  timeoutMs: number;
  connections: number;
  /** Requests in flight per connection. */
  pipelining: number;
  /** Batches per second over all connections; null = closed loop. */
  rate: number | null;
  warmupSec: number;
  durationSec: number;
  ledger: ProduceLedger;
  /** RecordBatch v2 bodies carrying each batch's producer id and base sequence. */
  factory: BatchFactory;
  /** The scenario's `workload.producer:` block (drivers with a producer of their own, e.g. kafka). */
  producer?: Readonly<Record<string, unknown>>;
  /** Called once a second with the last second's figures (progress line, time series). */
  onSecond?: (point: SecondPoint) => void;
  /** Called once when the load's clock starts (its connections open): the warm-up and the measured seconds count from here. */
  onLoadStart?: (loadStartMs: number) => void;
  signal?: AbortSignal;
  /** Aborted just before a fault is delivered: from then on, failures count in `errorsAfterFault`. */
  faultSignal?: AbortSignal;
}

export interface SecondPoint {
  t: number;
  recordsPerSec: number;
  requestsPerSec: number;
  p99Us: number | null;
}

export interface ProduceResult {
  /** Acknowledged produce latency, integer microseconds. */
  latencyUs: hdr.Histogram;
  /** Coordinated-omission corrected (expected interval = connections / rate); fixed-rate runs only. */
  correctedLatencyUs: hdr.Histogram | null;
  /** Failures counted by error name (before the fault, when there is one). */
  errors: Record<string, number>;
  /** Failures from the moment the fault was delivered (connection refusals and resets of a cut, mostly); empty without a fault. */
  errorsAfterFault: Record<string, number>;
  timeseries: SecondPoint[];
  /** Seconds of the measured window (after warm-up), as actually run. */
  measuredSec: number;
  measuredRequests: number;
  measuredRecords: number;
  measuredBytes: number;
  loadStartMs: number;
  measureStartMs: number;
  endMs: number;
  interrupted: boolean;
}

/** One batch as a consumer was served it. */
export interface ServedBatch {
  baseOffset: number;
  lastOffset: number;
  producerId: number;
  baseSequence: number;
  records: number;
}

export interface PartitionLog {
  partition: number;
  batches: ServedBatch[];
  /** Batches that failed validation when served (CRC, framing): must be 0. */
  corrupt: number;
  /** When given, records at or above it are not counted as served (a consumer sees only below the HW). */
  highWatermark?: number;
}

export interface ConsumedPartition extends PartitionLog {
  highWatermark: number;
}

/** One answered Fetch of a tailing consumer (ClusterClient.tail). */
export interface TailFetch {
  /** Request sent to answer received, µs. */
  latencyUs: number;
  /** Wall clock when the answer arrived. */
  atMs: number;
  /** Record bytes in the answer (whole batches kept). */
  bytes: number;
  /** The answer's new batches (at or above the position), by ledger identity. */
  batches: ServedBatch[];
  corrupt: number;
  highWatermark: number;
  /** The position the fetch asked from. */
  position: number;
}

export interface TailOptions {
  topic: string;
  partition: number;
  /** Where to start: the log start, the high watermark, or that many records below it. */
  start: { from: 'earliest' } | { from: 'latest' } | { from: 'lag'; records: number };
  fetch: { maxBytes: number; minBytes: number; maxWaitMs: number };
  signal: AbortSignal;
  onFetch(f: TailFetch): void;
  /** OFFSET_OUT_OF_RANGE: the position was reset to the log start (auto.offset.reset=earliest). */
  onOffsetReset?(from: number, to: number): void;
}

/** A member of a consumer group through the group coordinator (ClusterClient.groupMember). */
export interface GroupMemberOptions {
  topic: string;
  groupId: string;
  /** Its client id (one per member). */
  memberName: string;
  /** auto.offset.reset of a group with no committed offsets. */
  start: 'earliest' | 'latest';
  fetch: { maxBytes: number; minBytes: number; maxWaitMs: number };
  signal: AbortSignal;
  /** Each partition of each answered Fetch. */
  onFetch(partition: number, f: TailFetch): void;
  /** The partitions the group's assignment gave this member (at each join). */
  onAssignment?(partitions: number[]): void;
}

export interface ConsumeOptions {
  topic: string;
  partition: number;
  /** Read from this broker; default: the partition's current leader. */
  brokerId?: number;
  /** Give up after this long (a broker that keeps failing must not hang the run). Default 120 s. */
  timeoutMs?: number;
}

/** A replica's log below an offset: its HW, LEO and a digest of its stored batch bytes. */
export interface ReplicaDigest {
  brokerId: number;
  hw: number;
  leo: number;
  /** The digest covers whole batches whose last offset is below this. */
  upTo: number;
  /** sha256 hex of those batches' bytes, as stored. */
  hash: string;
}

/** One batch as a replica stores it: identity, place, size and CRC, for host-side comparison. */
export interface StoredBatch extends ServedBatch {
  /** Bytes on disk, log overhead included. */
  size: number;
  /** The CRC stored in the batch header. */
  crc: number;
  /** crc32c over the batch (attributes to end) as stored now: equals `crc` unless the bytes changed after the CRC was written. */
  computedCrc: number;
}

/** A replica's stored batches below an offset, read as bytes and summarized batch by batch. */
export interface ReplicaLog {
  brokerId: number;
  upTo: number;
  /** Every stored batch whose last offset is below `upTo`, invalid ones included (their CRCs do not match). */
  batches: StoredBatch[];
  /** Batches whose stored CRC does not match their bytes, plus a framing break that ended the read. */
  corrupt: number;
  /** Total bytes of those batches, as stored. */
  bytes: number;
  /** sha256 hex of those batches' bytes, concatenated as stored (what /v1/admin/log-hash hashes). */
  sha256: string;
}

/** One partition replica as its broker reports it. */
export interface PartitionFigures {
  topic: string;
  partition: number;
  role: string;
  leaderEpoch: number;
  hw: number;
  leo: number;
  isr: number[];
  /** Bytes appended to this replica's log. */
  bytes: number;
  /** Flushes (fsync/fdatasync) of this replica's log, and their time, as the broker counts them: absent from brokers that report none to clients (Kafka: JMX only; NATS), never 0 for unknown. */
  flushes?: number;
  flushTimeUs?: { p50: number; p99: number; p999: number; max: number };
  /** Segment rolls, as the broker counts them (absent where not reported). */
  rolls?: number;
  /** Segment files of this replica, as the broker counts them (absent from brokers that do not report it). */
  segments?: number;
}

export interface BrokerMetrics {
  brokerId: number;
  partitions: PartitionFigures[];
}

/** A driver connected to one running cluster. */
export interface ClusterClient {
  readonly driver: DriverName;
  readonly brokers: ReadonlyArray<{ id: number }>;
  leaderId(topic: string, partition: number): number | null;
  /** Runs the produce load, writing every batch's fate into the ledger. */
  produce(opts: ProduceOptions): Promise<ProduceResult>;
  /** Everything of a partition from its log start to its high watermark, as a consumer sees it. */
  consume(opts: ConsumeOptions): Promise<ConsumedPartition>;
  /** A consumer of the workload (workload.consumers): fetches from the partition's leader until the signal, each answer to onFetch; absent on a driver without one. */
  tail?(opts: TailOptions): Promise<void>;
  /** A consumer of the workload that joins a consumer group (membership: group) and reads what its assignment gives it, until the signal; absent on a driver without one. */
  groupMember?(opts: GroupMemberOptions): Promise<void>;
  /**
   * A replica's HW, LEO and digest below `upTo` (default: its HW); null when the broker holds no
   * replica of the partition. Absent on a driver that cannot read one (capabilities.replicaDigest
   * false): replica agreement is NOT EVALUATED, never counted as agreeing.
   */
  replicaDigest?(brokerId: number, topic: string, partition: number, upTo?: number): Promise<ReplicaDigest | null>;
  /**
   * A replica's own stored batches below `upTo`, read as bytes whatever its role; null when the
   * broker holds no replica of the partition. Absent (capabilities.storedBatches false): replica
   * bytes are not compared.
   */
  readReplicaLog?(brokerId: number, topic: string, partition: number, upTo: number): Promise<ReplicaLog | null>;
  /**
   * Each partition's high watermark as its leader reports it now (Kafka: ListOffsets LATEST),
   * answered within `timeoutMs`; a partition whose reading failed or did not come in time holds
   * the reason. Read just before a fault, so that an HW going back across it is measured.
   * Absent on a driver whose produce answers carry the HW (the http driver: the ledger notes it).
   */
  highWatermarks?(topic: string, partitions: readonly number[], timeoutMs: number): Promise<Map<number, number | { error: string }>>;
  /**
   * The partition's in-sync replicas as its leader (or the controller's metadata) says now; null
   * while it has no leader. Absent on a driver of a system without an ISR (capabilities.isr false).
   */
  inSyncReplicas?(topic: string, partition: number): Promise<number[] | null>;
  /** Figures of every live broker (a broker that does not answer is left out and named in `down`). */
  brokerMetrics(): Promise<{ brokers: BrokerMetrics[]; down: Array<{ brokerId: number; reason: string }> }>;
}

/** A client that offers every replica read (replica digests, stored batches, the ISR): the http and kafka drivers' clients. */
export type ReplicaReadingClient = ClusterClient & Required<Pick<ClusterClient, 'replicaDigest' | 'readReplicaLog' | 'inSyncReplicas'>>;

/** A driver whose clients read every replica figure and that decodes stored batches (http, kafka). */
export interface ReplicaReadingDriver extends ClientDriver {
  connect(cluster: DriverCluster, opts: ConnectOptions): ReplicaReadingClient;
  servedFromStored(bytes: Buffer): { batches: ServedBatch[]; corrupt: number };
}
