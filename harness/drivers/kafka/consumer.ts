// The kafka driver's consumer for the checker: Fetch (over engine/protocol, so the stored
// RecordBatch bytes arrive untouched and every CRC is checked here) from the log start to the
// high watermark of one broker, re-cut into ledger batches by the records' identity header.
// Without a broker named, it reads the partition's leader as Metadata names it now, and reads
// the whole partition again from a new leader if the one it read stops leading (leader.ts).
import { KafkaWire } from './wire.ts';
import { askLeader, currentLeader, leaderMoved, type LeaderContext } from './leader.ts';
import { servedByIdentity } from './identity.ts';
import type { ConsumedPartition, ServedBatch } from '../types.ts';

export async function consumeOverKafka(opts: { address: string; topic: string; partition: number; timeoutMs?: number; maxBytes?: number }): Promise<ConsumedPartition> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const maxBytes = opts.maxBytes ?? 8 * 1024 * 1024;
  const wire = new KafkaWire(opts.address, 30_000);
  const batches: ServedBatch[] = [];
  let corrupt = 0;
  try {
    let offset = await wire.listOffset(opts.topic, opts.partition, -2);
    let highWatermark = await wire.listOffset(opts.topic, opts.partition, -1);
    while (offset < highWatermark) {
      if (Date.now() > deadline) throw new Error(`consume ${opts.topic}-${opts.partition} from ${opts.address}: timed out at offset ${offset} of ${highWatermark}`);
      const f = await wire.fetch(opts.topic, opts.partition, offset, maxBytes);
      highWatermark = f.highWatermark;
      const served = servedByIdentity(f.records, { partialTail: true });
      corrupt += served.corrupt;
      // Kafka answers from the start of the batch holding `offset`: keep only what is new.
      for (const b of served.batches) if (b.lastOffset >= offset && b.baseOffset < highWatermark) batches.push(b);
      const last = served.raw[served.raw.length - 1];
      if (!last || served.corrupt > 0) break;
      offset = last.lastOffset + 1;
    }
    return { partition: opts.partition, batches, corrupt, highWatermark };
  } finally {
    wire.close();
  }
}

/** The partition from its current leader, followed through leader changes (bounded; the error names who refused). */
export function consumeFromLeader(ctx: LeaderContext, opts: { topic: string; partition: number; timeoutMs?: number }): Promise<ConsumedPartition> {
  return askLeader(ctx, opts.topic, opts.partition, 'consume', (_leader, address) => consumeOverKafka({ ...opts, address }));
}

/** The partition as one named broker serves it; a broker that does not lead says so, with the leader Metadata names. */
export async function consumeFromBroker(ctx: LeaderContext, brokerId: number, opts: { topic: string; partition: number; timeoutMs?: number }): Promise<ConsumedPartition> {
  try {
    return await consumeOverKafka({ ...opts, address: ctx.addressOf(brokerId) });
  } catch (err) {
    if (!leaderMoved(err)) throw err;
    const now = await currentLeader(ctx.bootstrap, opts.topic, opts.partition, 2000).then(
      (p) => `Metadata names broker ${p.leader} (epoch ${p.leaderEpoch}) as its leader`,
      (e: Error) => e.message,
    );
    throw new Error(`consume ${opts.topic}-${opts.partition} from broker ${brokerId}, as asked: ${err.message}; ${now}`);
  }
}
