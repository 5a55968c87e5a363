// librdkafka (through @confluentinc/kafka-javascript) as a client library of the kafka driver
// (libraries.ts). librdkafka produces message by message and reports each message's delivery
// (offset or error) on its own; send() enqueues a ledger batch's records back to back and
// settles once every one of them is reported:
//
// - batch.num.messages = recordsPerBatch and a 5 ms linger: a full ledger batch leaves at once
//   as one Kafka batch (librdkafka sends when the batch count is reached), and a partly queued
//   one is not cut before the JS loop has enqueued the rest (microseconds);
// - every record acknowledged at consecutive offsets: the batch's base offset acknowledges it;
// - any record failed: the batch failed with that record's error (Kafka's name when the broker
//   answered one, CLIENT_* for librdkafka's local errors);
// - acknowledged, but not at consecutive offsets (librdkafka split it and another producer's
//   records landed between the parts; rare): each record's offset goes to the ledger.
//
// Without idempotence librdkafka retries a failed request as the Java client does (the records
// may already be in the log: duplicates), and with more than one request in flight a retried
// request can land behind later ones (reordering) — what the producer-idempotence and
// producer-inflight scenarios count.
import { loadRdkafka, type RdkafkaModule } from '../../../engine/common/rdkafka.ts';
import { kafkaErrorName } from '../../../engine/protocol/error-codes.ts';
import { ID_HEADER } from './identity.ts';
import type { KafkaClientLibrary, KafkaOpenOptions, KafkaProducerHandle, KafkaRecordOut, KafkaSendResult } from './libraries.ts';

type RdProducer = InstanceType<RdkafkaModule['Producer']>;

/** One ledger batch in flight: its records' reports as they arrive. */
interface Pending {
  left: number;
  offsets: number[];
  error: unknown;
  resolve(r: KafkaSendResult): void;
  reject(e: unknown): void;
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
    if (err) batch.error ??= err;
    else batch.offsets[index] = report.offset;
    if (--batch.left > 0) return;
    if (batch.error) return batch.reject(batch.error);
    const base = batch.offsets[0]!;
    if (!(base >= 0)) return batch.resolve({ baseOffset: -1 });
    for (let i = 1; i < batch.offsets.length; i++) {
      if (batch.offsets[i] !== base + i) return batch.resolve({ baseOffset: base, recordOffsets: batch.offsets });
    }
    batch.resolve({ baseOffset: base });
  });
  await connect(producer, o);
  // Delivery reports from librdkafka's own background thread, not a JS poll timer.
  producer.setPollInBackground(true);

  const send = (topic: string, partition: number, records: KafkaRecordOut[]): Promise<KafkaSendResult> =>
    new Promise((resolve, reject) => {
      const batch: Pending = { left: records.length, offsets: new Array<number>(records.length), error: undefined, resolve, reject };
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        try {
          producer.produce(topic, partition, r.value, null, null, { batch, index: i } satisfies Opaque, [{ [ID_HEADER]: r.identity }]);
        } catch (err) {
          // Refused before it was queued (e.g. queue full): the rest of the batch is not sent.
          batch.error ??= err;
          batch.left -= records.length - i;
          if (batch.left === 0) reject(batch.error);
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
