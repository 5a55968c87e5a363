// Reads a partition from offset 0 to its high watermark over the broker's fetch API, the way
// a consumer would, keeping each batch's identity and counting batches that fail validation.
import { batchSizeAt, validateBatch, CorruptBatchError } from '../../engine/records/index.ts';
import type { PartitionLog, ServedBatch } from './checker.ts';

export interface ConsumeOptions {
  url: string;
  topic: string;
  partition: number;
  maxBytes?: number;
  /** Give up after this long (a broker that keeps failing must not hang the run). */
  timeoutMs?: number;
}

export async function consumePartition(opts: ConsumeOptions): Promise<PartitionLog & { highWatermark: number }> {
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
    const parsed = parseServed(body);
    batches.push(...parsed.batches);
    corrupt += parsed.corrupt;
    if (body.length === 0 || !Number.isFinite(next) || next <= offset) break;
    offset = next;
    if (offset >= highWatermark) break;
  }
  return { partition: opts.partition, batches, corrupt, highWatermark };
}

/** Splits served bytes into batches; an invalid batch is counted and skipped by its length field. */
export function parseServed(buf: Buffer): { batches: ServedBatch[]; corrupt: number } {
  const batches: ServedBatch[] = [];
  let corrupt = 0;
  let pos = 0;
  while (pos < buf.length) {
    const size = batchSizeAt(buf, pos);
    if (size === null || size <= 12 || pos + size > buf.length) {
      corrupt++;
      break;
    }
    try {
      const h = validateBatch(buf, pos);
      batches.push({
        baseOffset: h.baseOffset,
        lastOffset: h.baseOffset + h.lastOffsetDelta,
        producerId: h.producerId,
        baseSequence: h.baseSequence,
        records: h.recordCount,
      });
    } catch (err) {
      if (!(err instanceof CorruptBatchError)) throw err;
      corrupt++;
    }
    pos += size;
  }
  return { batches, corrupt };
}
