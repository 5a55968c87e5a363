// The NBD disk's storage: a backing raw file plus, for `model: volatile-cache`, a write cache
// in the server's memory. Writes land in the cache (per 512-byte sector, the newest data wins);
// a FLUSH (or a FUA write) persists them to the backing file; a power cut applies the onCut
// policy to whatever is still cached and empties it. What each policy keeps is decided in
// on-cut.ts (chooseAtCut), the same function the crash-state builder uses: the unflushed
// writes in arrival order, each with the sectors it still holds, and the cut's seed.
// `flush: ignored` is a lying drive: FLUSH and FUA are acknowledged and nothing is persisted.
// The backing file lives in the host page cache, which survives (the host never crashes), so
// the file is the disk's stable media. Every draw comes from the trial's seed.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { FlushBehaviour } from '../model/disk-spec.ts';
import { chooseAtCut, type OnCutPolicy } from './on-cut.ts';
import { SECTOR_BYTES } from './write-log.ts';

interface CachedSector {
  /** The write that put it there (its order among unflushed writes). */
  seq: number;
  data: Buffer;
}

export interface CutOutcome {
  policy: OnCutPolicy;
  /** Unflushed writes (that still owned a sector) at the cut. */
  unflushedWrites: number;
  unflushedSectors: number;
  persistedSectors: number;
  /** torn: the write that was persisted in part (its seq, sectors kept of those it held). */
  torn?: { seq: number; keptSectors: number; ofSectors: number };
}

export class BackingFileError extends Error {}

export interface VolatileCacheOptions {
  file: string;
  onCut: OnCutPolicy;
  flush: FlushBehaviour;
  /** false: model `file` over NBD (write-through; a cut loses nothing the server acknowledged). */
  volatile: boolean;
}

export class VolatileCacheStore {
  readonly sizeBytes: number;
  private fd: number;
  private readonly cache = new Map<number, CachedSector>();
  private nextSeq = 0;
  private closed = false;

  constructor(private readonly opts: VolatileCacheOptions) {
    this.fd = openSync(opts.file, 'r+');
    this.sizeBytes = fstatSync(this.fd).size;
    if (this.sizeBytes % SECTOR_BYTES !== 0) {
      closeSync(this.fd);
      throw new BackingFileError(`NBD backing file ${opts.file}: size ${this.sizeBytes} is not a multiple of ${SECTOR_BYTES}-byte sectors`);
    }
  }

  get file(): string {
    return this.opts.file;
  }

  /** flush: ignored (FLUSH and FUA are acknowledged without persisting). */
  get liesAboutFlush(): boolean {
    return this.opts.volatile && this.opts.flush === 'ignored';
  }

  /** Sectors written but not yet persisted. */
  get cachedSectors(): number {
    return this.cache.size;
  }

  /** Reads `length` bytes at `offset`: the backing file with the cache laid over it. */
  read(offset: number, length: number): Buffer {
    const out = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, out, done, length - done, offset + done);
      if (n === 0) {
        throw new BackingFileError(`short read of the NBD backing file ${this.opts.file} at byte ${offset + done}: ${done} of ${length} bytes read from offset ${offset} (file size ${fstatSync(this.fd).size})`);
      }
      done += n;
    }
    if (this.cache.size > 0) {
      const first = Math.floor(offset / SECTOR_BYTES);
      const last = Math.floor((offset + length - 1) / SECTOR_BYTES);
      for (let s = first; s <= last; s++) {
        const c = this.cache.get(s);
        if (!c) continue;
        const sStart = s * SECTOR_BYTES;
        const from = Math.max(offset, sStart);
        const to = Math.min(offset + length, sStart + SECTOR_BYTES);
        c.data.copy(out, from - offset, from - sStart, to - sStart);
      }
    }
    return out;
  }

  /** A write (aligned to sectors). FUA persists it at once, unless the drive lies about flushes. */
  write(offset: number, data: Buffer, fua: boolean): void {
    if (!this.opts.volatile || (fua && this.opts.flush === 'honoured')) {
      this.writeThrough(offset, data);
      return;
    }
    const seq = this.nextSeq++;
    const first = offset / SECTOR_BYTES;
    for (let i = 0; i < data.length / SECTOR_BYTES; i++) {
      this.cache.set(first + i, { seq, data: data.subarray(i * SECTOR_BYTES, (i + 1) * SECTOR_BYTES) });
    }
  }

  private writeThrough(offset: number, data: Buffer): void {
    let done = 0;
    while (done < data.length) done += writeSync(this.fd, data, done, data.length - done, offset + done);
    // Older cached copies of these sectors are superseded.
    if (this.cache.size > 0) for (let s = offset / SECTOR_BYTES; s < (offset + data.length) / SECTOR_BYTES; s++) this.cache.delete(s);
  }

  /** FLUSH: everything cached reaches the backing file (a lying drive acknowledges and does nothing). */
  flush(): void {
    if (this.opts.flush === 'ignored') return;
    this.persist([...this.cache.keys()]);
    this.cache.clear();
  }

  /** Orderly power-down (clean shutdown, end of a trial): the drive writes its cache back. */
  writeBackAll(): void {
    this.persist([...this.cache.keys()]);
    this.cache.clear();
  }

  private persist(sectors: number[]): number {
    sectors.sort((a, b) => a - b);
    let i = 0;
    while (i < sectors.length) {
      let j = i + 1;
      while (j < sectors.length && sectors[j] === sectors[j - 1]! + 1) j++;
      const run = Buffer.concat(sectors.slice(i, j).map((s) => this.cache.get(s)!.data));
      let done = 0;
      const at = sectors[i]! * SECTOR_BYTES;
      while (done < run.length) done += writeSync(this.fd, run, done, run.length - done, at + done);
      i = j;
    }
    return sectors.length;
  }

  /** Power cut: the onCut policy (on-cut.ts) decides which cached sectors reach the media; the cache is emptied. */
  cut(seed: number): CutOutcome {
    // Unflushed writes in arrival order, each with the sectors it still holds.
    const bySeq = new Map<number, number[]>();
    for (const [s, c] of this.cache) {
      const list = bySeq.get(c.seq);
      if (list) list.push(s);
      else bySeq.set(c.seq, [s]);
    }
    const writes = [...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([seq, sectors]) => ({ seq, sectors: sectors.sort((a, b) => a - b) }));
    const choice = chooseAtCut(this.opts.onCut, writes, seed);
    const outcome: CutOutcome = { policy: this.opts.onCut, unflushedWrites: writes.length, unflushedSectors: this.cache.size, persistedSectors: 0 };
    if (choice.torn) outcome.torn = { seq: writes[choice.torn.write]!.seq, keptSectors: choice.torn.keptSectors, ofSectors: choice.torn.ofSectors };
    outcome.persistedSectors = this.persist(choice.kept.flat());
    this.cache.clear();
    return outcome;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** Maximal contiguous runs of sorted sector numbers (on-cut.ts). */
export { runsOf } from './on-cut.ts';
