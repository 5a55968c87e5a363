// The follower's side of replication: cutting fetched bytes into batches, appending them with
// the leader's offsets and epochs, and where to truncate by leader epoch (KIP-101 / KIP-279).
import { CorruptBatchError, LOG_OVERHEAD, readBatchHeader, type BatchHeader } from '../records/index.ts';
import type { Log } from '../storage/index.ts';
import { asBrokerError, BrokerError } from './errors.ts';
import { UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, type EpochEndOffset, type LeaderEpochCache } from './leader-epoch-cache.ts';

export interface FetchedBatch {
  position: number;
  header: BatchHeader;
  size: number;
}

/**
 * Cuts fetched bytes into batches by their headers. The CRC is checked once, by Log.append;
 * here only the framing, so that a torn fetch answer is refused before anything is written.
 * `label` names the operation and partition in errors ("replicate t-0").
 */
export function splitBatches(data: Buffer, maxBatchBytes: number, label: string): FetchedBatch[] {
  const out: FetchedBatch[] = [];
  let pos = 0;
  while (pos < data.length) {
    let header: BatchHeader;
    try {
      header = readBatchHeader(data, pos, { maxBatchBytes });
    } catch (e) {
      if (e instanceof CorruptBatchError) throw new BrokerError('CORRUPT_MESSAGE', `${label}: ${e.message}`, { reason: e.reason });
      throw e;
    }
    const size = LOG_OVERHEAD + header.length;
    if (pos + size > data.length) {
      throw new BrokerError('CORRUPT_MESSAGE', `${label}: batch at position ${pos} needs ${size} bytes, ${data.length - pos} present`, { reason: 'short' });
    }
    out.push({ position: pos, header, size });
    pos += size;
  }
  return out;
}

/**
 * Appends fetched batches with the leader's offsets (each must start at the log end offset);
 * the epoch cache learns each new epoch from the batches. `label` is e.g. "replicate t-0".
 */
export function appendFetched(
  log: Log,
  epochCache: LeaderEpochCache,
  data: Buffer,
  opts: { label: string; maxBatchBytes: number; nowMs: number },
): { batches: number; records: number } {
  let batches = 0;
  let records = 0;
  for (const { position, header, size } of splitBatches(data, opts.maxBatchBytes, opts.label)) {
    const leo = log.logEndOffset;
    if (header.baseOffset !== leo) {
      throw new BrokerError('OFFSET_OUT_OF_RANGE', `${opts.label}: fetched batch starts at offset ${header.baseOffset} but the log ends at ${leo}`, { logEndOffset: leo });
    }
    if (header.partitionLeaderEpoch >= 0) epochCache.assign(header.partitionLeaderEpoch, header.baseOffset);
    try {
      log.append(data.subarray(position, position + size), { assignOffsets: false, nowMs: opts.nowMs });
    } catch (e) {
      throw asBrokerError(e, opts.label);
    }
    batches++;
    records += header.recordCount;
  }
  return { batches, records };
}

/**
 * Where a follower truncates, given the leader's answer to endOffsetForEpoch(latest epoch of
 * the follower's log):
 * - the leader cannot answer (-1 end offset): the HW (pre-KIP-101 behaviour);
 * - it answered an epoch this replica also has: the smaller of both end offsets;
 * - it answered an epoch this replica does not have: the end of this replica's largest epoch
 *   below it, and not `done`: the fetcher asks again with the (now smaller) latest epoch.
 *   Every round lowers the epoch asked, so the loop ends.
 * Never below the log start offset.
 */
export function truncationTarget(
  leaderAnswer: EpochEndOffset,
  replica: { hw: number; logStartOffset: number; logEndOffset: number; epochCache: LeaderEpochCache },
): { target: number; done: boolean } {
  const leo = replica.logEndOffset;
  let target: number;
  let done = true;
  if (leaderAnswer.endOffset === UNDEFINED_EPOCH_OFFSET) {
    target = Math.min(replica.hw, leo);
  } else if (leaderAnswer.leaderEpoch === UNDEFINED_EPOCH) {
    target = Math.min(leaderAnswer.endOffset, leo);
  } else {
    const mine = replica.epochCache.endOffsetFor(leaderAnswer.leaderEpoch);
    if (mine.endOffset === UNDEFINED_EPOCH_OFFSET) {
      target = Math.min(leaderAnswer.endOffset, leo);
    } else if (mine.leaderEpoch !== leaderAnswer.leaderEpoch) {
      target = Math.min(mine.endOffset, leo);
      done = false;
    } else {
      target = Math.min(mine.endOffset, leaderAnswer.endOffset, leo);
    }
  }
  return { target: Math.max(target, replica.logStartOffset), done };
}

/**
 * Cuts the log back to `offset` when it is longer, and the epoch cache with it (always: an
 * epoch that starts exactly at the new end never wrote anything kept here). Returns the bytes
 * removed. `label` names the partition in errors ("t-0").
 */
export function truncateReplica(log: Log, epochCache: LeaderEpochCache, offset: number, label: string): number {
  let bytes = 0;
  if (offset < log.logEndOffset) {
    const before = logBytes(log);
    try {
      log.truncateTo(offset);
    } catch (e) {
      throw asBrokerError(e, `truncate ${label}`);
    }
    bytes = Math.max(0, before - logBytes(log));
  }
  epochCache.truncateFromEnd(offset);
  return bytes;
}

function logBytes(log: Log): number {
  return log.segmentInfos().reduce((n, seg) => n + seg.sizeBytes, 0);
}
