// engine/replication: the replication logic (no HTTP). engine/server wraps it in processes and HTTP.
export * from './types.ts';
export { BrokerError, asBrokerError, brokerErrorFromStorage, ERROR_STATUS, type KafkaErrorName } from './errors.ts';
export { Partition } from './partition.ts';
export type {
  PartitionOptions,
  PartitionRole,
  PartitionMetrics,
  FollowerMetrics,
  ProduceResult,
  ReplicaFetchResult,
  ConsumerFetchResult,
  ConsumerSliceResult,
} from './partition-types.ts';
export {
  Controller,
  type ControllerOptions,
  type ControllerState,
  type ControllerEvent,
  type ControllerEventKind,
  type ControllerBroker,
  type HeartbeatAnswer,
} from './controller.ts';
export {
  LeaderEpochCache,
  LEADER_EPOCH_CHECKPOINT_FILE,
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
  type EpochEntry,
  type EpochEndOffset,
} from './leader-epoch-cache.ts';
export { HighWatermarkCheckpoint, HIGH_WATERMARK_CHECKPOINT_FILE } from './hw-checkpoint.ts';
export { DelayedProducePurgatory } from './purgatory.ts';
