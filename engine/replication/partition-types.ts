// What a Partition (partition.ts) takes and answers: its options, produce and fetch results,
// and the metrics the broker serves at /v1/metrics.
import type { FileSlice, LogConfig, LogStats } from '../storage/types.ts';
import type { AlterPartitionRequest, PartitionAssignment } from './types.ts';
import type { BrokerError } from './errors.ts';

export type PartitionRole = 'leader' | 'follower' | 'none';

export interface ProduceResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTimeMs: number;
  /** The HW when the answer was made (for acks=all: > lastOffset). */
  hw: number;
  recordCount: number;
  flushUs: number;
  writeUs: number;
}

export interface PartitionOptions {
  topic: string;
  partition: number;
  brokerId: number;
  /** Broker data dir; the log lives in dataDir/<topic>-<partition>. */
  dataDir: string;
  logConfig: Partial<LogConfig>;
  /** min.insync.replicas (acks=all only). */
  minInsyncReplicas: number;
  /** replica.lag.time.max.ms: a follower not caught up for longer leaves the ISR. */
  replicaLagTimeMaxMs: number;
  now?: () => number;
  /** AlterPartition: resolves with the controller's accepted state or rejects (fenced). */
  proposeIsr: (req: AlterPartitionRequest) => Promise<PartitionAssignment>;
  /**
   * Every KAFKA_STORAGE_ERROR this partition answers or meets (its log going offline, a refused
   * append, a failed HW checkpoint), with the cause in details (errno, file, dir, atMs): the
   * broker logs each cause once (engine/server/storage-error-log.ts).
   */
  onStorageError?: (e: BrokerError) => void;
}

export interface ReplicaFetchResult {
  data: Buffer;
  nextOffset: number;
  highWatermark: number;
  leaderEpoch: number;
  logStartOffset: number;
}

export interface ConsumerFetchResult {
  data: Buffer;
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

/** A consumer fetch as file slices of the leader's segments (Partition.sliceForConsumer). */
export interface ConsumerSliceResult {
  slices: FileSlice[];
  bytes: number;
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

export interface FollowerMetrics {
  id: number;
  /** -1 until the follower fetched from this leader. */
  leo: number;
  lastCaughtUpTimeMs: number;
  inIsr: boolean;
}

/** The partition's state and counters, with its log's append and flush figures. */
export interface PartitionMetrics extends Pick<LogStats, 'appends' | 'records' | 'bytes' | 'flushes' | 'flushTimeUs' | 'writeTimeUs' | 'rolls' | 'rollTimeUs' | 'segments'> {
  topic: string;
  partition: number;
  role: PartitionRole;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
  /** The ISR used for the HW while an AlterPartition is in flight (= isr otherwise). */
  maximalIsr: number[];
  hw: number;
  leo: number;
  logStartOffset: number;
  purgatorySize: number;
  purgatoryCompleted: number;
  purgatoryExpired: number;
  /** Long-poll fetches waiting in waitForData. */
  longPolls: number;
  followers: FollowerMetrics[];
  isrShrinks: number;
  isrExpands: number;
  isrProposalsRejected: number;
  truncations: number;
  bytesTruncated: number;
  errors: Record<string, number>;
}
