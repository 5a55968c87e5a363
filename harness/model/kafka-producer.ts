// `workload.producer:` — the Kafka producer's own settings for `workload.driver: kafka`, under
// the Java client's names, and the client library that produces (libraries.ts). Small and free
// of any client library: the scenario schema imports it.
import * as z from 'zod';
import { DEFAULT_KAFKA_LIBRARY, KAFKA_LIBRARIES, KAFKA_LIBRARY_NAMES, type KafkaLibraryName } from './kafka-libraries.ts';

export interface KafkaProducerSettings {
  /** The client library (libraries.ts); default DEFAULT_KAFKA_LIBRARY. */
  library?: KafkaLibraryName;
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

/** Most sends in flight an idempotent producer of this library keeps correct, and why. */
export function idempotentInFlightLimit(library: KafkaLibraryName | undefined): { max: number; why: string; library: KafkaLibraryName } {
  const name = library ?? DEFAULT_KAFKA_LIBRARY;
  return { max: KAFKA_LIBRARIES[name].idempotentMaxInFlight, why: KAFKA_LIBRARIES[name].idempotentWhy, library: name };
}

const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const kafkaProducerSchema = z
  .strictObject({
    library: z.enum(KAFKA_LIBRARY_NAMES, { error: `expected ${KAFKA_LIBRARY_NAMES.join(' | ')} (the Kafka client library the kafka driver produces through)` }).optional(),
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
    const limit = idempotentInFlightLimit(p.library);
    if (p['enable.idempotence'] && p['max.in.flight'] !== undefined && p['max.in.flight'] > limit.max) {
      ctx.addIssue({ code: 'custom', path: ['max.in.flight'], message: `expected at most ${limit.max} with enable.idempotence: true and library ${limit.library} (${limit.why})`, input: p['max.in.flight'] });
    }
  });

export const DEFAULT_PRODUCER: KafkaProducerSettings = kafkaProducerSchema.parse({}) as KafkaProducerSettings;
