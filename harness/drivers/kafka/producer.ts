// The kafka driver's producer: the produce load through a real Kafka client library,
// @platformatic/kafka (chosen by measurement on this machine; see README "The kafka driver").
// `connections` producer clients each keep `max.in.flight` sends going; one send is one ledger
// batch of workload.recordsPerBatch records for one partition, so its delivery report (the
// partition's base offset) acknowledges exactly that ledger batch. Every record carries its
// ledger identity in a header (identity.ts). Latency per send, integer µs, into HdrHistogram.
// acks=0 has no answer: a send is done once written to the socket, its batch is "unconfirmed"
// in the ledger (never acknowledged), and what is outstanding is bounded by the socket's
// back-pressure (handleBackPressure below), not by answers.
import * as hdr from 'hdr-histogram-js';
import { Producer } from '@platformatic/kafka';
import type { DriverCluster, ProduceOptions, ProduceResult, SecondPoint } from '../types.ts';
import { ID_HEADER, encodeIdentity } from './identity.ts';
import { DEFAULT_PRODUCER, IDEMPOTENT_IN_FLIGHT_WHY, IDEMPOTENT_MAX_IN_FLIGHT, type KafkaProducerSettings } from './producer-settings.ts';

const MAX_LATENCY_US = 120_000_000;

function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_LATENCY_US, numberOfSignificantValueDigits: 3 });
}

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

export function bootstrapOf(cluster: DriverCluster): string[] {
  const addrs = cluster.brokers.map((b) => b.kafka).filter((a): a is string => typeof a === 'string' && a !== '');
  if (addrs.length === 0) {
    throw new Error(`kafka driver: no broker of this cluster has a Kafka protocol listener address (brokers ${cluster.brokers.map((b) => `${b.id} ${b.url}`).join(', ')})`);
  }
  return addrs;
}

const kafkaAcks = (a: ProduceOptions['acks']): number => (a === 'all' ? -1 : a);

