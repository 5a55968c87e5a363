// Kafka's sparse segment indexes. Offset index entry: 4-byte offset relative to the segment's
// base offset + 4-byte position in the .log; time index entry: 8-byte timestamp + 4-byte
// relative offset; all big-endian. Kafka memory-maps them; Node cannot, so the file image is
// kept in memory (lookups read it) and entries not yet in the file are written in one
// pwrite when the log syncs its indexes: before each recovery-point checkpoint, at roll,
// truncation and close (see log.ts). An index that is short of its last entries is still a
// valid sparse index, and recovery rebuilds any index it doubts.
//
// As in Kafka, the active segment's index files are extended to segment.index.bytes (sparse,
// by ftruncate) and trimmed to their entries when the segment is sealed: writing an entry then
// does not change the file size, so syncing the index does not commit size metadata to the
// journal each time (measured here: ~4x cheaper than syncing a growing file).
import fs from 'node:fs';
import type { SyncCall } from './types.ts';

/** A new index holds this much in memory; it doubles as entries come (10,000 partitions x 2 indexes x 4 KiB was 80 MiB). */
const INITIAL_BYTES = 384;

abstract class IndexFile {
  readonly path: string;
  readonly entrySize: number;
  readonly maxEntries: number;
  protected buf: Buffer;
  entries = 0;
  /** Bumped whenever the entries change, so a subclass can cache what it derives from them. */
  protected changes = 0;
  /** Entries that the file holds (a prefix of buf). */
  private fileEntries = 0;
  /** The file holds bytes past fileEntries (after a truncation or a rebuild). */
  private fileTooLong = false;
  /** Extended to its maximum size (the active segment's index). */
  private preallocated = false;
  private fd: number | null = null;
  private unsynced = false;
  /** Bumped by every change to the file (write, cut, extension): what a sync through another descriptor covered. */
  private fileWrites = 0;

  constructor(path: string, entrySize: number, maxIndexBytes: number) {
    this.path = path;
    this.entrySize = entrySize;
    this.maxEntries = Math.floor(maxIndexBytes / entrySize);
    this.buf = Buffer.alloc(Math.min(INITIAL_BYTES, this.maxEntries * entrySize) || entrySize);
  }

  /** Takes the file's bytes as the index (size already checked to be a multiple of the entry size). */
  load(data: Buffer): void {
    this.buf = Buffer.alloc(Math.max(data.length, this.buf.length));
    data.copy(this.buf);
    this.entries = data.length / this.entrySize;
    this.fileEntries = this.entries;
    this.fileTooLong = false;
    this.changes++;
  }

  /** Starts over: the file will be rewritten from the entries appended after this. */
  reset(): void {
    this.changes++;
    this.entries = 0;
    this.fileEntries = 0;
    this.fileTooLong = true;
  }

  truncateEntries(n: number): void {
    if (n >= this.entries) return;
    this.changes++;
    this.entries = n;
    if (this.fileEntries > n) {
      this.fileEntries = n;
      this.fileTooLong = true;
    }
  }

