// The HTTP driver's producer: produce load with autocannon against durolab's /v1 API. Each
// request body is a fresh RecordBatch carrying a producer id and sequence; the response hook
// writes the ack ledger. Latency comes from autocannon's response events (hrtime-based,
// fractional ms) into an HdrHistogram in integer microseconds: autocannon's own histogram is
// whole milliseconds, too coarse for fsync.
import autocannon from 'autocannon';
import { SocketLedger, type AutocannonClient } from './socket-ledger.ts';
import type { DriverCluster, ProduceLedger, ProduceOptions, ProduceResult } from '../types.ts';
import { LoadMeter, MAX_LATENCY_US } from '../load-meter.ts';

/** One broker's share of the load: the partitions it leads. */
export interface LoadTarget {
  /** Base URL of the broker leading `partitions`, e.g. http://127.0.0.1:9092 */
  url: string;
  partitions: number[];
}

/** Groups the partitions by the URL of the broker leading them. */
export function loadTargets(cluster: DriverCluster, leaders: ReadonlyMap<number, number>): LoadTarget[] {
  const byUrl = new Map<string, number[]>();
  for (const [partition, id] of leaders) {
    const b = cluster.brokers.find((x) => x.id === id);
    if (!b) throw new Error(`produce: partition ${partition} is led by broker ${id}, which is not in the cluster (brokers ${cluster.brokers.map((x) => x.id).join(', ')})`);
    byUrl.set(b.url, [...(byUrl.get(b.url) ?? []), partition]);
  }
  return [...byUrl.entries()].map(([url, partitions]) => ({ url, partitions }));
}

interface ProduceAnswer {
  baseOffset?: number;
  producerId?: number;
  baseSequence?: number;
  hw?: number;
  error?: string;
}

/** Splits the connection budget over targets in proportion to the partitions each leads. */
export function splitConnections(total: number, targets: LoadTarget[]): number[] {
  const weights = targets.map((t) => t.partitions.length);
  const sum = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((w) => Math.max(1, Math.floor((total * w) / sum)));
  let left = total - shares.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % shares.length, left--) shares[i]++;
  return shares;
}

