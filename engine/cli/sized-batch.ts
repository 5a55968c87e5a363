// Batches of an exact total size for the benchmark: "a 64 KiB batch" is one RecordBatch v2
// of 65536 bytes, header included, so the engine and the fio baseline (bs=65536) write the
// same bytes per operation.
import { BATCH_HEADER_BYTES, encodeBatch, type RecordInput } from '../records/index.ts';

/** Bytes of the zigzag varint of a non-negative int32 (Kafka's record framing). */
function varintBytes(n: number): number {
  const z = n * 2;
  if (z < 0x80) return 1;
  if (z < 0x4000) return 2;
  if (z < 0x200000) return 3;
  if (z < 0x10000000) return 4;
  return 5;
}

/** Bytes a record takes with a null key, no headers, timestamp delta 0 and a value of `len` bytes. */
export function recordBytes(index: number, len: number): number {
  const body = 1 + 1 + varintBytes(index) + 1 + varintBytes(len) + len + 1;
  return varintBytes(body) + body;
}

/** Value lengths for `count` records so that the batch is exactly `totalBytes`. */
export function valueLengthsFor(totalBytes: number, count: number): number[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`a batch needs at least 1 record, got ${count}`);
  const target = totalBytes - BATCH_HEADER_BYTES;
  let minimum = 0;
  for (let i = 0; i < count; i++) minimum += recordBytes(i, 0);
  if (!Number.isSafeInteger(totalBytes) || target < minimum) {
    throw new Error(`a batch of ${totalBytes} bytes cannot hold ${count} records: the smallest is ${BATCH_HEADER_BYTES + minimum} bytes`);
  }
  const sizeAll = (len: number): number => {
    let s = 0;
    for (let i = 0; i < count; i++) s += recordBytes(i, len);
    return s;
  };
  // Largest common length that fits; the last record then absorbs the rest.
  let lo = 0;
  let hi = target;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sizeAll(mid) <= target) lo = mid;
    else hi = mid - 1;
  }
  const lens = new Array<number>(count).fill(lo);
  // A varint boundary can make one exact size unreachable for the last record; shortening
  // an earlier record by a byte shifts the remainder past it.
  for (let attempt = 0; attempt <= Math.min(count - 1, 8); attempt++) {
    let others = 0;
    for (let i = 0; i < count - 1; i++) others += recordBytes(i, lens[i]);
    const need = target - others;
    let len = Math.max(0, need - 16);
    while (recordBytes(count - 1, len) < need) len++;
    if (recordBytes(count - 1, len) === need) {
      lens[count - 1] = len;
      return lens;
    }
    if (attempt < count - 1 && lens[attempt] > 0) lens[attempt]--;
  }
  throw new Error(`could not size ${count} records to make a batch of exactly ${totalBytes} bytes`);
}

export interface SizedBatchOptions {
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  firstTimestamp?: number;
}

/** One batch of exactly totalBytes holding `count` records (values filled with a readable pattern). */
export function encodeSizedBatch(totalBytes: number, count: number, opts: SizedBatchOptions = {}): Buffer {
  const lens = valueLengthsFor(totalBytes, count);
  const longest = Math.max(...lens);
  const pattern = Buffer.alloc(longest);
  for (let i = 0; i < longest; i++) pattern[i] = 0x61 + (i % 26);
  const records: RecordInput[] = lens.map((len) => ({ value: pattern.subarray(0, len) }));
  const batch = encodeBatch({ ...opts, records });
  if (batch.length !== totalBytes) {
    throw new Error(`internal: sized a batch for ${totalBytes} bytes but the codec made ${batch.length}`);
  }
  return batch;
}
