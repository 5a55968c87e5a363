// librdkafka (through @confluentinc/kafka-javascript) as a client library of the kafka driver
// (libraries.ts). librdkafka produces message by message and reports each message's delivery
// (offset or error) on its own; send() enqueues a ledger batch's records back to back and
// settles once every one of them is reported:
//
// - batch.num.messages = recordsPerBatch and a 5 ms linger: a full ledger batch leaves at once
//   as one Kafka batch (librdkafka sends when the batch count is reached), and a partly queued
//   one is not cut before the JS loop has enqueued the rest (microseconds);
// - every record acknowledged at consecutive offsets: the batch's base offset acknowledges it;
// - every record failed: the batch failed with the first record's error (Kafka's name when the
//   broker answered one, CLIENT_* for librdkafka's local errors);
// - otherwise each record keeps its own outcome in the ledger (settleDeliveries): its offset, no
//   offset (acknowledged all the same: librdkafka reports a retry the broker found a duplicate
//   of without one), or failed while the rest of its batch was acknowledged (librdkafka split it).
//
// Without idempotence librdkafka retries a failed request as the Java client does (the records
// may already be in the log: duplicates), and with more than one request in flight a retried
// request can land behind later ones (reordering) — what the producer-idempotence and
// producer-inflight scenarios count.
import { loadRdkafka, type RdkafkaModule } from '../../../engine/common/rdkafka.ts';
import { kafkaErrorName } from '../../../engine/protocol/error-codes.ts';
import { ID_HEADER } from './identity.ts';
import { ACKED_WITHOUT_OFFSET, RECORD_NOT_ACKED } from '../../history/ledger.ts';
import type { KafkaClientLibrary, KafkaOpenOptions, KafkaProducerHandle, KafkaRecordOut, KafkaSendResult } from './library-types.ts';

type RdProducer = InstanceType<RdkafkaModule['Producer']>;

/** One record's delivery report: an error, or an offset (absent or negative: the report carried none). */
export interface DeliveryReport {
  error?: unknown;
  offset?: number;
}

/** One ledger batch in flight: its records' reports as they arrive. */
interface Pending {
  left: number;
  reports: DeliveryReport[];
  resolve(r: KafkaSendResult): void;
  reject(e: unknown): void;
}

/**
 * A ledger batch's outcome from its records' delivery reports: failed (every record failed:
 * the first error), or acknowledged with each record's own outcome where they differ from
 * consecutive offsets. A report without an offset and without an error acknowledges its record
 * (acks >= 1: librdkafka answers a duplicate-sequence retry that way).
 */
export function settleDeliveries(reports: readonly DeliveryReport[]): { sent: KafkaSendResult } | { error: unknown } {
  const failed = reports.find((r) => r.error);
  if (reports.every((r) => r.error)) return { error: failed?.error ?? new Error('a batch of no records') };
  const offsets = reports.map((r) => (r.error ? RECORD_NOT_ACKED : typeof r.offset === 'number' && r.offset >= 0 ? r.offset : ACKED_WITHOUT_OFFSET));
  const base = offsets[0]! >= 0 ? offsets[0]! : -1;
  if (base >= 0 && offsets.every((o, i) => o === base + i)) return { sent: { baseOffset: base } };
  if (offsets.every((o) => o === ACKED_WITHOUT_OFFSET)) return { sent: { baseOffset: -1 } };
  return { sent: { baseOffset: base, recordOffsets: offsets, ...(failed ? { partialError: failed.error } : {}) } };
}

/** What a message's opaque carries back in its delivery report. */
interface Opaque {
  batch: Pending;
  index: number;
}

/** librdkafka's error code name (CODES.ERRORS) for local (negative) codes. */
let localNames: Map<number, string> | null = null;