  protected slot(): number {
    const need = (this.entries + 1) * this.entrySize;
    if (need > this.buf.length) {
      const grown = Buffer.alloc(Math.max(need, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, this.entries * this.entrySize);
      this.buf = grown;
    }
    return this.entries * this.entrySize;
  }

  /** No I/O here: an append must not fail in an index after its batch was written. */
  protected appended(): void {
    this.entries++;
    this.changes++;
  }

  get pending(): boolean {
    return this.fileTooLong || this.fileEntries < this.entries;
  }

  private openFd(): number {
    if (this.fd === null) this.fd = fs.openSync(this.path, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    return this.fd;
  }

  /**
   * Writes entries not yet in the file (and cuts the file to the entries when it is longer).
   * Every file operation opens the index's descriptor and closes it before it returns: the
   * entries live in memory, so an index holds no descriptor between flushes (Kafka maps its
   * indexes and closes theirs), and 10,000 partitions do not cost 20,000 descriptors.
   */
  persist(): void {
    try {
      this.persistOpen();
    } finally {
      this.closeFd();
    }
  }

  private persistOpen(): void {
    if (!this.pending) return;
    const fd = this.openFd();
    if (this.fileTooLong) {
      // Cut, then extend again: the bytes after the entries read as zeros, never as stale entries.
      fs.ftruncateSync(fd, this.fileEntries * this.entrySize);
      if (this.preallocated) fs.ftruncateSync(fd, this.fullBytes());
      this.fileTooLong = false;
      this.unsynced = true;
      this.fileWrites++;
    }
    let from = this.fileEntries * this.entrySize;
    const to = this.entries * this.entrySize;
    while (from < to) from += fs.writeSync(fd, this.buf, from, to - from, from);
    this.fileEntries = this.entries;
    this.unsynced = true;
    this.fileWrites++;
  }

  /** Makes the file durable (after persist); no call when nothing changed since the last sync. Returns whether it synced. */
  sync(call: SyncCall): boolean {
    try {
      this.persistOpen();
      if (!this.unsynced) return false;
      const fd = this.openFd();
      if (call === 'fsync') fs.fsyncSync(fd);
      else fs.fdatasyncSync(fd);
      this.unsynced = false;
      return true;
    } finally {
      this.closeFd();
    }
  }

  /** Changes made to the file so far; pass it to markSynced after syncing the file through another descriptor. */
  get writes(): number {
    return this.fileWrites;
  }

  /**
   * A sync of the file through another descriptor (the background roll flush) started when
   * `writes` was `at`: the file is durable unless it changed since or entries are still unwritten.
   */
  markSynced(at: number): void {
    if (at === this.fileWrites && !this.pending) this.unsynced = false;
  }

  private fullBytes(): number {
    return Math.max(this.maxEntries, this.entries) * this.entrySize;
  }

  /** The segment became active: the file exists and is extended to its maximum size. */
  activate(): void {
    try {
      this.persistOpen();
      const fd = this.openFd();
      if (!this.preallocated) {
        fs.ftruncateSync(fd, this.fullBytes());
        this.preallocated = true;
        this.unsynced = true;
        this.fileWrites++;
      }
    } finally {
      this.closeFd();
    }
  }

  /** The segment is sealed (roll, close): entries written and the file cut to them (Kafka's trimToValidSize). */
  trim(): void {
    try {
      this.persistOpen();
      if (this.preallocated) {
        fs.ftruncateSync(this.openFd(), this.entries * this.entrySize);
        this.preallocated = false;
        this.unsynced = true;
        this.fileWrites++;
      }
    } finally {
      this.closeFd();
    }
  }

  closeFd(): void {
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      fs.closeSync(fd);
    }
  }

  /** The file image (entries only), for tests and dumps. */
  bytes(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.entries * this.entrySize));
  }
}

export class OffsetIndex extends IndexFile {
  static readonly ENTRY_BYTES = 8;

  constructor(path: string, maxIndexBytes: number) {
    super(path, OffsetIndex.ENTRY_BYTES, maxIndexBytes);
  }

  get isFull(): boolean {
    return this.entries >= this.maxEntries;
  }

  append(relOffset: number, position: number): void {
    const at = this.slot();
    this.buf.writeInt32BE(relOffset, at);
    this.buf.writeInt32BE(position, at + 4);
    this.appended();
  }

  relOffsetAt(i: number): number {
    return this.buf.readInt32BE(i * 8);
  }

  positionAt(i: number): number {
    return this.buf.readInt32BE(i * 8 + 4);
  }

  /** Index of the last entry with relOffset <= rel, -1 when there is none. */
  floorEntry(rel: number): number {
    let lo = 0;
    let hi = this.entries - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relOffsetAt(mid) <= rel) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Position to start a forward scan for offset base + rel: the last indexed batch at or below it, else 0. */
  lookupPosition(rel: number): number {
    const i = this.floorEntry(rel);
    return i < 0 ? 0 : this.positionAt(i);
  }

