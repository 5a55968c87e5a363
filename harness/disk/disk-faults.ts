// The NBD disk's misbehaviour besides the cache: injected EIO (`vm.disk.errors`) and request
// latency (`vm.disk.latency`). Requests are counted over the disk's life (all boots of a
// trial), so `nth: 3000` is the 3000th WRITE the server received since the disk was created.
import { seededRandom } from '../common/seeded-random.ts';
import type { ErrorRule, LatencySpec } from '../model/disk-spec.ts';
import { SECTOR_BYTES } from './write-log.ts';

export interface InjectedError {
  rule: ErrorRule;
  op: 'write' | 'flush';
  /** The Nth request of that kind (1-based). */
  nth: number;
  offset: number;
  length: number;
}

/** A byte range of the disk whose reads fail (fault kind read-error): EIO, or flipped bytes handed back while the stored ones stay. */
export interface ReadErrorRange {
  /** Bytes from the start of the disk, [from, to). */
  from: number;
  to: number;
  mode: 'eio' | 'wrong-bytes';
  /** Reads that touched it so far. */
  hits: number;
}

export class DiskFaults {
  /** Ranges whose reads fail now (set and cleared by the harness: fault kind read-error). */
  private readErrors: ReadErrorRange[] = [];
  private writes = 0;
  private flushes = 0;
  /** data-write rules: matching writes seen so far, per rule. */
  private readonly dataWrites = new Map<ErrorRule, number>();
  /** Sector ranges of the ext4 journal (data-write rules skip writes touching them). */
  journalSectors: Array<[number, number]> = [];
  private readonly fired = new Set<ErrorRule>();
  readonly injected: InjectedError[] = [];
  private readonly rand: () => number;
  private readonly bornMs = performance.now();

  private readonly errors: ErrorRule[];

  constructor(
    errors: readonly ErrorRule[],
    private readonly latency: LatencySpec,
    seed: number,
  ) {
    this.errors = [...errors];
    this.rand = seededRandom(seed ^ 0x5f3759df);
  }

  /** Arms one more rule now (tests: fail the next write whatever came before). */
  addRule(rule: ErrorRule): void {
    this.errors.push(rule);
  }

  /** Disarms every rule (tests: let the guest boot again after a sticky error). */
  clearRules(): void {
    this.errors.length = 0;
  }

  /** Arms read errors over these ranges (replacing any armed before); an empty list disarms them. Returns the ranges as armed. */
  setReadErrors(ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): ReadErrorRange[] {
    this.readErrors = ranges.map((r) => ({ from: r.from, to: r.to, mode: r.mode, hits: 0 }));
    return this.readErrors;
  }

  /** The armed ranges with their hit counts so far. */
  readErrorHits(): ReadErrorRange[] {
    return this.readErrors.map((r) => ({ ...r }));
  }

  /** The first armed range a READ of [offset, offset + length) touches (counted as a hit), or null. */
  readFault(offset: number, length: number): ReadErrorRange | null {
    const r = this.readErrors.find((x) => offset < x.to && offset + length > x.from);
    if (r) r.hits++;
    return r ?? null;
  }

  /** Counts a WRITE (or TRIM/WRITE_ZEROES) and says whether it fails with EIO. */
  writeFails(offset: number, length: number): boolean {
    const nth = ++this.writes;
    const first = Math.floor(offset / SECTOR_BYTES);
    const last = Math.floor((offset + Math.max(length, 1) - 1) / SECTOR_BYTES);
    const inJournal = this.journalSectors.some(([a, b]) => first <= b && last >= a);
    for (const r of this.errors) {
      if (r.on === 'data-write' && !inJournal && length >= r.minBytes) this.dataWrites.set(r, (this.dataWrites.get(r) ?? 0) + 1);
    }
    return this.match('write', nth, offset, length, (r) => {
      if (r.on === 'write') return r.sticky ? nth >= r.nth : nth === r.nth;
      if (r.on === 'sectors') return first <= r.to && last >= r.from;
      if (r.on === 'data-write') {
        if (inJournal || length < r.minBytes) return false;
        const k = this.dataWrites.get(r) ?? 0;
        return r.sticky ? k >= r.nth : k === r.nth;
      }
      return false;
    });
  }

  flushFails(): boolean {
    const nth = ++this.flushes;
    return this.match('flush', nth, 0, 0, (r) => r.on === 'flush' && (r.sticky ? nth >= r.nth : nth === r.nth));
  }

  private match(op: 'write' | 'flush', nth: number, offset: number, length: number, hits: (r: ErrorRule) => boolean): boolean {
    for (const r of this.errors) {
      if (!hits(r)) continue;
      if (!r.sticky && this.fired.has(r)) continue;
      this.fired.add(r);
      this.injected.push({ rule: r, op, nth, offset, length });
      return true;
    }
    return false;
  }

  /** How long the request must wait before it is served (ms): per-op delay, jitter, and the rest of a stall it falls into. */
  delayMs(): number {
    const l = this.latency;
    let us = l.perOpUs + (l.jitterUs > 0 ? this.rand() * l.jitterUs : 0);
    if (l.stallEveryMs > 0) {
      const age = performance.now() - this.bornMs;
      const into = age % l.stallEveryMs;
      // Stalls sit at the end of each period: [every - for, every).
      const stallStart = l.stallEveryMs - l.stallForMs;
      if (age >= stallStart && into >= stallStart) us += (l.stallEveryMs - into) * 1000;
    }
    return us / 1000;
  }

  get counts(): { writes: number; flushes: number } {
    return { writes: this.writes, flushes: this.flushes };
  }
}
