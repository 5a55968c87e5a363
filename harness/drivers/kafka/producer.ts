// The kafka driver's producer: the produce load through a real Kafka client library, chosen by
// workload.producer.library from the registry (libraries.ts; librdkafka by default: README
// "The kafka driver" has what each reached here). `connections` producers each keep `max.in.flight`
// sends going; one send is one ledger batch of workload.recordsPerBatch records for one
// partition, so its delivery report (the partition's base offset) acknowledges exactly that
// ledger batch. Every record carries its ledger identity in a header (identity.ts). Latency per
// send, integer µs, into HdrHistogram. Nothing here depends on which library runs.
// acks=0 has no answer: a send is done once written to the socket, its batch is "unconfirmed"
// in the ledger (never acknowledged), and what is outstanding is bounded by the socket's
// back-pressure (each library's client), not by answers. With acks >= 1 a send that succeeded is
// acknowledged whether or not its report carried an offset (ledgerSendOutcome).
import type { Acks } from '../../../engine/settings/values.ts';
import type { DriverCluster, ProduceLedger, ProduceOptions, ProduceResult } from '../types.ts';
import { runClosedLoops, type LoadTurn } from '../closed-loop-load.ts';
import { elapsedUs } from '../load-meter.ts';
import { encodeIdentity } from './identity.ts';
import { DEFAULT_KAFKA_LIBRARY, KAFKA_LIBRARIES } from '../../model/kafka-libraries.ts';
import { loadKafkaLibrary } from './libraries.ts';
import { type KafkaProducerHandle, type KafkaRecordOut, type KafkaSendResult } from './library-types.ts';
import { DEFAULT_PRODUCER, type KafkaProducerSettings } from '../../model/kafka-producer.ts';

/** A producer closing after a load that ended normally: what it still queues gets this long. */
const CLOSE_FLUSH_MS = 2000;
/** And the producers at most this long to close. */
const CLOSE_GRACE_MS = 5000;

export function bootstrapOf(cluster: DriverCluster): string[] {
  const addrs = cluster.brokers.map((b) => b.kafka).filter((a): a is string => typeof a === 'string' && a !== '');
  if (addrs.length === 0) {
    throw new Error(`kafka driver: no broker of this cluster has a Kafka protocol listener address (brokers ${cluster.brokers.map((b) => `${b.id} ${b.url}`).join(', ')})`);
  }
  return addrs;
}

/**
 * Writes one send's outcome into the ledger; returns the error name to count (a failed send, or
 * the failed part of a batch acknowledged in part), else null. acks=0: nothing is promised
 * (unconfirmed). acks >= 1: a send that succeeded is acknowledged even when its report carried
 * no offset (librdkafka's report of a retry the broker found a duplicate of): it must survive,
 * and the checker finds it by its identity.
 */
export function ledgerSendOutcome(
  ledger: ProduceLedger,
  acks: Acks,
  at: { partition: number; baseSequence: number; atMs: number },
  outcome: KafkaSendResult | { failed: string },
  errorName: (err: unknown) => string,
): string | null {
  const { partition, baseSequence, atMs } = at;
  if ('failed' in outcome) {
    ledger.fail(partition, baseSequence, outcome.failed, atMs);
    return outcome.failed;
  }
  if (acks === 0) {
    ledger.unconfirmed(partition, baseSequence, atMs);
    return null;
  }
  const partial = outcome.partialError !== undefined ? errorName(outcome.partialError) : undefined;
  ledger.ack(partition, baseSequence, outcome.baseOffset, atMs, outcome.recordOffsets, partial);
  return partial ?? null;
}

