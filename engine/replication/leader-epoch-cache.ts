import path from 'node:path';
import { parseCheckpoint, parseIntField, readFileIfExists, writeCheckpointFile } from './checkpoint-file.ts';

/** Kafka's "no epoch" marker (RecordBatch.NO_PARTITION_LEADER_EPOCH / UNDEFINED_EPOCH). */
export const UNDEFINED_EPOCH = -1;
/** Kafka's EpochEndOffset.UNDEFINED_EPOCH_OFFSET: "I cannot answer, fall back to the HW". */
export const UNDEFINED_EPOCH_OFFSET = -1;
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';

export interface EpochEntry {
  epoch: number;
  /** First offset written in this epoch. */
  startOffset: number;
}

export interface EpochEndOffset {
  leaderEpoch: number;
  endOffset: number;
}

/**
 * Leader epoch -> start offset, in increasing order of both (Kafka's LeaderEpochFileCache,
 * KIP-101). Every change is written to the checkpoint file before the method returns, so a
 * replica that restarts knows which epoch each part of its log came from.
 */
export class LeaderEpochCache {
  private epochs: EpochEntry[];
  private readonly file: string | null;
  private readonly logEndOffset: () => number;

  /** file null: in memory only (tests of the algorithm). */
  constructor(file: string | null, logEndOffset: () => number, entries: EpochEntry[] = []) {
    this.file = file;
    this.logEndOffset = logEndOffset;
    this.epochs = [];
    for (const e of entries) this.assignEntry(e.epoch, e.startOffset);
  }

  /** Loads dir/leader-epoch-checkpoint (absent = empty cache). */
  static open(dir: string, logEndOffset: () => number): LeaderEpochCache {
    const file = path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
    const text = readFileIfExists(file);
    const entries: EpochEntry[] = [];
    if (text !== null) {
      parseCheckpoint(file, text, 2).forEach(([epoch, start], i) => {
        entries.push({
          epoch: parseIntField(file, i + 3, 'the epoch', epoch),
          startOffset: parseIntField(file, i + 3, 'the start offset', start),
        });
      });
      for (let i = 1; i < entries.length; i++) {
        if (entries[i].epoch <= entries[i - 1].epoch || entries[i].startOffset < entries[i - 1].startOffset) {
          throw new Error(`${file}: line ${i + 3}: entries must increase in epoch and start offset`);
        }
      }
    }
    return new LeaderEpochCache(file, logEndOffset, entries);
  }

  get entries(): readonly EpochEntry[] {
    return this.epochs.map((e) => ({ ...e }));
  }

  get isEmpty(): boolean {
    return this.epochs.length === 0;
  }

  /** The latest epoch with an entry, UNDEFINED_EPOCH when empty. */
  get latestEpoch(): number {
    return this.epochs.length === 0 ? UNDEFINED_EPOCH : this.epochs[this.epochs.length - 1].epoch;
  }

  /** Start offset of `epoch`, or -1 when the cache has no entry for it. */
  startOffsetOf(epoch: number): number {
    return this.epochs.find((e) => e.epoch === epoch)?.startOffset ?? -1;
  }

  /**
   * Records that `epoch` starts at `startOffset`. An epoch not above the latest one is ignored
   * (an epoch is assigned once). Entries that start at or after the new start offset cannot be
   * right any more (an epoch that never wrote anything, or a log that was truncated) and are
   * dropped first, as Kafka does. Returns whether the cache changed.
   */
  assign(epoch: number, startOffset: number): boolean {
    if (!Number.isInteger(epoch) || epoch < 0 || !Number.isSafeInteger(startOffset) || startOffset < 0) {
      throw new RangeError(`leader epoch cache: invalid entry epoch=${epoch} startOffset=${startOffset}`);
    }
    if (!this.assignEntry(epoch, startOffset)) return false;
    this.flush();
    return true;
  }

  private assignEntry(epoch: number, startOffset: number): boolean {
    if (epoch <= this.latestEpoch) return false;
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1].startOffset >= startOffset) this.epochs.pop();
    this.epochs.push({ epoch, startOffset });
    return true;
  }

  /**
   * OffsetsForLeaderEpoch as amended by KIP-279: the largest epoch <= requested that this replica
   * knows, and the end offset of that epoch (the start offset of the next higher epoch, or the
   * LEO when the requested epoch is the latest). UNDEFINED/UNDEFINED when it cannot tell (no
   * epochs, an undefined request, or an epoch above every known one).
   */
  endOffsetFor(requestedEpoch: number): EpochEndOffset {
    const undefinedAnswer = { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH || this.epochs.length === 0) return undefinedAnswer;
    if (requestedEpoch === this.latestEpoch) return { leaderEpoch: requestedEpoch, endOffset: this.logEndOffset() };
    const higherIdx = this.epochs.findIndex((e) => e.epoch > requestedEpoch);
    if (higherIdx < 0) return undefinedAnswer;
    const higher = this.epochs[higherIdx];
    // Below every known epoch: the data of that epoch was removed from the log's start, so the
    // best answer is where the first known epoch starts.
    if (higherIdx === 0) return { leaderEpoch: requestedEpoch, endOffset: higher.startOffset };
    return { leaderEpoch: this.epochs[higherIdx - 1].epoch, endOffset: higher.startOffset };
  }

  /** After the log was truncated to `endOffset`: drop entries that start at or after it. */
  truncateFromEnd(endOffset: number): void {
    if (endOffset < 0) return;
    const before = this.epochs.length;
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1].startOffset >= endOffset) this.epochs.pop();
    if (this.epochs.length !== before) this.flush();
  }

  /**
   * After the log start moved to `startOffset` (retention): entries starting at or before it
   * collapse into one entry for the epoch in force there, which now starts at `startOffset`.
   */
  truncateFromStart(startOffset: number): void {
    let lastRemoved: EpochEntry | undefined;
    while (this.epochs.length > 0 && this.epochs[0].startOffset <= startOffset) lastRemoved = this.epochs.shift();
    if (lastRemoved === undefined) return;
    this.epochs.unshift({ epoch: lastRemoved.epoch, startOffset });
    this.flush();
  }

  clear(): void {
    if (this.epochs.length === 0) return;
    this.epochs = [];
    this.flush();
  }

  private flush(): void {
    if (this.file === null) return;
    const lines = ['0', String(this.epochs.length), ...this.epochs.map((e) => `${e.epoch} ${e.startOffset}`)];
    writeCheckpointFile(this.file, lines.join('\n') + '\n');
  }
}
