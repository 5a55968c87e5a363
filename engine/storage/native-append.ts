// The append's fast path: a leader's batch on a plain (buffered or O_DSYNC) segment writer is
// checked, stamped with its base offset (and leader epoch) and written by one native call
// (engine/native/crc32c/crc32c.c appendSoleBatch). Log.append takes its JS path, which gives
// every error its precise text, for anything this does not write: a refused batch, a roll, log-
// append time, O_DIRECT, a follower's append, or where the addon does not run (or DUROLAB_PWRITE
// =fs / DUROLAB_CRC32C=node-rs ask for the fallbacks). Measured on 4 KiB appends here: 6.3 µs per
// Log.append through the JS path, 5.4-5.5 µs through this one, 4.0 µs for write(2) alone
// (engine/storage/README.md, "Hot path").
import { crc32cImplementation, nativeAppendSoleBatch } from '../records/crc.ts';
import { describePwrite, pwriteImplementation } from './file-write.ts';
import type { LogSegment } from './segment.ts';
import type { LogConfig } from './types.ts';

const native = pwriteImplementation.name === 'native' ? nativeAppendSoleBatch : null;

/** Whether appends in this process can take the fast path. */
export const nativeAppendAvailable = native !== null;

/** Test seam: off sends every append the JS way in this process (a test compares the two paths' files). */
export const nativeAppendSwitch = { enabled: true };

/** The write path for an environment record: the pwrite implementation, and whether leader appends make one native call. */
export function describeWritePath(): string {
  const why =
    native !== null
      ? 'leader appends check, stamp and write in one native call (crc32c.node appendSoleBatch)'
      : `leader appends check in ${crc32cImplementation.name !== '@node-rs/crc32' ? 'one native call' : 'JavaScript'}, then write (no one-call append: ${
          pwriteImplementation.name !== 'native' ? 'the pwrite addon does not run' : 'the crc32c addon does not run or lacks appendSoleBatch'
        })`;
  return `${describePwrite()}; ${why}`;
}

/** NativeAppender.append wrote the batch (> 0: nothing written, take the JS path; < 0: the write's -errno). */
export const WRITTEN = 0;

/** Largest offset delta within a segment (Kafka's relative offsets are int32). */
const MAX_RELATIVE_OFFSET = 0x7fffffff;

/** One per log: the call's parameter and result arrays, reused by every append. */
export class NativeAppender {
  /** After WRITTEN: the 12 header fields of decode.ts checkSoleBatch (baseOffset as stamped), then the write's µs. */
  readonly out = new Float64Array(13);
  private readonly params = new Float64Array(8);
  private readonly config: LogConfig;
  /** Appends this path wrote. */
  written = 0;

  constructor(config: LogConfig) {
    this.config = config;
    // A batch larger than a segment is refused too, so the JS path names the right limit.
    this.params[1] = Math.min(config.maxBatchBytes, config.segmentBytes);
    this.params[2] = config.verifyBatches ? 1 : 0;
  }

  /**
   * WRITTEN: the batch is at seg.size in the file with base offset `baseOffset` (the caller
   * updates the segment); > 0: nothing was written or stamped, take the JS path; < 0: -errno of
   * the failed write, which may have left part of the batch in the file.
   */
  append(seg: LogSegment, batch: Buffer, baseOffset: number, leaderEpoch: number | undefined, nowMs: number): number {
    const fd = seg.writer?.plainFd ?? null;
    if (native === null || fd === null || !nativeAppendSwitch.enabled || !Buffer.isBuffer(batch)) return 2;
    if (leaderEpoch !== undefined && !(Number.isInteger(leaderEpoch) && leaderEpoch >= -0x80000000 && leaderEpoch <= 0x7fffffff)) return 2;
    const cfg = this.config;
    const empty = seg.isEmpty;
    if (!empty && (seg.indexFull || (seg.rollBaseMs !== null && nowMs - seg.rollBaseMs > cfg.segmentMs))) return 2;
    const p = this.params;
    p[0] = seg.size;
    p[3] = baseOffset;
    p[4] = empty ? -1 : cfg.segmentBytes - seg.size;
    p[5] = empty ? MAX_RELATIVE_OFFSET : MAX_RELATIVE_OFFSET - (baseOffset - seg.baseOffset);
    p[6] = leaderEpoch === undefined ? 0 : 1;
    p[7] = leaderEpoch ?? 0;
    const code = native(fd, batch, p, this.out);
    if (code === WRITTEN) this.written++;
    return code;
  }
}
