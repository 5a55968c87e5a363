// The HTTP driver's consumer: reads a partition from its log start to its high watermark over
// GET /v1/topics/{t}/partitions/{p}/records, the way a consumer would, keeping each batch's
// identity and counting batches that fail validation.
import { splitBatches } from '../record-batches.ts';
import type { ConsumedPartition, ServedBatch } from '../types.ts';

export interface HttpConsumeOptions {
  url: string;
  topic: string;
  partition: number;
  maxBytes?: number;
  /** Give up after this long (a broker that keeps failing must not hang the run). */
  timeoutMs?: number;
}

export async function consumeOverHttp(opts: HttpConsumeOptions): Promise<ConsumedPartition> {
  const maxBytes = opts.maxBytes ?? 4 * 1024 * 1024;
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const batches: ServedBatch[] = [];
  let corrupt = 0;
  let offset = 0;
  let highWatermark = -1;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`consume ${opts.topic}-${opts.partition} from ${opts.url}: timed out at offset ${offset}`);
    const url = `${opts.url}/v1/topics/${encodeURIComponent(opts.topic)}/partitions/${opts.partition}/records?offset=${offset}&maxBytes=${maxBytes}&maxWaitMs=0`;
    const res = await fetch(url);
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) {
      throw new Error(`consume ${opts.topic}-${opts.partition}: GET ${url} answered ${res.status}: ${body.toString('utf8').slice(0, 300)}`);
    }
    highWatermark = Number(res.headers.get('x-high-watermark'));
    const next = Number(res.headers.get('x-next-offset'));
    const parsed = splitBatches(body);
    batches.push(...parsed.batches);
    corrupt += parsed.corrupt;
    if (body.length === 0 || !Number.isFinite(next) || next <= offset) break;
    offset = next;
    if (offset >= highWatermark) break;
  }
  return { partition: opts.partition, batches, corrupt, highWatermark };
}
