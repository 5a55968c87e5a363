// Kafka's error names, shared by the partition logic, the HTTP server and the clients that
// read its answers (harness workload, checker). The HTTP status is what a curl user sees.
import { CorruptBatchError } from '../records/errors.ts';
import { StorageError, type StorageErrorKind } from '../storage/errors.ts';

export const ERROR_STATUS = {
  NOT_LEADER_OR_FOLLOWER: 421,
  NOT_ENOUGH_REPLICAS: 503,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 503,
  REQUEST_TIMED_OUT: 504,
  CORRUPT_MESSAGE: 400,
  MESSAGE_TOO_LARGE: 413,
  UNKNOWN_TOPIC_OR_PARTITION: 404,
  INVALID_REQUEST: 400,
  KAFKA_STORAGE_ERROR: 500,
  OFFSET_OUT_OF_RANGE: 416,
  FENCED_LEADER_EPOCH: 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // Controller answers (Kafka's names): createTopic and AlterPartition.
  TOPIC_ALREADY_EXISTS: 409,
  INVALID_TOPIC_EXCEPTION: 400,
  INVALID_PARTITIONS: 400,
  INVALID_REPLICATION_FACTOR: 400,
  /** KIP-841: AlterPartition tried to add a fenced (dead) broker to the ISR. */
  INELIGIBLE_REPLICA: 409,
  // Planned leader moves (ElectLeaders PREFERRED, AlterPartitionReassignments).
  ELECTION_NOT_NEEDED: 409,
  PREFERRED_LEADER_NOT_AVAILABLE: 503,
  INVALID_REPLICA_ASSIGNMENT: 400,
} as const;

export type KafkaErrorName = keyof typeof ERROR_STATUS;

export class BrokerError extends Error {
  readonly code: KafkaErrorName;
  readonly details: Record<string, unknown>;

  constructor(code: KafkaErrorName, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'BrokerError';
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }

  /** Body of the HTTP error answer: `{error, message, ...details}`. */
  toJSON(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }
}

/** The one mapping from the storage layer's errors to Kafka's error names. */
const STORAGE_ERROR_NAMES: Readonly<Record<StorageErrorKind, KafkaErrorName>> = {
  offline: 'KAFKA_STORAGE_ERROR',
  unreadable: 'KAFKA_STORAGE_ERROR',
  'corrupt-batch': 'CORRUPT_MESSAGE',
  'too-large': 'MESSAGE_TOO_LARGE',
  'out-of-range': 'OFFSET_OUT_OF_RANGE',
  'invalid-argument': 'INVALID_REQUEST',
};

/** A storage error as the broker answers it: Kafka's name, the same message and details. */
export function brokerErrorFromStorage(e: StorageError): BrokerError {
  return new BrokerError(STORAGE_ERROR_NAMES[e.kind], e.message, e.details);
}

/**
 * Anything a storage call threw, as the broker answers it: a BrokerError as is, a StorageError
 * through STORAGE_ERROR_NAMES, a corrupt batch as CORRUPT_MESSAGE, any other failure (an fs
 * error of a checkpoint write) as KAFKA_STORAGE_ERROR with its errno and file. `context` prefixes the
 * message of the last two, e.g. "replicate t-0".
 */
export function asBrokerError(e: unknown, context: string): BrokerError {
  if (e instanceof BrokerError) return e;
  if (e instanceof StorageError) return brokerErrorFromStorage(e);
  if (e instanceof CorruptBatchError) return new BrokerError('CORRUPT_MESSAGE', `${context}: ${e.message}`, { reason: e.reason });
  const { code, path: file } = (e ?? {}) as NodeJS.ErrnoException;
  const msg = e instanceof Error ? e.message : String(e);
  return new BrokerError('KAFKA_STORAGE_ERROR', `${context}: ${msg}`, { ...(code ? { errno: code } : {}), ...(file ? { file } : {}) });
}
