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
import * as hdr from 'hdr-histogram-js';
import type { Acks } from '../../../engine/settings/values.ts';
import type { DriverCluster, ProduceLedger, ProduceOptions, ProduceResult, SecondPoint } from '../types.ts';
import { encodeIdentity } from './identity.ts';
import { DEFAULT_KAFKA_LIBRARY, KAFKA_LIBRARIES, type KafkaProducerHandle, type KafkaRecordOut, type KafkaSendResult } from './libraries.ts';
import { DEFAULT_PRODUCER, type KafkaProducerSettings } from './producer-settings.ts';

const MAX_LATENCY_US = 120_000_000;
/**
 * After a stop, sends in flight get this long to be answered (see abandonAfterStop). A send to a
 * broker that died is not answered at all; one to a live broker is answered in milliseconds, or
 * after the leader shrinks its ISR (replica.lag.time.max.ms: 30 s on Kafka), far beyond any grace.
 */
const IN_FLIGHT_GRACE_MS = 1000;
/** A producer closing after a load that ended normally: what it still queues gets this long. */
const CLOSE_FLUSH_MS = 2000;
/** And the producers at most this long to close. */
const CLOSE_GRACE_MS = 5000;

function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_LATENCY_US, numberOfSignificantValueDigits: 3 });
}

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
  const library = await spec.load();
  const partitions = [...opts.leaders.keys()].sort((a, b) => a - b);
  const recordBytes = opts.factory.recordBytes;
  const value = Buffer.alloc(recordBytes, 0x61);
  const latencyUs = newHistogram();
  const correctedLatencyUs = opts.rate ? newHistogram() : null;
  const errors: Record<string, number> = {};
  // Failures once the fault is under way (connection refusals after a kill) are counted apart.
  const errorsAfterFault: Record<string, number> = {};
  const timeseries: SecondPoint[] = [];
  let measuredRequests = 0;
  let measuredRecords = 0;
  let second = { requests: 0, records: 0, hist: newHistogram() };
  const stopped = () => opts.signal?.aborted === true || Date.now() >= endMs;
  // A stop (the fault's moment, Ctrl-C) waits this long for sends in flight, then leaves them
  // unanswered: with every broker down (a rack's power cut) a client retries its connections
  // until delivery.timeout.ms, and the trial must go on to restart the brokers. An answer that
  // comes later is not recorded: the batch stays sent-but-unanswered (indeterminate) in the ledger.
  let abandoned = false;
  const abandonAfterStop = new Promise<void>((resolve) => {
    const arm = () => setTimeout(() => ((abandoned = true), resolve()), IN_FLIGHT_GRACE_MS).unref();
    if (opts.signal?.aborted) arm();
    else opts.signal?.addEventListener('abort', arm, { once: true });
  });

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
  const loadStartMs = Date.now();
  opts.onLoadStart?.(loadStartMs);
  const measureStartMs = loadStartMs + opts.warmupSec * 1000;
  const endMs = measureStartMs + opts.durationSec * 1000;

  // The seconds start at measureStartMs exactly (as the http driver's and the probes' do): a
  // ticker started with the load put the warm-up's last second, where nothing is counted, first
  // (a spurious 0 records/s) and shifted every second after it by one. A tick past the window's
  // end (sends completing after it) is not a second of the window.
  let ticker: NodeJS.Timeout | undefined;
  const tick = () => {
    if (timeseries.length >= opts.durationSec) return;
    timeseries.push({
      t: timeseries.length,
      recordsPerSec: second.records,
      requestsPerSec: second.requests,
      p99Us: second.hist.totalCount > 0 ? second.hist.getValueAtPercentile(99) : null,
    });
    opts.onSecond?.(timeseries[timeseries.length - 1]!);
    second = { requests: 0, records: 0, hist: newHistogram() };
  };
  const opener = setTimeout(() => {
    second = { requests: 0, records: 0, hist: newHistogram() };
    ticker = setInterval(tick, 1000);
  }, Math.max(0, measureStartMs - Date.now()));

  const loops = opts.connections * inFlight;
  const periodMs = opts.rate ? (loops * 1000) / opts.rate : 0;
  let nextPartition = 0;

  const sendOne = async (producer: KafkaProducerHandle, stream: number, intendedMs: number): Promise<void> => {
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
    if (abandoned) return;
    const doneMs = Date.now();
    const us = Math.max(1, Math.round(Number(process.hrtime.bigint() - t0) / 1000));
    const error = ledgerSendOutcome(ledger, opts.acks, { partition, baseSequence, atMs: doneMs }, outcome, library.errorName);
    if (error !== null) {
      const into = opts.faultSignal?.aborted ? errorsAfterFault : errors;
      into[error] = (into[error] ?? 0) + 1;
    }
    if ('failed' in outcome) return;
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
            await Promise.race([sendOne(producer, pi, periodMs > 0 ? intended : Date.now()), abandonAfterStop]);
            // acks=0: the send's promise can settle without any I/O (a socket the kernel takes
            // bytes from never makes the loop wait), so yield once per send: otherwise the loop
            // holds this event loop for the whole load: no ticks, no timers, and with the process
            // target no controller answering the brokers' heartbeats (a 4 s stall here fenced
            // the leader, whose successor the checker then had to find).
            if (opts.acks === 0) await new Promise((r) => setImmediate(r));
            intended += periodMs;
          }
        }),
      ),
    );
  } finally {
    clearTimeout(opener);
    if (ticker) clearInterval(ticker);
    // The window's last second ends as the loops do: its tick may lose that race.
    if (!opts.signal?.aborted && timeseries.length === opts.durationSec - 1 && Date.now() >= endMs - 100) tick();
    // A client whose brokers are all gone may not close promptly either.
    // After abandoned sends nothing more is recorded: what the producers still queue is purged, not delivered to brokers that may be restarting.
    const flushMs = abandoned ? 0 : CLOSE_FLUSH_MS;
    await Promise.race([Promise.all(producers.map((p) => p.close(flushMs).catch(() => undefined))), new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
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