  /** Drops entries for offsets >= rel. */
  truncateToRel(rel: number): void {
    const i = this.floorEntry(rel - 1);
    this.truncateEntries(i + 1);
  }

  /** Why the entries cannot be trusted, or null: order, range and the log size they point into. */
  problem(logSize: number): string | null {
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < this.entries; i++) {
      const rel = this.relOffsetAt(i);
      const pos = this.positionAt(i);
      if (rel <= prevRel) return `entry ${i}: relative offset ${rel} not above the previous ${prevRel}`;
      if (pos <= prevPos) return `entry ${i}: position ${pos} not above the previous ${prevPos}`;
      if (pos >= logSize) return `entry ${i}: position ${pos} beyond the log's ${logSize} bytes`;
      prevRel = rel;
      prevPos = pos;
    }
    return null;
  }
}

export class TimeIndex extends IndexFile {
  static readonly ENTRY_BYTES = 12;
  /** The last entry's timestamp, valid while lastAt === changes: maybeAppend reads it on every indexed append. */
  private last = -1;
  private lastAt = -1;

  constructor(path: string, maxIndexBytes: number) {
    super(path, TimeIndex.ENTRY_BYTES, maxIndexBytes);
  }

  /** Kafka keeps the last slot free for the entry written when the segment is rolled or closed. */
  get isFull(): boolean {
    return this.entries >= this.maxEntries - 1;
  }

  timestampAt(i: number): number {
    // Two 32-bit halves instead of a BigInt (several times slower); exact for safe integers.
    return this.buf.readInt32BE(i * 12) * 2 ** 32 + this.buf.readUInt32BE(i * 12 + 4);
  }

  relOffsetAt(i: number): number {
    return this.buf.readInt32BE(i * 12 + 8);
  }

  get lastTimestamp(): number {
    if (this.lastAt !== this.changes) {
      this.last = this.entries === 0 ? -1 : this.timestampAt(this.entries - 1);
      this.lastAt = this.changes;
    }
    return this.last;
  }

  /** Kafka's maybeAppend: only a timestamp above the last entry's (-1 when empty) makes an entry. */
  maybeAppend(timestamp: number, relOffset: number, skipFullCheck = false): boolean {
    if (timestamp <= this.lastTimestamp) return false;
    if (this.entries >= this.maxEntries || (!skipFullCheck && this.isFull)) return false;
    const at = this.slot();
    const hi = Math.floor(timestamp / 2 ** 32);
    this.buf.writeInt32BE(hi, at);
    this.buf.writeUInt32BE(timestamp - hi * 2 ** 32, at + 4);
    this.buf.writeInt32BE(relOffset, at + 8);
    this.appended();
    this.last = timestamp;
    this.lastAt = this.changes;
    return true;
  }

  /** Index of the last entry with timestamp < ts, -1 when there is none. */
  lastBelow(ts: number): number {
    let lo = 0;
    let hi = this.entries - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestampAt(mid) < ts) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops entries for offsets >= rel. */
  truncateToRel(rel: number): void {
    let n = this.entries;
    while (n > 0 && this.relOffsetAt(n - 1) >= rel) n--;
    this.truncateEntries(n);
  }

  problem(maxRel: number): string | null {
    let prevTs = -1;
    let prevRel = -1;
    for (let i = 0; i < this.entries; i++) {
      const ts = this.timestampAt(i);
      const rel = this.relOffsetAt(i);
      if (ts <= prevTs) return `entry ${i}: timestamp ${ts} not above the previous ${prevTs}`;
      if (rel < prevRel) return `entry ${i}: relative offset ${rel} below the previous ${prevRel}`;
      if (rel > maxRel) return `entry ${i}: relative offset ${rel} beyond the segment's last (${maxRel})`;
      prevTs = ts;
      prevRel = rel;
    }
    return null;
  }
}
