// Promise.all with at most `limit` calls in flight, results in input order: a check that reads
// every partition of a 10,000-partition topic must not open 10,000 connections at once. An
// aborted signal (Ctrl-C) starts no further call and rejects once the calls in flight ended.
export async function mapLimit<T, R>(items: readonly T[], limit: number, f: (item: T, index: number) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      if (signal?.aborted) throw new Error(`interrupted after ${next} of ${items.length}`);
      const i = next++;
      out[i] = await f(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** Connections a check opens at once to read partitions back. */
export const READ_BACK_CONCURRENCY = 16;
