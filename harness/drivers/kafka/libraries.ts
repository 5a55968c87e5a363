// The one list of Kafka client libraries the kafka driver can produce through, selected by a
// scenario's `workload.producer.library` or a `library` matrix axis. The load loop
// (producer.ts), the ack ledger and the checker never know which one runs: a library only opens
// producers whose send() delivers one ledger batch and reports its base offset. Each loads
// lazily, so validating a scenario never pulls in a client library.
import type { Acks } from '../../../engine/settings/values.ts';

export const KAFKA_LIBRARY_NAMES = ['rdkafka', 'platformatic'] as const;
export type KafkaLibraryName = (typeof KAFKA_LIBRARY_NAMES)[number];

/** librdkafka: it holds up under load; @platformatic/kafka is faster on an idle machine (README "The kafka driver"). */
export const DEFAULT_KAFKA_LIBRARY: KafkaLibraryName = 'rdkafka';

export interface KafkaOpenOptions {
  bootstrap: string[];
  clientId: string;
  acks: Acks;
  idempotent: boolean;
  /** Ledger batches this producer keeps in flight (the driver's loops per connection). */
  inFlight: number;
  retries: number;
  /** Produce request timeout (acks=all waits up to this for the ISR). */
  requestTimeoutMs: number;
  deliveryTimeoutMs: number;
  /** Records per ledger batch: one send() carries exactly these. */
  recordsPerBatch: number;
  /** workload.producer batch.size, when given. */
  batchBytes?: number;
}

/**
 * What one send() got back: the batch's base offset (-1: the answer carried none: acks=0, or with
 * acks >= 1 a batch acknowledged without an offset, as librdkafka reports a retry the broker
 * found a duplicate of; it is acknowledged all the same).
 */
export interface KafkaSendResult {
  baseOffset: number;
  /**
   * Each record's own outcome, when the library reported them apart and they are not simply
   * consecutive: an offset (it split the ledger batch and another producer's records landed
   * between the parts), ACKED_WITHOUT_OFFSET or RECORD_NOT_ACKED (harness/workload/ledger.ts).
   */
  recordOffsets?: number[];
  /** Some records failed while the others were acknowledged: the first failure (RECORD_NOT_ACKED marks them). */
  partialError?: unknown;
}

export interface KafkaRecordOut {
  value: Buffer;
  /** The ledger identity header (identity.ts), one per record. */
  identity: Buffer;
}

export interface KafkaProducerHandle {
  /** Sends one ledger batch to one partition; rejects with the library's error on failure. */
  send(topic: string, partition: number, records: KafkaRecordOut[]): Promise<KafkaSendResult>;
  /**
   * Closes the producer, giving what it still queues up to flushMs to be delivered (0: purged at
   * once, for a load whose sends were abandoned after a stop: the brokers may be gone).
   */
  close(flushMs: number): Promise<void>;
}

export interface KafkaClientLibrary {
  open(opts: KafkaOpenOptions): Promise<KafkaProducerHandle>;
  /** Kafka's error name of a failed send (the broker's when it answered one), else CLIENT_*. */
  errorName(err: unknown): string;
}

export interface KafkaLibrarySpec {
  /** npm package and version (package.json pins it). */
  package: string;
  /** Short name for cell labels. */
  label: string;
  summary: string;
  /** Sends an idempotent producer of this library may keep in flight and stay correct. */
  idempotentMaxInFlight: number;
  /** Why that limit, for `scenario check` messages. */
  idempotentWhy: string;
  load(): Promise<KafkaClientLibrary>;
}

export const KAFKA_LIBRARIES: Record<KafkaLibraryName, KafkaLibrarySpec> = {
  rdkafka: {
    label: 'librdkafka',
    package: '@confluentinc/kafka-javascript 1.10.1 (librdkafka 2.15.1)',
    summary: 'native librdkafka, per-message delivery reports; idempotence with one send in flight',
    idempotentMaxInFlight: 1,
    idempotentWhy:
      "librdkafka 2.15 counts messages, not requests, against its 5-request idempotence window (librdkafka PR #4989), so it sends one request at a time per partition; with more ledger sends queued behind it an idempotent load against 3 durolab brokers stalled here (180 records/s, p50 2.2 s, against 4,300 records/s with one in flight)",
    load: async () => (await import('./rdkafka-client.ts')).rdkafkaLibrary(),
  },
  platformatic: {
    label: '@platformatic/kafka',
    package: '@platformatic/kafka 1.35.0',
    summary: 'pure JavaScript, one send() per ledger batch, idempotence with one send in flight',
    idempotentMaxInFlight: 1,
    idempotentWhy: "@platformatic/kafka's idempotent producer advances its sequence only when an answer arrives, so a second send in flight would reuse the first one's sequence",
    load: async () => (await import('./platformatic-client.ts')).platformaticLibrary(),
  },
};

export function isKafkaLibraryName(v: unknown): v is KafkaLibraryName {
  return typeof v === 'string' && (KAFKA_LIBRARY_NAMES as readonly string[]).includes(v);
}
