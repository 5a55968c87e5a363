// The Kafka client libraries the kafka driver can produce through, as data: their names (a
// scenario's `workload.producer.library` or a `library` axis), packages and the limits scenario
// checks quote. harness/drivers/kafka/libraries.ts loads each one's code, lazily.

export const KAFKA_LIBRARY_NAMES = ['rdkafka', 'platformatic'] as const;
export type KafkaLibraryName = (typeof KAFKA_LIBRARY_NAMES)[number];

/** librdkafka: it holds up under load; @platformatic/kafka is faster on an idle machine (README "The kafka driver"). */
export const DEFAULT_KAFKA_LIBRARY: KafkaLibraryName = 'rdkafka';

export interface KafkaLibraryFacts {
  /** npm package and version (package.json pins it). */
  package: string;
  /** Short name for cell labels. */
  label: string;
  summary: string;
  /** Sends an idempotent producer of this library may keep in flight and stay correct. */
  idempotentMaxInFlight: number;
  /** Why that limit, for `scenario check` messages. */
  idempotentWhy: string;
}

export const KAFKA_LIBRARIES: Record<KafkaLibraryName, KafkaLibraryFacts> = {
  rdkafka: {
    label: 'librdkafka',
    package: '@confluentinc/kafka-javascript 1.10.1 (librdkafka 2.15.1)',
    summary: 'native librdkafka, per-message delivery reports; idempotence with one send in flight',
    idempotentMaxInFlight: 1,
    idempotentWhy:
      "librdkafka 2.15 counts messages, not requests, against its 5-request idempotence window (librdkafka PR #4989), so it sends one request at a time per partition; with more ledger sends queued behind it an idempotent load against 3 durolab brokers stalled here (180 records/s, p50 2.2 s, against 4,300 records/s with one in flight)",
  },
  platformatic: {
    label: '@platformatic/kafka',
    package: '@platformatic/kafka 1.35.0',
    summary: 'pure JavaScript, one send() per ledger batch, idempotence with one send in flight',
    idempotentMaxInFlight: 1,
    idempotentWhy: "@platformatic/kafka's idempotent producer advances its sequence only when an answer arrives, so a second send in flight would reuse the first one's sequence",
  },
};

export function isKafkaLibraryName(v: unknown): v is KafkaLibraryName {
  return typeof v === 'string' && (KAFKA_LIBRARY_NAMES as readonly string[]).includes(v);
}