export async function runHttpLoad(cluster: DriverCluster, opts: ProduceOptions): Promise<ProduceResult> {
  const { ledger, factory } = opts;
  const targets = loadTargets(cluster, opts.leaders);
  // Errors once a fault is being delivered are mostly its echo (refusals, resets): the meter keeps them apart.
  const meter = new LoadMeter(opts);
  const recordsPerBatch = ledger.recordsPerBatch;
  const connections = splitConnections(opts.connections, targets);
  const totalSec = opts.warmupSec + opts.durationSec;
  const loadStartMs = Date.now();
  const measureStartMs = loadStartMs + opts.warmupSec * 1000;
  let measuring = false;
  const expectedIntervalUs = opts.rate ? Math.round((opts.connections * 1e6) / opts.rate) : 0;

  const sockets = new SocketLedger(ledger);

  const instances = targets.map((target, ti) => {
    const url = new URL(target.url);
    let next = 0;
    const request: autocannon.Request = {
      method: 'POST',
      setupRequest: (req) => {
        const partition = target.partitions[next++ % target.partitions.length];
        const now = Date.now();
        const seq = ledger.send(partition, now);
        sockets.built(partition, seq);
        const body = factory.build(ledger.producerIdOf(partition), seq, now);
        return {
          ...req,
          path: `/v1/topics/${encodeURIComponent(opts.topic)}/partitions/${partition}/records?acks=${opts.acks}&timeoutMs=${opts.timeoutMs}`,
          headers: { 'content-type': 'application/vnd.kafka.recordbatch.v2' },
          body,
        };
      },
      onResponse: (status, body, _context, _headers) => {
        const now = Date.now();
        if (status === 204) return; // acks=0: no offsets, settled after the run
        let answer: ProduceAnswer;
        try {
          answer = JSON.parse(body) as ProduceAnswer;
        } catch {
          meter.count(`HTTP_${status}`);
          return;
        }
        if (status === 200 && answer.baseOffset !== undefined && answer.baseSequence !== undefined) {
          const partition = partitionOfProducer(ledger, answer.producerId);
          if (partition === null) return meter.count('UNKNOWN_PRODUCER_IN_ANSWER');
          ledger.ack(partition, answer.baseSequence, answer.baseOffset, now);
          if (typeof answer.hw === 'number') ledger.noteHw(partition, answer.hw);
        } else {
          const name = answer.error ?? `HTTP_${status}`;
          meter.count(name);
          // The broker echoes the batch identity in errors raised after it read the body.
          const partition = partitionOfProducer(ledger, answer.producerId);
          if (partition !== null && answer.baseSequence !== undefined) ledger.fail(partition, answer.baseSequence, name, now);
        }
      },
    };
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const instance = autocannon({
      url: `${url.protocol}//${url.host}`,
      connections: connections[ti],
      pipelining: opts.pipelining,
      duration: totalSec,
      timeout: Math.ceil(opts.timeoutMs / 1000) + 5,
      // autocannon ends a stopped run at its next sample tick (every second by default), so a
      // load stopped at a power cut went on for up to a second more (167-673 ms measured in
      // the cut step). Its own per-sample figures are not used here (the histograms above are).
      sampleInt: 50,
      ...(opts.rate ? { overallRate: Math.max(1, Math.round((opts.rate * connections[ti]) / opts.connections)) } : {}),
      requests: [request],
      setupClient: (client) => sockets.watch(client as unknown as AutocannonClient),
    }, (err) => {
      if (err) meter.count(`LOAD_GENERATOR_${err.message}`);
      finish();
    });
    instance.on('response', (_client: unknown, statusCode: number, _resBytes: number, responseTime: number) => {
      // Only successful produces are latency samples: a fast NOT_ENOUGH_REPLICAS would
      // otherwise flatter exactly the degraded cells. Errors are counted by name instead.
      if (!measuring || (statusCode !== 200 && statusCode !== 204)) return;
      const us = Math.max(1, Math.min(MAX_LATENCY_US, Math.round(responseTime * 1000)));
      meter.sample(us, recordsPerBatch);
      meter.correctedLatencyUs?.recordValueWithExpectedInterval(us, expectedIntervalUs);
    });
    // autocannon reports its own request timeouts as errors without a code.
    instance.on('reqError', (err: Error) =>
      meter.count(`CLIENT_${(err as NodeJS.ErrnoException).code ?? (err.message === 'request timed out' ? 'TIMEOUT' : 'ERROR')}`),
    );
    return { instance, finished };
  });

  const bytesPerRequest = factory.build(0, 0, 0).length;
  let interrupted = false;
  // The measured window opens at measureStartMs exactly (not at the next tick), so its
  // length is the divisor of every rate and its seconds line up with the probes' buckets.
  const tick = () => meter.closeSecond();
  let ticker: NodeJS.Timeout | undefined;
  const opener = setTimeout(() => {
    measuring = true;
    ticker = setInterval(tick, 1000);
  }, Math.max(0, measureStartMs - Date.now()));

  const stopAll = () => {
    interrupted = true;
    for (const i of instances) i.instance.stop();
  };
  opts.signal?.addEventListener('abort', stopAll, { once: true });
  try {
    await Promise.all(instances.map((i) => i.finished));
  } finally {
    clearTimeout(opener);
    if (ticker) clearInterval(ticker);
    opts.signal?.removeEventListener('abort', stopAll);
  }
  const endMs = Date.now();
  sockets.settle();
  if (opts.acks === 0) settleUnconfirmed(ledger, endMs);
  return meter.result({
    measuredSec: Math.max(0.001, (endMs - measureStartMs) / 1000),
    measuredBytes: meter.measuredRequests * bytesPerRequest,
    loadStartMs,
    measureStartMs,
    endMs,
    interrupted,
  });
}

function partitionOfProducer(ledger: ProduceLedger, producerId: number | undefined): number | null {
  if (producerId === undefined) return null;
  for (const p of ledger.partitions()) if (ledger.producerIdOf(p) === producerId) return p;
  return null;
}

function settleUnconfirmed(ledger: ProduceLedger, atMs: number): void {
  for (const p of ledger.partitions()) {
    for (const b of ledger.batches(p)) if (b.status === 'pending') ledger.unconfirmed(p, b.baseSequence, atMs);
  }
}