export async function runKafkaLoad(cluster: DriverCluster, opts: ProduceOptions): Promise<ProduceResult> {
  const settings: KafkaProducerSettings = { ...DEFAULT_PRODUCER, ...(opts.producer as Partial<KafkaProducerSettings> | undefined) };
  const { ledger } = opts;
  const libraryName = settings.library ?? DEFAULT_KAFKA_LIBRARY;
  const spec = KAFKA_LIBRARIES[libraryName];
  if (settings['enable.idempotence'] && opts.acks !== 'all') {
    throw new Error(`kafka driver: workload.producer enable.idempotence: true needs acks: all (Kafka's idempotent producer), this cell has acks: ${String(opts.acks)}`);
  }
  const bootstrap = bootstrapOf(cluster);
  const inFlight = settings['max.in.flight'] ?? opts.pipelining;
  if (settings['enable.idempotence'] && inFlight > spec.idempotentMaxInFlight) {
    throw new Error(
      `kafka driver: enable.idempotence: true with library ${libraryName} needs max.in.flight <= ${spec.idempotentMaxInFlight} (workload.producer max.in.flight, or workload.pipelining when unset), this cell has ${inFlight}: ${spec.idempotentWhy}`,
    );
  }
  const library = await loadKafkaLibrary(libraryName);
  const partitions = [...opts.leaders.keys()].sort((a, b) => a - b);
  const value = Buffer.alloc(opts.factory.recordBytes, 0x61);

  const producers: KafkaProducerHandle[] = [];
  try {
    for (let i = 0; i < opts.connections; i++) {
      producers.push(
        await library.open({
          bootstrap,
          clientId: `durolab-${i}`,
          acks: opts.acks,
          idempotent: settings['enable.idempotence'],
          inFlight,
          retries: settings.retries,
          requestTimeoutMs: opts.timeoutMs,
          deliveryTimeoutMs: settings['delivery.timeout.ms'],
          recordsPerBatch: ledger.recordsPerBatch,
          ...(settings['batch.size'] !== undefined ? { batchBytes: settings['batch.size'] } : {}),
        }),
      );
    }
  } catch (err) {
    await Promise.all(producers.map((p) => p.close(0)));
    throw err;
  }
  let nextPartition = 0;

  const sendOne = async (producer: KafkaProducerHandle, stream: number, intendedMs: number, load: LoadTurn): Promise<void> => {
    const partition = partitions[nextPartition++ % partitions.length]!;
    const sentMs = Date.now();
    // The producer connection is the stream: the checker counts its batches served out of send order.
    const baseSequence = ledger.send(partition, sentMs, stream);
    const producerId = ledger.producerIdOf(partition);
    const records: KafkaRecordOut[] = Array.from({ length: ledger.recordsPerBatch }, (_, i) => ({ value, identity: encodeIdentity(producerId, baseSequence + i) }));
    const t0 = process.hrtime.bigint();
    let outcome: KafkaSendResult | { failed: string };
    try {
      outcome = await producer.send(opts.topic, partition, records);
    } catch (err) {
      outcome = { failed: library.errorName(err) };
    }
    if (load.abandoned) return;
    const doneMs = Date.now();
    const us = elapsedUs(t0);
    const error = ledgerSendOutcome(ledger, opts.acks, { partition, baseSequence, atMs: doneMs }, outcome, library.errorName);
    if (error !== null) load.count(error);
    if ('failed' in outcome) return;
    load.measured({ sentMs, doneMs, us, intendedMs }, ledger.recordsPerBatch);
  };

  return runClosedLoops(opts, {
    clients: producers,
    loopsPerClient: inFlight,
    turn: sendOne,
    // acks=0: the send's promise can settle without any I/O (a socket the kernel takes
    // bytes from never makes the loop wait), so yield once per send: otherwise the loop
    // holds this event loop for the whole load: no ticks, no timers, and with the process
    // target no controller answering the brokers' heartbeats (a 4 s stall here fenced
    // the leader, whose successor the checker then had to find).
    ...(opts.acks === 0 ? { between: () => new Promise<void>((r) => setImmediate(r)) } : {}),
    close: async (abandoned) => {
      // A client whose brokers are all gone may not close promptly either.
      // After abandoned sends nothing more is recorded: what the producers still queue is purged, not delivered to brokers that may be restarting.
      const flushMs = abandoned ? 0 : CLOSE_FLUSH_MS;
      await Promise.race([Promise.all(producers.map((p) => p.close(flushMs).catch(() => undefined))), new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
    },
  });
}
