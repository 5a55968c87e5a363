// A digest of a replica's log up to an offset, for comparing replicas after a fault: equal
// hashes up to the lowest HW mean the replicas hold the same committed bytes.
import { createHash } from 'node:crypto';
import type { Log } from '../storage/index.ts';
import { splitBatches } from './follower-append.ts';
import { readLog } from './leader-requests.ts';

/** sha256 of the stored bytes of every batch with lastOffset < `limit`. `label` names the partition in errors. */
export function hashLogUpTo(log: Log, limit: number, maxBatchBytes: number, label: string): string {
  const h = createHash('sha256');
  let offset = log.logStartOffset;
  const end = Math.min(limit, log.logEndOffset);
  outer: while (offset < end) {
    const r = readLog(log, offset, 1 << 20);
    if (r.data.length === 0) break;
    for (const { position, header, size } of splitBatches(r.data, maxBatchBytes, `logHash ${label}`)) {
      if (header.baseOffset + header.lastOffsetDelta >= limit) break outer;
      h.update(r.data.subarray(position, position + size));
    }
    offset = r.nextOffset;
  }
  return h.digest('hex');
}
