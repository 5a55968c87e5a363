// A consumer fetch read in chunks: up to fetch.max.bytes (50 MiB by default) is read as reads
// of at most FETCH_CHUNK_BYTES with a turn of the event loop between them, so a large fetch
// neither holds the loop (produce keeps being served) nor needs one buffer of its whole size.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Partition } from '../replication/index.ts';

export const FETCH_CHUNK_BYTES = 1 << 20;

export interface ChunkedFetch {
  parts: Buffer[];
  bytes: number;
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

/**
 * The first read follows Kafka's rule (at least one whole batch, even one larger than
 * maxBytes); later reads stop before a batch that would take the answer past maxBytes. Every
 * read is below the HW, i.e. committed data that no truncation touches, so the chunks join
 * into one consistent answer. A later read that fails (leadership moved meanwhile) ends the
 * answer with what was read; only the first read's error reaches the client.
 */
export async function readConsumerChunks(p: Partition, offset: number, maxBytes: number, gone: () => boolean): Promise<ChunkedFetch> {
  let r = p.readForConsumer(offset, Math.min(maxBytes, FETCH_CHUNK_BYTES));
  const out: ChunkedFetch = { parts: [r.data], bytes: r.data.length, nextOffset: r.nextOffset, highWatermark: r.highWatermark, logStartOffset: r.logStartOffset };
  while (r.data.length > 0 && out.bytes < maxBytes && out.nextOffset < out.highWatermark) {
    await nextTurn();
    if (gone()) break;
    const room = maxBytes - out.bytes;
    try {
      r = p.readForConsumer(out.nextOffset, Math.min(room, FETCH_CHUNK_BYTES));
    } catch {
      break;
    }
    if (r.data.length === 0 || r.data.length > room) break;
    out.parts.push(r.data);
    out.bytes += r.data.length;
    out.nextOffset = r.nextOffset;
    out.highWatermark = r.highWatermark;
  }
  return out;
}
