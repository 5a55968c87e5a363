// The three write paths of a segment's .log. All write synchronously at a tracked position
// on a kept-open fd: no fstat, no O_APPEND, no allocation per append; the write itself is
// file-write.ts's (pwrite(2) from the N-API addon, or fs.writeSync where it does not load).
import fs from 'node:fs';
import { readFully } from './batch-walker.ts';
import { alignDown, alignUp, DIRECT_ALIGNMENT, openDirect, type AlignedBuffer } from './direct-io.ts';
import { writeFully } from './file-write.ts';
import type { IoMode, SyncCall } from './types.ts';

export interface SegmentWriter {
  /** The descriptor a batch goes to as is (buffered, O_DSYNC), for the one-call native append; null for O_DIRECT, which stages it. */
  readonly plainFd: number | null;
  /** Writes batch at `end`, the current logical end of the file. Throws the errno error of write(2). */
  write(batch: Buffer, end: number): void;
  /** After a failed write: cut the file back to `end`, the last good end. */
  cutBack(end: number): void;
  /** Before the segment goes inactive or the log closes: leave the file at its logical size. */
  finish(end: number): void;
  sync(call: SyncCall): void;
  close(): void;
}

/**
 * Test seam: the next `failNext` sync calls of any writer throw EIO as fsync(2) would, without
 * reaching the kernel. A unit test uses it beside the VM test where the NBD disk's injected
 * write error makes the guest kernel's fdatasync fail for real.
 */
export const injectedSyncFailures = { failNext: 0 };

/** The EIO error the seam injects, when one is due (consumes it); null otherwise. Also used by the background roll flush. */
export function takeInjectedSyncFailure(call: SyncCall): Error | null {
  if (injectedSyncFailures.failNext <= 0) return null;
  injectedSyncFailures.failNext--;
  return Object.assign(new Error(`EIO: i/o error, ${call} (injected)`), { code: 'EIO', errno: -5, syscall: call });
}

function syncFd(fd: number, call: SyncCall): void {
  const injected = takeInjectedSyncFailure(call);
  if (injected !== null) throw injected;
  if (call === 'fsync') fs.fsyncSync(fd);
  else fs.fdatasyncSync(fd);
}

/** write(2) into the page cache (buffered) or through to the device (O_DSYNC: each write is durable when it returns). */
class PlainWriter implements SegmentWriter {
  private readonly fd: number;
  readonly plainFd: number;

  /** `shared`: the segment's own read-write descriptor (buffered io), used for writing too and not closed here. */
  constructor(
    path: string,
    dsync: boolean,
    private readonly shared: number | null = null,
  ) {
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | (dsync ? fs.constants.O_DSYNC : 0);
    this.fd = shared ?? fs.openSync(path, flags, 0o644);
    this.plainFd = this.fd;
  }

  write(batch: Buffer, end: number): void {
    writeFully(this.fd, batch, 0, batch.length, end);
  }

  cutBack(end: number): void {
    fs.ftruncateSync(this.fd, end);
  }

  finish(_end: number): void {}

  sync(call: SyncCall): void {
    syncFd(this.fd, call);
  }

  close(): void {
    if (this.shared === null) fs.closeSync(this.fd);
  }
}

/**
 * O_DIRECT: memory, file offset and length must be block-aligned. The partial last block
 * (the "tail") stays in the aligned staging buffer and is written again, followed by the new
 * batch, on the next append; the block is zero-padded on disk, so the file is longer than
 * the log until finish() cuts it to the logical end. After an unclean stop recovery removes
 * the zero padding.
 */
class DirectWriter implements SegmentWriter {
  private readonly fd: number;
  readonly plainFd = null;
  private readonly staging: Buffer;
  private tail: number;
  /** Bytes the file holds, padding included. */
  private fileSize: number;

  constructor(path: string, staging: AlignedBuffer, readFd: number, end: number) {
    this.staging = staging.buf;
    this.tail = end % DIRECT_ALIGNMENT;
    if (this.tail > 0 && readFully(readFd, this.staging, 0, this.tail, end - this.tail) !== this.tail) {
      throw new Error(`io=direct: could not read the last ${this.tail} bytes of ${path} before appending`);
    }
    this.fd = openDirect(path, fs.constants.O_WRONLY | fs.constants.O_CREAT);
    this.fileSize = end;
  }

  write(batch: Buffer, end: number): void {
    const start = end - this.tail;
    const total = this.tail + batch.length;
    const wlen = alignUp(total);
    if (wlen > this.staging.length) {
      throw new Error(`io=direct: a ${batch.length}-byte batch does not fit the ${this.staging.length}-byte staging buffer`);
    }
    batch.copy(this.staging, this.tail);
    this.staging.fill(0, total, wlen);
    writeFully(this.fd, this.staging, 0, wlen, start);
    this.fileSize = Math.max(this.fileSize, start + wlen);
    // The new partial block moves to the front; the old tail bytes stay intact until a write succeeds.
    const newTail = total % DIRECT_ALIGNMENT;
    if (newTail > 0) this.staging.copyWithin(0, alignDown(total), total);
    this.tail = newTail;
  }

  cutBack(end: number): void {
    fs.ftruncateSync(this.fd, end);
    this.fileSize = end;
  }

  finish(end: number): void {
    if (this.fileSize > end) {
      fs.ftruncateSync(this.fd, end);
      this.fileSize = end;
    }
  }

  sync(call: SyncCall): void {
    syncFd(this.fd, call);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * `readFdWritable`: the segment's read descriptor was opened read-write (a segment this process
 * created); buffered io then writes through it too, one descriptor per active segment instead of
 * two (10,000 partitions fit in a 20,000 open-files limit). O_DSYNC and O_DIRECT need their own.
 */
export function openSegmentWriter(io: IoMode, path: string, end: number, readFd: number, staging: AlignedBuffer | null, readFdWritable = false): SegmentWriter {
  if (io === 'direct') {
    if (staging === null) throw new Error('io=direct needs an aligned staging buffer');
    return new DirectWriter(path, staging, readFd, end);
  }
  return new PlainWriter(path, io === 'dsync', io === 'buffered' && readFdWritable ? readFd : null);
}
