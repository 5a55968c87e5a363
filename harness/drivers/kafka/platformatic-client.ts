// @platformatic/kafka as a client library of the kafka driver (libraries.ts): one send() of
// recordsPerBatch messages per ledger batch, its answer's base offset acknowledging it (an answer
// without the partition's offset still acknowledges it, with acks >= 1: baseOffset -1).
import { Producer } from '@platformatic/kafka';
import type { KafkaClientLibrary, KafkaOpenOptions, KafkaProducerHandle, KafkaRecordOut } from './library-types.ts';
import { ID_HEADER } from './identity.ts';

const ID_HEADER_KEY = Buffer.from(ID_HEADER);

/** Kafka's error name of a client failure (the broker's code when it answered one), else CLIENT_*. */
export function kafkaErrorNameOf(err: unknown, depth = 0): string {
  const e = err as { apiId?: unknown; code?: unknown; errors?: unknown[]; cause?: unknown; name?: unknown } | null;
  if (!e || depth > 5) return 'CLIENT_ERROR';
  if (typeof e.apiId === 'string' && /^[A-Z_]+$/.test(e.apiId)) return e.apiId;
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const n = kafkaErrorNameOf(inner, depth + 1);
    if (n !== 'CLIENT_ERROR') return n;
  }
  if (e.code === 'PLT_KFK_TIMEOUT' || e.name === 'TimeoutError') return 'CLIENT_TIMEOUT';
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return `CLIENT_${e.code}`;
  if (e.cause) return kafkaErrorNameOf(e.cause, depth + 1);
  return 'CLIENT_ERROR';
}

function open(o: KafkaOpenOptions): Promise<KafkaProducerHandle> {
  const acks = o.acks === 'all' ? -1 : o.acks;
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: o.clientId,
    bootstrapBrokers: o.bootstrap,
    acks,
    idempotent: o.idempotent,
    // A new producer asks InitProducerId for a fresh id with -1/-1, as the Java client does.
    // @platformatic/kafka sends 0/0 unless told, which a broker may take as "bump the epoch
    // of producer 0": durolab's did, giving every connection producer id 0, so their
    // sequences collided (DUPLICATE / OUT_OF_ORDER_SEQUENCE_NUMBER without any fault).
    producerId: -1n,
    producerEpoch: -1,
    retries: o.retries,
    retryDelay: 100,
    timeout: Math.min(o.requestTimeoutMs, o.deliveryTimeoutMs),
    autocreateTopics: false,
    strict: true,
    // acks=0 flow control (Kafka's producer bounds its unsent bytes by buffer.memory): with
    // no answer to wait for, a send completes once handed to the socket, so without this the
    // closed loop queued requests in the socket's user-space buffer faster than the broker
    // read them (13 MB over 8 connections in 4 s here). With it, a request waits for the
    // socket to drain before it is written: at most one request per connection sits
    // unwritten beyond the kernel's buffer, plus the sends queued behind it (max.in.flight).
    // acks 1 and all are bounded by their answers (max.in.flight): left as they were.
    handleBackPressure: acks === 0,
  });
  const send = async (topic: string, partition: number, records: KafkaRecordOut[]) => {
    const messages = records.map((r) => ({ topic, partition, value: r.value, headers: new Map([[ID_HEADER_KEY, r.identity]]) }));
    // acks on every send: @platformatic/kafka's send() defaults to acks=1 whatever the producer was built with.
    const sent = producer.send({ messages, acks });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('delivery.timeout.ms expired'), { code: 'PLT_KFK_TIMEOUT' })), o.deliveryTimeoutMs);
    });
    try {
      const r = await Promise.race([sent, timeout]);
      const off = r.offsets?.find((x) => x.topic === topic && x.partition === partition);
      return { baseOffset: off ? Number(off.offset) : -1 };
    } finally {
      clearTimeout(timer);
      void sent.catch(() => undefined);
    }
  };
  // A producer whose brokers were killed may not close cleanly: do not let it hold the run.
  // force: requests still queued are failed at once (this client has no flush-before-close).
  const close = (flushMs: number) => Promise.race([new Promise<void>((resolve) => producer.close(true, () => resolve())), new Promise<void>((r) => setTimeout(r, flushMs + 1000))]);
  return Promise.resolve({ send, close });
}

export function platformaticLibrary(): KafkaClientLibrary {
  return { open, errorName: kafkaErrorNameOf };
}
