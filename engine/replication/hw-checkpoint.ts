import path from 'node:path';
import { parseCheckpoint, parseIntField, readFileIfExists, writeCheckpointFile } from './checkpoint-file.ts';

export const HIGH_WATERMARK_CHECKPOINT_FILE = 'high-watermark-checkpoint';

/**
 * The partition's high watermark on disk (Kafka keeps it in replication-offset-checkpoint per
 * data dir; here one file per partition dir, same line layout: version, count, `topic partition hw`).
 * It is a lower bound written periodically, so after a crash a replica may expose less than it
 * had committed, never more than its log holds: on open HW = min(checkpoint, LEO).
 */
export class HighWatermarkCheckpoint {
  readonly file: string;
  private lastWritten = -1;

  constructor(
    dir: string,
    private readonly topic: string,
    private readonly partition: number,
  ) {
    this.file = path.join(dir, HIGH_WATERMARK_CHECKPOINT_FILE);
  }

  /** The checkpointed HW, or null when there is no checkpoint yet. */
  read(): number | null {
    const text = readFileIfExists(this.file);
    if (text === null) return null;
    const entries = parseCheckpoint(this.file, text, 3);
    const mine = entries.findIndex(([t, p]) => t === this.topic && p === String(this.partition));
    if (mine < 0) {
      throw new Error(`${this.file}: no entry for ${this.topic}-${this.partition}; the file belongs to another partition`);
    }
    const hw = parseIntField(this.file, mine + 3, 'the high watermark', entries[mine][2]);
    this.lastWritten = hw;
    return hw;
  }

  /** Writes `hw` (tmp + fsync + rename) unless it is what the file already holds. Returns whether it wrote. */
  write(hw: number): boolean {
    if (!Number.isSafeInteger(hw) || hw < 0) throw new RangeError(`${this.file}: invalid high watermark ${hw}`);
    if (hw === this.lastWritten) return false;
    writeCheckpointFile(this.file, `0\n1\n${this.topic} ${this.partition} ${hw}\n`);
    this.lastWritten = hw;
    return true;
  }
}
