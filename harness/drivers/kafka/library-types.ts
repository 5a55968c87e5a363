// What a Kafka client library offers the kafka driver: producers whose send() delivers one
// ledger batch and reports its base offset. Each library (rdkafka-client.ts,
// platformatic-client.ts) implements it; libraries.ts loads the one a cell names.
import type { Acks } from '../../../engine/settings/values.ts';

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
   * between the parts), ACKED_WITHOUT_OFFSET or RECORD_NOT_ACKED (harness/history/ledger.ts).
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
