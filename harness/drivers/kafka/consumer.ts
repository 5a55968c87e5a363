// The kafka driver's consumer for the checker: Fetch (over engine/protocol, so the stored
// RecordBatch bytes arrive untouched and every CRC is checked here) from the log start to the
// high watermark of one broker, re-cut into ledger batches by the records' identity header.
import { KafkaWire } from './wire.ts';
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
