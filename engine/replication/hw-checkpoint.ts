import fs from 'node:fs';
import path from 'node:path';
import { parseCheckpoint, parseIntField, readFileIfExists, writeCheckpointFile } from './checkpoint-file.ts';
import { fsyncDirAsync } from '../common/atomic-file.ts';

export const HIGH_WATERMARK_CHECKPOINT_FILE = 'high-watermark-checkpoint';

/**
 * Background checkpoint writes in flight in the process at most: each holds a descriptor and a
 * pool thread's turn, and 10,000 partitions must not open 10,000 files at once (EMFILE). One
 * beyond the limit is skipped; the next tick writes it.
 */
const MAX_BACKGROUND_WRITES = 16;
let backgroundWrites = 0;

/**
 * The partition's high watermark on disk (Kafka keeps it in replication-offset-checkpoint per
 * data dir; here one file per partition dir, same line layout: version, count, `topic partition hw`).
 * It is a lower bound written periodically, so after a crash a replica may expose less than it
 * had committed, never more than its log holds: on open HW = min(checkpoint, LEO).
 */
export class HighWatermarkCheckpoint {
  readonly file: string;
  private lastWritten = -1;
  /** Bumped by every synchronous write: an asynchronous one started before it must not rename over it. */
  private generation = 0;
  private inFlight = false;

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
    // Any background write in flight is superseded, even when this one finds nothing to write.
    this.generation++;
    if (hw === this.lastWritten) return false;
    writeCheckpointFile(this.file, this.text(hw));
    this.lastWritten = hw;
    return true;
  }

  /**
   * The periodic checkpoint, off the event loop (Kafka writes it from a scheduler thread): the
   * temporary file's write and fsync run in libuv's pool, so a slow fsync under writeback does
   * not stall produce and fetch answers. Resolves false without writing when `hw` is already on
   * disk or another asynchronous write is in flight (the next tick writes the newer HW). The
   * rename is synchronous and skipped when a synchronous write() (close) came in meanwhile, so
   * an older HW never replaces a newer one. Rejects with an Error naming the file.
   */
  async writeInBackground(hw: number): Promise<boolean> {
    if (!Number.isSafeInteger(hw) || hw < 0) throw new RangeError(`${this.file}: invalid high watermark ${hw}`);
    if (hw === this.lastWritten || this.inFlight || backgroundWrites >= MAX_BACKGROUND_WRITES) return false;
    this.inFlight = true;
    backgroundWrites++;
    const generation = this.generation;
    // Not the synchronous writer's `<file>.tmp`: the two may overlap.
    const tmp = `${this.file}.tmp-background`;
    try {
      const fh = await fs.promises.open(tmp, 'w');
      try {
        await fh.writeFile(this.text(hw));
        await fh.sync();
      } finally {
        await fh.close();
      }
      if (generation !== this.generation) {
        fs.rmSync(tmp, { force: true });
        return false;
      }
      fs.renameSync(tmp, this.file);
      this.lastWritten = hw;
      // The rename is durable once the directory is: its fsync runs in the pool too.
      await fsyncDirAsync(path.dirname(this.file));
      return true;
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw new Error(`cannot write ${this.file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      this.inFlight = false;
      backgroundWrites--;
    }
  }

  private text(hw: number): string {
    return `0\n1\n${this.topic} ${this.partition} ${hw}\n`;
  }
}