export async function runKafkaLoad(cluster: DriverCluster, opts: ProduceOptions): Promise<ProduceResult> {
  const settings: KafkaProducerSettings = { ...DEFAULT_PRODUCER, ...(opts.producer as Partial<KafkaProducerSettings> | undefined) };
  const { ledger } = opts;
  const acks = kafkaAcks(opts.acks);
  if (settings['enable.idempotence'] && acks !== -1) {
    throw new Error(`kafka driver: workload.producer enable.idempotence: true needs acks: all (Kafka's idempotent producer), this cell has acks: ${String(opts.acks)}`);
  }
  const bootstrap = bootstrapOf(cluster);
  const inFlight = settings['max.in.flight'] ?? opts.pipelining;
  if (settings['enable.idempotence'] && inFlight > IDEMPOTENT_MAX_IN_FLIGHT) {
    throw new Error(
      `kafka driver: enable.idempotence: true needs max.in.flight ${IDEMPOTENT_MAX_IN_FLIGHT} (workload.producer max.in.flight, or workload.pipelining when unset), this cell has ${inFlight}: ${IDEMPOTENT_IN_FLIGHT_WHY}`,
    );
  }
  const partitions = [...opts.leaders.keys()].sort((a, b) => a - b);
  const recordBytes = opts.factory.recordBytes;
  const value = Buffer.alloc(recordBytes, 0x61);
  const latencyUs = newHistogram();
  const correctedLatencyUs = opts.rate ? newHistogram() : null;
  const errors: Record<string, number> = {};
  // Failures once the fault is under way (connection refusals after a kill) are counted apart.
  const errorsAfterFault: Record<string, number> = {};
  const timeseries: SecondPoint[] = [];
  const loadStartMs = Date.now();
  const measureStartMs = loadStartMs + opts.warmupSec * 1000;
  const endMs = measureStartMs + opts.durationSec * 1000;
  let measuredRequests = 0;
  let measuredRecords = 0;
  let second = { requests: 0, records: 0, hist: newHistogram() };
  const stopped = () => opts.signal?.aborted === true || Date.now() >= endMs;

  const producers = Array.from(
    { length: opts.connections },
    (_, i) =>
      new Producer({
        clientId: `durolab-${i}`,
        bootstrapBrokers: bootstrap,
        acks,
        idempotent: settings['enable.idempotence'],
        // A new producer asks InitProducerId for a fresh id with -1/-1, as the Java client does.
        // @platformatic/kafka sends 0/0 unless told, which a broker may take as "bump the epoch
        // of producer 0": durolab's did, giving every connection producer id 0, so their
        // sequences collided (DUPLICATE / OUT_OF_ORDER_SEQUENCE_NUMBER without any fault).
        producerId: -1n,
        producerEpoch: -1,
        retries: settings.retries,
        retryDelay: 100,
        timeout: Math.min(opts.timeoutMs, settings['delivery.timeout.ms']),
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
      }),
  );

  const ticker = setInterval(() => {
    const now = Date.now();
    if (now < measureStartMs) return;
    timeseries.push({
      t: timeseries.length,
      recordsPerSec: second.records,
      requestsPerSec: second.requests,
      p99Us: second.hist.totalCount > 0 ? second.hist.getValueAtPercentile(99) : null,
    });
    opts.onSecond?.(timeseries[timeseries.length - 1]!);
    second = { requests: 0, records: 0, hist: newHistogram() };
  }, 1000);

  const loops = opts.connections * inFlight;
  const periodMs = opts.rate ? (loops * 1000) / opts.rate : 0;
  let nextPartition = 0;

  const sendOne = async (producer: Producer<Buffer, Buffer, Buffer, Buffer>, stream: number, intendedMs: number): Promise<void> => {
    const partition = partitions[nextPartition++ % partitions.length]!;
    const sentMs = Date.now();
    // The producer connection is the stream: the checker counts its batches served out of send order.
    const baseSequence = ledger.send(partition, sentMs, stream);
    const producerId = ledger.producerIdOf(partition);
    const messages = Array.from({ length: ledger.recordsPerBatch }, (_, i) => ({
      topic: opts.topic,
      partition,
      value,
      headers: new Map([[Buffer.from(ID_HEADER), encodeIdentity(producerId, baseSequence + i)]]),
    }));
    const t0 = process.hrtime.bigint();
    let outcome: 'ok' | string;
    let baseOffset = -1;
    try {
      // acks on every send: @platformatic/kafka's send() defaults to acks=1 whatever the producer was built with.
      const sent = producer.send({ messages, acks });
      const timeout = new Promise<never>((_, reject) => {
        const t = setTimeout(() => reject(Object.assign(new Error('delivery.timeout.ms expired'), { code: 'PLT_KFK_TIMEOUT' })), settings['delivery.timeout.ms']);
        void sent.finally(() => clearTimeout(t)).catch(() => undefined);
      });
      const r = await Promise.race([sent, timeout]);
      const o = r.offsets?.find((x) => x.topic === opts.topic && x.partition === partition);
      baseOffset = o ? Number(o.offset) : -1;
      outcome = 'ok';
    } catch (err) {
      outcome = kafkaErrorNameOf(err);
    }
    const doneMs = Date.now();
    const us = Math.max(1, Math.round(Number(process.hrtime.bigint() - t0) / 1000));
    if (outcome !== 'ok') {
      ledger.fail(partition, baseSequence, outcome, doneMs);
      const into = opts.faultSignal?.aborted ? errorsAfterFault : errors;
      into[outcome] = (into[outcome] ?? 0) + 1;
      return;
    }
    if (acks === 0 || baseOffset < 0) ledger.unconfirmed(partition, baseSequence, doneMs);
    else ledger.ack(partition, baseSequence, baseOffset, doneMs);
    if (sentMs >= measureStartMs && doneMs <= endMs + 1000) {
      latencyUs.recordValue(Math.min(us, MAX_LATENCY_US));
      if (correctedLatencyUs) correctedLatencyUs.recordValue(Math.min(MAX_LATENCY_US, Math.max(1, Math.round((doneMs - intendedMs) * 1000))));
      measuredRequests++;
      measuredRecords += ledger.recordsPerBatch;
      second.requests++;
      second.records += ledger.recordsPerBatch;
      second.hist.recordValue(Math.min(us, MAX_LATENCY_US));
    }
  };

  try {
    await Promise.all(
      producers.flatMap((producer, pi) =>
        Array.from({ length: inFlight }, async (_, li) => {
          const loop = pi * inFlight + li;
          let intended = loadStartMs + (periodMs * loop) / loops;
          while (!stopped()) {
            if (periodMs > 0) {
              const wait = intended - Date.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              if (stopped()) break;
            }
            await sendOne(producer as unknown as Producer<Buffer, Buffer, Buffer, Buffer>, pi, periodMs > 0 ? intended : Date.now());
            // acks=0: the send's promise settles without any I/O (a socket the kernel takes
            // bytes from never makes the loop wait), so yield once per send: otherwise the loop
            // holds this event loop for the whole load: no ticks, no timers, and with the process
            // target no controller answering the brokers' heartbeats (a 4 s stall here fenced
            // the leader, whose successor the checker then had to find).
            if (acks === 0) await new Promise((r) => setImmediate(r));
            intended += periodMs;
          }
        }),
      ),
    );
  } finally {
    clearInterval(ticker);
    // A producer whose brokers were killed may not close cleanly: do not let it hold the run.
    await Promise.all(producers.map((p) => Promise.race([new Promise<void>((resolve) => p.close(true, () => resolve())), new Promise((r) => setTimeout(r, 3000))])));
  }
  const end = Date.now();
  const measuredSec = Math.max(0.001, (Math.min(end, endMs) - measureStartMs) / 1000);
  return {
    errorsAfterFault,
    latencyUs,
    correctedLatencyUs,
    errors,
    timeseries,
    measuredSec,
    measuredRequests,
    measuredRecords,
    measuredBytes: measuredRecords * recordBytes,
    loadStartMs,
    measureStartMs,
    endMs: end,
    interrupted: opts.signal?.aborted === true,
  };
}
