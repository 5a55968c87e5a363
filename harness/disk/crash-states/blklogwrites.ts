// A second write-log recorder, for trials before the NBD disk (and to cross-check it): QEMU's own
// `blklogwrites` block driver (Debian's QEMU 7.2 has it) logs every WRITE, FLUSH, FUA and
// DISCARD the guest sends, in dm-log-writes' format, to a log file beside the disk image. That
// format has no timestamps, so a watcher thread stamps each entry with the host clock
// (engine/common/clock.ts) the moment its header appears in the log file (inotify, with a 10 ms
// poll behind it); at the end the entries are converted into durolab's write log
// (write-log.ts): completeUs = that moment, submitUs = the last moment its place in the log was
// seen empty (the entry was written in between).
//
// Timing caveat (why `clockUncertaintyMs`): QEMU writes an entry when the request is submitted
// to the image, so the stamp is at most the watcher's wake-up delay after it was issued, and a
// FLUSH is stamped before it completes. The ack that depends on a flush reaches the host
// through the guest's network stack afterwards; a watcher delayed longer than that path would
// make an ack look earlier than the flush it needed. The crash-state check then counts an ack
// only when it came at least this long before the crash point.
//
// dm-log-writes layout (drivers/md/dm-log-writes.c; QEMU block/blklogwrites.c): sector 0 is the
// super block (magic 0x6a736677736872, version 1, nr_entries, sector size); each entry is one
// sector (u64 sector, u64 nr_sectors, u64 flags, u64 data_len) followed, for writes, by its
// nr_sectors of data. Flags: 1 FLUSH, 2 FUA, 4 DISCARD, 8 MARK.
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { hostClockOffsetUs } from '../../../engine/common/clock.ts';
import { qemuEscape, type DataDisk } from '../../vm/disk.ts';
import { WriteLogWriter, type WriteLogEntry } from '../write-log.ts';

export const DM_LOG_WRITES_MAGIC = 0x6a736677736872n;
const FLAG_FLUSH = 1n;
const FLAG_FUA = 2n;
const FLAG_DISCARD = 4n;
const FLAG_MARK = 8n;
export const LOG_SECTOR_BYTES = 512;

