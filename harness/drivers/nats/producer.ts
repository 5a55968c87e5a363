// Driver nats's load: `connections` NATS connections, each with `pipelining` loops; a loop's
// turn is one ledger batch of workload.recordsPerBatch records, each published as its own
// JetStream message (message.ts) at once, and acknowledged in the ledger when their PubAcks are
// back: the PubAck's stream sequence is the record's offset. A record whose publish failed
// (timeout, no responders, an API error) is the batch's RECORD_NOT_ACKED part; a batch with no
// record acknowledged is failed. Latency per batch (first publish to last PubAck), integer µs,
// into HdrHistogram; errors counted by name, apart once the fault is under way.
import { headers } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { RECORD_NOT_ACKED } from '../../history/ledger.ts';
import type { DriverCluster, ProduceOptions, ProduceResult } from '../types.ts';
import { runClosedLoops, type LoadTurn } from '../closed-loop-load.ts';
import { elapsedUs } from '../load-meter.ts';
import { NATS_ID_HEADER, identityText, recordPayload } from './message.ts';
import { NATS_PARTITION, connectNats, natsSubject, type NatsConnection } from './stream.ts';

/** A publish failure's name for the error counts: JetStream API errors by code, the client's by its error name. */
export function natsErrorName(err: unknown): string {
  const e = err as { name?: string; code?: unknown; message?: string };
  if (typeof e.code === 'number') return `JS_API_${e.code}`;
  if (/timeout/i.test(e.name ?? '') || /timeout/i.test(e.message ?? '')) return 'TIMEOUT';
  if (/no responders/i.test(e.message ?? '') || e.name === 'NoRespondersError') return 'NO_RESPONDERS';
  if (/closed/i.test(e.message ?? '')) return 'CONNECTION_CLOSED';
  return e.name && e.name !== 'Error' ? e.name : 'NATS_ERROR';
}

export function natsServers(cluster: DriverCluster): string[] {
  const urls = cluster.brokers.map((b) => b.url).filter((u) => u.startsWith('nats://'));
  if (urls.length === 0) throw new Error(`nats driver: no broker of this cluster has a nats:// URL (brokers ${cluster.brokers.map((b) => `${b.id} ${b.url}`).join(', ')}); driver nats runs on target nats`);
  return urls;
}

export async function runNatsLoad(cluster: DriverCluster, opts: ProduceOptions): Promise<ProduceResult> {
  const { ledger } = opts;
  if (opts.acks !== 'all') throw new Error(`nats driver: acks ${String(opts.acks)}: a JetStream publish is acknowledged by its PubAck after a Raft majority of the stream's replicas stored it (acks: all only)`);
  const partitions = [...opts.leaders.keys()];
  if (partitions.length !== 1 || partitions[0] !== NATS_PARTITION) throw new Error(`nats driver: the topic is one JetStream stream (partition 0), the load was given partitions ${partitions.join(', ')}`);
  const subject = natsSubject(opts.topic);
  const padding = Buffer.alloc(Math.max(0, opts.factory.recordBytes - 16), 0x61);
  const servers = natsServers(cluster);
  const conns: NatsConnection[] = [];
  try {
    for (let i = 0; i < opts.connections; i++) conns.push(await connectNats(servers, `durolab-${i}`));
  } catch (err) {
    await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
    throw new Error(`nats driver: connecting to ${servers.join(', ')}: ${(err as Error).message}`);
  }
  const clients = conns.map((nc) => jetstream(nc, { timeout: opts.timeoutMs }));

  const publishBatch = async (client: JetStreamClient, conn: number, intendedMs: number, load: LoadTurn): Promise<void> => {
    const sentMs = Date.now();
    const baseSequence = ledger.send(NATS_PARTITION, sentMs, conn);
    const producerId = ledger.producerIdOf(NATS_PARTITION);
    const t0 = process.hrtime.bigint();
    const answers = await Promise.allSettled(
      Array.from({ length: ledger.recordsPerBatch }, (_, i) => {
        const id = identityText(producerId, baseSequence + i);
        const h = headers();
        h.set(NATS_ID_HEADER, id);
        return client.publish(subject, recordPayload(producerId, baseSequence + i, opts.factory.recordBytes, padding), { msgID: id, headers: h, timeout: opts.timeoutMs });
      }),
    );
    if (load.abandoned) return;
    const doneMs = Date.now();
    const failed = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (!answers.some((a) => a.status === 'fulfilled')) {
      const name = natsErrorName(failed!.reason);
      ledger.fail(NATS_PARTITION, baseSequence, name, doneMs);
      load.count(name);
      return;
    }
    const offsets = answers.map((a) => (a.status === 'fulfilled' ? (a.value as PubAck).seq : RECORD_NOT_ACKED));
    const partial = failed ? natsErrorName(failed.reason) : undefined;
    ledger.ack(NATS_PARTITION, baseSequence, offsets.find((o) => o >= 0)!, doneMs, offsets, partial);
    // The leader's last sequence as its answers reported it: the stream's HW (next offset) is above it.
    ledger.noteHw(NATS_PARTITION, Math.max(...offsets) + 1);
    if (partial) load.count(partial);
    load.measured({ sentMs, doneMs, us: elapsedUs(t0), intendedMs }, ledger.recordsPerBatch);
  };

  return runClosedLoops(opts, {
    clients,
    loopsPerClient: opts.pipelining,
    turn: publishBatch,
    // A connection whose servers are all gone would wait to flush: closed within a bound.
    close: async () => void (await Promise.race([Promise.all(conns.map((c) => c.close().catch(() => undefined))), new Promise((r) => setTimeout(r, 3000).unref())])),
  });
}