export function rdkafkaErrorName(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'number' ? e.code : null;
  if (code === null) return 'CLIENT_ERROR';
  if (code > 0) {
    const name = kafkaErrorName(code);
    if (!name.startsWith('UNKNOWN_ERROR_CODE_')) return name;
  }
  const rd = loadRdkafka().module;
  if (!localNames && rd) localNames = new Map(Object.entries(rd.CODES.ERRORS as Record<string, number>).map(([n, c]) => [c, n]));
  const name = localNames?.get(code);
  if (code === -192 || code === -185) return 'CLIENT_TIMEOUT'; // _MSG_TIMED_OUT (delivery.timeout.ms), _TIMED_OUT
  if (!name) return `CLIENT_RDKAFKA_${code}`;
  // ERR__TRANSPORT -> CLIENT_TRANSPORT; a broker code Kafka names differently -> librdkafka's name.
  return code < 0 ? `CLIENT_${name.replace(/^ERR__/, '')}` : name.replace(/^ERR_/, '');
}

function connect(producer: RdProducer, o: KafkaOpenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kafka driver (librdkafka): producer ${o.clientId} not connected within 30 s to ${o.bootstrap.join(',')}`)), 30_000);
    producer.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
    producer.once('connection.failure', (err) => {
      clearTimeout(timer);
      reject(new Error(`kafka driver (librdkafka): producer ${o.clientId} could not connect to ${o.bootstrap.join(',')}: ${err.message}`));
    });
    producer.connect();
  });
}

async function open(rd: RdkafkaModule, o: KafkaOpenOptions): Promise<KafkaProducerHandle> {
  const batchBytes = Math.max(o.batchBytes ?? 1_000_000, 1);
  const producer = new rd.Producer({
    'bootstrap.servers': o.bootstrap.join(','),
    'client.id': o.clientId,
    acks: o.acks === 'all' ? -1 : o.acks,
    'enable.idempotence': o.idempotent,
    'max.in.flight.requests.per.connection': o.inFlight,
    retries: o.retries,
    'retry.backoff.ms': 100,
    'request.timeout.ms': Math.min(o.requestTimeoutMs, o.deliveryTimeoutMs),
    'delivery.timeout.ms': o.deliveryTimeoutMs,
    'linger.ms': 5,
    'batch.num.messages': o.recordsPerBatch,
    'batch.size': batchBytes,
    'compression.codec': 'none',
    'socket.nagle.disable': true,
    dr_cb: true,
  });
  producer.on('delivery-report', (err, report) => {
    const { batch, index } = report.opaque as Opaque;
    batch.reports[index] = err ? { error: err } : { offset: report.offset };
    if (--batch.left > 0) return;
    const settled = settleDeliveries(batch.reports);
    if ('error' in settled) batch.reject(settled.error);
    else batch.resolve(settled.sent);
  });
  await connect(producer, o);
  // Delivery reports from librdkafka's own background thread, not a JS poll timer.
  producer.setPollInBackground(true);

  const send = (topic: string, partition: number, records: KafkaRecordOut[]): Promise<KafkaSendResult> =>
    new Promise((resolve, reject) => {
      const batch: Pending = { left: records.length, reports: new Array<DeliveryReport>(records.length), resolve, reject };
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        try {
          producer.produce(topic, partition, r.value, null, null, { batch, index: i } satisfies Opaque, [{ [ID_HEADER]: r.identity }]);
        } catch (err) {
          // Refused before it was queued (e.g. queue full): the rest of the batch is not sent.
          for (let k = i; k < records.length; k++) batch.reports[k] = { error: err };
          batch.left -= records.length - i;
          if (batch.left > 0) return;
          const settled = settleDeliveries(batch.reports);
          if ('error' in settled) reject(settled.error);
          else resolve(settled.sent);
          return;
        }
      }
    });

  // A producer whose brokers were killed may not close cleanly: do not let it hold the run.
  const close = (flushMs: number) => Promise.race([new Promise<void>((resolve) => producer.disconnect(flushMs, () => resolve())), new Promise<void>((r) => setTimeout(r, flushMs + 1000))]);
  return { send, close };
}

export function rdkafkaLibrary(): KafkaClientLibrary {
  const r = loadRdkafka();
  if (!r.module) throw new Error(`kafka driver: workload.producer library rdkafka: ${r.reason}`);
  const rd = r.module;
  return { open: (o) => open(rd, o), errorName: rdkafkaErrorName };
}
