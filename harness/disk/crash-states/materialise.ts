// Crash-state images on the host. One running image (a sparse copy of the base) advances from
// FLUSH epoch to FLUSH epoch, holding the flushed prefix of the log; each state is a sparse copy
// of it plus the state's delta (FUA writes after the flush, what the onCut policy kept). The
// content of a state is the log-order application of its durable and kept writes: where a delta
// write comes before a flushed one in the log, the flushed writes after it are applied again,
// so overlapping writes end as they would on the disk.
import { closeSync, openSync, writeSync } from 'node:fs';
import { sparseCopy } from '../../vm/disk.ts';
import { SECTOR_BYTES, type WriteLogRecord } from '../write-log.ts';
import { coveredBy, type CrashStatePlan, type KeptPiece } from './plan.ts';

const ZEROES = Buffer.alloc(1 << 20);

function pwriteAll(fd: number, buf: Buffer, offset: number): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, offset + done);
}

function writeZeroes(fd: number, offset: number, length: number): void {
  for (let done = 0; done < length; ) {
    const n = Math.min(ZEROES.length, length - done);
    pwriteAll(fd, ZEROES.subarray(0, n), offset + done);
    done += n;
  }
}

/** Applies one piece of a logged write (all of it, or some of its 512-byte sectors). TRIM and WRITE_ZEROES read back as zeroes. */
export function applyPiece(fd: number, records: readonly WriteLogRecord[], piece: KeptPiece): number {
  const r = records[piece.record];
  if (!r) throw new Error(`crash state: record ${piece.record} is not in the write log (${records.length} records)`);
  const put = (from: number, to: number) => {
    // byte range [from, to) within the write
    if (r.op === 'write') pwriteAll(fd, r.data!.subarray(from, to), r.offset + from);
    else writeZeroes(fd, r.offset + from, to - from);
  };
  if (piece.sectors === null) {
    put(0, r.length);
    return r.length;
  }
  let bytes = 0;
  // Contiguous runs of sectors in one pwrite each.
  const s = [...piece.sectors].sort((a, b) => a - b);
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    const from = s[i]! * SECTOR_BYTES;
    const to = Math.min(r.length, (s[j]! + 1) * SECTOR_BYTES);
    put(from, to);
    bytes += to - from;
    i = j + 1;
  }
  return bytes;
}

/** Writes in a state that belong to its epoch's flushed prefix (the running image holds them). */
export function coreOf(plan: CrashStatePlan, records: readonly WriteLogRecord[]): number[] {
  return plan.durable.filter((i) => coveredBy(records, i, plan.flushRecord, plan.flushCovers));
}

export interface MaterialiseFigures {
  /** Bytes written into the state copy (its delta, and re-applied flushed writes). */
  deltaBytes: number;
  /** Bytes written into the running image to reach this state's epoch (shared by the epoch's states). */
  advanceBytes: number;
}

/** The flushed prefix of the log, applied once per epoch, moving forward only. */
export class RunningImage {
  private readonly core: Uint8Array;
  private fd: number;

  private constructor(
    readonly path: string,
    private readonly records: readonly WriteLogRecord[],
  ) {
    this.core = new Uint8Array(records.length);
    this.fd = openSync(path, 'r+');
  }

  static async create(baseImage: string, file: string, records: readonly WriteLogRecord[]): Promise<RunningImage> {
    await sparseCopy(baseImage, file);
    return new RunningImage(file, records);
  }

  /** Brings the image to the plan's flushed prefix; returns the bytes written. */
  advanceTo(plan: CrashStatePlan): number {
    const add = coreOf(plan, this.records).filter((i) => this.core[i] === 0);
    if (add.length === 0) return 0;
    for (const i of add) this.core[i] = 1;
    // Log order: the new writes, then every flushed write after the first of them again.
    let bytes = 0;
    for (let i = add[0]!; i < this.records.length; i++) if (this.core[i] === 1) bytes += applyPiece(this.fd, this.records, { record: i, sectors: null });
    return bytes;
  }

  /** Pieces to write on a copy of this image to get the plan's state, in log order. */
  deltaOf(plan: CrashStatePlan): KeptPiece[] {
    const pieces = new Map<number, KeptPiece>();
    for (const i of plan.durable) if (this.core[i] !== 1) pieces.set(i, { record: i, sectors: null });
    for (const k of plan.kept) pieces.set(k.record, k);
    if (pieces.size === 0) return [];
    const first = Math.min(...pieces.keys());
    for (let i = first; i < this.records.length; i++) if (this.core[i] === 1) pieces.set(i, { record: i, sectors: null });
    return [...pieces.values()].sort((a, b) => a.record - b.record);
  }

  /** A sparse copy of the running image at `dest` with the plan's delta applied. The plan's epoch must be the current one. */
  async materialise(plan: CrashStatePlan, dest: string): Promise<MaterialiseFigures> {
    // cp reads the running image through the page cache: no fsync needed between.
    const advanceBytes = this.advanceTo(plan);
    await sparseCopy(this.path, dest);
    const delta = this.deltaOf(plan);
    let deltaBytes = 0;
    if (delta.length > 0) {
      const fd = openSync(dest, 'r+');
      try {
        for (const p of delta) deltaBytes += applyPiece(fd, this.records, p);
      } finally {
        closeSync(fd);
      }
    }
    return { deltaBytes, advanceBytes };
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
