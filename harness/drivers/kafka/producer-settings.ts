// `workload.producer:` — the Kafka producer's own settings for `workload.driver: kafka`, under
// the Java client's names. Small and free of the client library: the scenario schema imports it.
import * as z from 'zod';

export interface KafkaProducerSettings {
  /** Alias of the `acks` setting (one registry): folded into the scenario's settings. */
  acks?: 0 | 1 | 'all';
  /** Must be 0: the workload forms each batch itself (workload.recordsPerBatch records, sent at once). */
  'linger.ms': number;
  /** Bytes a batch may hold; when given, workload.recordsPerBatch records must fit (the workload forms the batches). */
  'batch.size'?: number;
  /** Produce requests in flight per producer connection (default: workload.pipelining). */
  'max.in.flight'?: number;
  'enable.idempotence': boolean;
  retries: number;
  'delivery.timeout.ms': number;
  compression: 'none';
}

/**
 * Sends in flight per idempotent producer. Kafka allows 5, but @platformatic/kafka (1.35) adds a
 * partition's batch count to its next sequence only when the produce answer arrives, so a
 * second send in flight reuses the first one's sequence and the broker answers it
 * DUPLICATE_SEQUENCE_NUMBER / OUT_OF_ORDER_SEQUENCE_NUMBER without any fault.
 */
export const IDEMPOTENT_MAX_IN_FLIGHT = 1;
export const IDEMPOTENT_IN_FLIGHT_WHY =
  "@platformatic/kafka's idempotent producer advances its sequence only when an answer arrives, so a second send in flight would reuse the first one's sequence";

const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const kafkaProducerSchema = z
  .strictObject({
    acks: z
      .union([z.literal(0), z.literal(1), z.literal(-1), z.literal('all'), z.literal('-1')])
      .transform((v): 0 | 1 | 'all' => (v === 0 || v === 1 ? v : 'all'))
      .optional(),
    'linger.ms': z.literal(0, { error: 'expected 0: the kafka driver sends each batch of workload.recordsPerBatch records at once (a linger would only delay it)' }).default(0),
    'batch.size': int(1, 2 ** 31 - 1).optional(),
    'max.in.flight': int(1, 256).optional(),
    'enable.idempotence': z.boolean().default(false),
    retries: int(0, 2 ** 31 - 1).default(3),
    'delivery.timeout.ms': int(1, 2 ** 31 - 1).default(120_000),
    compression: z.literal('none', { error: "expected none (durolab's broker has no codecs, so records travel uncompressed on every target)" }).default('none'),
  })
  .superRefine((p, ctx) => {
    if (p['enable.idempotence'] && p['max.in.flight'] !== undefined && p['max.in.flight'] > IDEMPOTENT_MAX_IN_FLIGHT) {
      ctx.addIssue({ code: 'custom', path: ['max.in.flight'], message: `expected ${IDEMPOTENT_MAX_IN_FLIGHT} with enable.idempotence: true (${IDEMPOTENT_IN_FLIGHT_WHY})`, input: p['max.in.flight'] });
    }
  });

export const DEFAULT_PRODUCER: KafkaProducerSettings = kafkaProducerSchema.parse({}) as KafkaProducerSettings;