/** The watcher, as plain JS run with `eval` (the bundle and the test runner load it alike). */
const WATCHER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { file, sector, clockOffsetUs } = workerData;
const head = Buffer.alloc(24);
let fd = null;
let cursor = sector;
let stopping = false;
// The main thread's host clock (engine/common/clock.ts): the shared monotonic clock plus its offset.
const nowUs = () => Number(process.hrtime.bigint() / 1000n) + clockOffsetUs;
let emptyAtUs = nowUs();
function scan() {
  if (fd === null) { try { fd = fs.openSync(file, 'r'); } catch { return; } }
  const out = [];
  const after = emptyAtUs;
  for (;;) {
    const before = nowUs();
    const n = fs.readSync(fd, head, 0, 24, cursor);
    const nr = n < 24 ? 0n : head.readBigUInt64LE(8);
    const flags = n < 24 ? 0n : head.readBigUInt64LE(16);
    if (n < 24 || (nr === 0n && flags === 0n && head.readBigUInt64LE(0) === 0n)) { emptyAtUs = before; break; }
    out.push(cursor, nowUs(), after);
    const data = (flags & 13n) !== 0n ? 0n : nr;
    cursor += (1 + Number(data)) * sector;
  }
  if (out.length) parentPort.postMessage(Float64Array.from(out));
}
const watcher = fs.watch(file, () => scan());
const timer = setInterval(scan, 10);
parentPort.on('message', (m) => {
  if (m !== 'stop' || stopping) return;
  stopping = true;
  scan();
  watcher.close();
  clearInterval(timer);
  if (fd !== null) fs.closeSync(fd);
  parentPort.postMessage('stopped');
});
scan();
parentPort.postMessage('ready');
`;

/** Stamps dm-log-writes entries with the host clock as they appear in the log file. */
export class LogWatcher {
  private readonly worker: Worker;
  /**
   * Entry file offset -> host µs it was first seen, and the last instant its place was still
   * empty (it was written in between: a watcher delayed by load widens the interval, never hides it).
   */
  readonly seen = new Map<number, { atUs: number; afterUs: number }>();
  private stopped: Promise<void> | null = null;
  private error: Error | null = null;
  /**
   * Resolves once the thread runs and has made its first scan: a writer started before that
   * would get "seen empty" instants from after its writes (a thread takes tens of ms to start).
   */
  readonly ready: Promise<void>;

  constructor(readonly logFile: string) {
    this.worker = new Worker(WATCHER_SOURCE, { eval: true, workerData: { file: logFile, sector: LOG_SECTOR_BYTES, clockOffsetUs: hostClockOffsetUs } });
    let markReady!: () => void;
    this.ready = new Promise<void>((resolve) => (markReady = resolve));
    this.worker.on('exit', () => markReady());
    this.worker.on('message', (m: unknown) => {
      if (m === 'ready') return markReady();
      if (!(m instanceof Float64Array)) return;
      for (let i = 0; i < m.length; i += 3) if (!this.seen.has(m[i]!)) this.seen.set(m[i]!, { atUs: m[i + 1]!, afterUs: m[i + 2]! });
    });
    this.worker.on('error', (e) => (this.error = e));
  }

  /** A last scan, then the thread ends. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      const done = () => resolve();
      this.worker.on('message', (m) => m === 'stopped' && void this.worker.terminate().then(done, done));
      this.worker.on('exit', done);
      this.worker.postMessage('stop');
    }).then(() => {
      if (this.error) throw new Error(`write-log watcher of ${this.logFile} failed: ${this.error.message}`);
    });
    return this.stopped;
  }
}

export interface DmLogEntry {
  fileOffset: number;
  sector: number;
  sectors: number;
  flags: bigint;
  data: Buffer | null;
}

/** Parses a dm-log-writes file up to the first entry not (yet) written. */
export function readDmLogWrites(file: string): { sectorBytes: number; entries: DmLogEntry[] } {
  const fd = openSync(file, 'r');
  try {
    const sb = Buffer.alloc(32);
    if (readSync(fd, sb, 0, 32, 0) < 28) throw new Error(`dm-log-writes log ${file} at byte 0: the super block needs 28 bytes`);
    if (sb.readBigUInt64LE(0) !== DM_LOG_WRITES_MAGIC) throw new Error(`dm-log-writes log ${file} at byte 0: expected magic 0x${DM_LOG_WRITES_MAGIC.toString(16)}, found 0x${sb.readBigUInt64LE(0).toString(16)}`);
    const sectorBytes = sb.readUInt32LE(24);
    if (sectorBytes !== LOG_SECTOR_BYTES) throw new Error(`dm-log-writes log ${file} at byte 24: expected sector size ${LOG_SECTOR_BYTES}, found ${sectorBytes}`);
    const entries: DmLogEntry[] = [];
    const head = Buffer.alloc(32);
    let pos = sectorBytes;
    for (;;) {
      if (readSync(fd, head, 0, 32, pos) < 32) break;
      const sector = Number(head.readBigUInt64LE(0));
      const sectors = Number(head.readBigUInt64LE(8));
      const flags = head.readBigUInt64LE(16);
      if (sector === 0 && sectors === 0 && flags === 0n) break;
      const hasData = (flags & (FLAG_FLUSH | FLAG_DISCARD | FLAG_MARK)) === 0n;
      let data: Buffer | null = null;
      if (hasData) {
        data = Buffer.alloc(sectors * sectorBytes);
        const n = readSync(fd, data, 0, data.length, pos + sectorBytes);
        if (n < data.length) throw new Error(`dm-log-writes log ${file} at byte ${pos}: a write of ${sectors} sectors has only ${n} data bytes (torn at the end)`);
      }
      entries.push({ fileOffset: pos, sector, sectors, flags, data });
      pos += (1 + (hasData ? sectors : 0)) * sectorBytes;
    }
    return { sectorBytes, entries };
  } finally {
    closeSync(fd);
  }
}

/**
 * Converts a dm-log-writes file into durolab's write log, each entry at the time the watcher
 * saw it (entries it never saw, written right before the end, at `endUs`). Marks are skipped.
 */
export function convertDmLogWrites(dmLog: string, seen: ReadonlyMap<number, { atUs: number; afterUs: number }>, out: string, opts: { endUs: number; limitBytes?: number }): { records: number; unseen: number } {
  const { entries } = readDmLogWrites(dmLog);
  const writer = new WriteLogWriter(out, opts.limitBytes ?? 4 * 1024 ** 3);
  let last = 0;
  let lastAfter = 0;
  let unseen = 0;
  try {
    for (const e of entries) {
      if ((e.flags & FLAG_MARK) !== 0n) continue;
      const stamp = seen.get(e.fileOffset);
      if (stamp === undefined) unseen++;
      // The watcher reads entries in log order: keep the log's times monotonic.
      const t = Math.max(stamp?.atUs ?? opts.endUs, last);
      const after = Math.min(t, Math.max(stamp?.afterUs ?? last, lastAfter));
      last = t;
      lastAfter = after;
      // submitUs: the last instant the entry was certainly not yet written; completeUs: when it was seen.
      const base = { fua: (e.flags & FLAG_FUA) !== 0n, submitUs: after, completeUs: t, offset: e.sector * LOG_SECTOR_BYTES };
      let entry: WriteLogEntry;
      if ((e.flags & FLAG_FLUSH) !== 0n) entry = { ...base, op: 'flush', offset: 0, length: 0, data: null };
      else if ((e.flags & FLAG_DISCARD) !== 0n) entry = { ...base, op: 'trim', length: e.sectors * LOG_SECTOR_BYTES, data: null };
      else entry = { ...base, op: 'write', length: e.data!.length, data: e.data };
      writer.append(entry);
    }
    return { records: writer.records, unseen };
  } finally {
    writer.close();
  }
}

/**
 * A raw data disk behind QEMU's blklogwrites driver: the guest sees a virtio-blk disk with a
 * volatile write cache (cache=writeback), every request also goes to `logPath`.
 */
export class BlkLogWritesDisk implements DataDisk {
  readonly kind = 'blklogwrites';
  readonly cacheMode = 'writeback';
  constructor(
    readonly path: string,
    readonly logPath: string,
    readonly sizeMiB: number,
  ) {
    // QEMU opens an existing log; it must exist before the VM starts (and the watcher too).
    writeFileSync(logPath, '', { flag: 'w' });
  }

  get imagePath(): string {
    return this.path;
  }

  describe(): string {
    return `file disk ${this.path} (${this.sizeMiB} MiB, cache=writeback) recording its writes to ${this.logPath} (QEMU blklogwrites)`;
  }

  qemuDriveArgs(): string[] {
    return [
      '-drive',
      `driver=blklogwrites,file.driver=file,file.filename=${qemuEscape(this.path)},log.driver=file,log.filename=${qemuEscape(this.logPath)},log-sector-size=${LOG_SECTOR_BYTES},if=virtio,cache=writeback`,
    ];
  }
}
