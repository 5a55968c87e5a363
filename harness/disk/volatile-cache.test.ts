// Which unflushed writes survive a cut under each onCut policy, on a real backing file:
// drop-unflushed keeps none, random-subset keeps whole sector runs (seeded: same seed, same
// outcome), reorder keeps a non-empty suffix and drops the non-empty run before it, torn keeps
// writes up to one that persists only its first sectors. Flushed and FUA data always survive.
// (What each policy means is on-cut.ts; on-cut.test.ts checks the builder agrees.)
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { OnCutPolicy } from '../model/disk-spec.ts';
import { runsOf, VolatileCacheStore } from './volatile-cache.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-vcache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const S = 512;

function store(onCut: OnCutPolicy, flush: 'honoured' | 'ignored' = 'honoured'): VolatileCacheStore {
  const file = path.join(dir, `d${++n}.img`);
  writeFileSync(file, '');
  truncateSync(file, 1 << 20);
  return new VolatileCacheStore({ file, onCut, flush, volatile: true });
}

/** Eight unflushed writes of 4 sectors each, write i filled with byte i+1, at sector 8*i (with gaps). */
function eightWrites(s: VolatileCacheStore): void {
  for (let i = 0; i < 8; i++) s.write(8 * i * S, Buffer.alloc(4 * S, i + 1), false);
}

/** Per write: how many of its 4 sectors are on the backing file. */
function survivors(s: VolatileCacheStore): number[] {
  const img = readFileSync(s.file);
  return Array.from({ length: 8 }, (_, i) => {
    let k = 0;
    for (let j = 0; j < 4; j++) if (img[(8 * i + j) * S] === i + 1) k++;
    return k;
  });
}

describe('volatile cache cut policies', () => {
  it('drop-unflushed: flushed and FUA writes survive, nothing else', () => {
    const s = store('drop-unflushed');
    s.write(0, Buffer.alloc(S, 0xaa), false);
    s.flush();
    s.write(S, Buffer.alloc(S, 0xbb), true);
    eightWrites(s);
    expect(s.cut(1)).toMatchObject({ unflushedWrites: 8, unflushedSectors: 32, persistedSectors: 0 });
    const img = readFileSync(s.file);
    // Write 0 of eightWrites overwrote sectors 0-3 in the cache; the cut restores the flushed/FUA data.
    expect(img[0]).toBe(0xaa);
    expect(img[S]).toBe(0xbb);
    expect(survivors(s).slice(1)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(s.cachedSectors).toBe(0);
  });

  it('random-subset keeps whole runs, differs between seeds and repeats for a seed', () => {
    const outcomes = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5]) {
      const a = store('random-subset');
      eightWrites(a);
      a.cut(seed);
      const got = survivors(a);
      for (const k of got) expect([0, 4]).toContain(k);
      const b = store('random-subset');
      eightWrites(b);
      b.cut(seed);
      expect(survivors(b)).toEqual(got);
      outcomes.add(got.join(','));
    }
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it('reorder keeps a non-empty suffix of the unflushed writes and loses the earlier ones', () => {
    const splits = new Set<number>();
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const s = store('reorder');
      eightWrites(s);
      s.cut(seed);
      const got = survivors(s);
      const first = got.indexOf(4);
      // Never nothing (that state would show no reordering), never everything.
      expect(first).toBeGreaterThan(0);
      expect(got.slice(first).every((k) => k === 4)).toBe(true);
      expect(got.slice(0, first).every((k) => k === 0)).toBe(true);
      splits.add(first);
    }
    expect(splits.size).toBeGreaterThan(1);
  });

  it('torn persists writes in order up to one that keeps only its first sectors', () => {
    for (const seed of [21, 22, 23, 24]) {
      const s = store('torn');
      eightWrites(s);
      const out = s.cut(seed);
      const got = survivors(s);
      const k = got.findIndex((x) => x < 4);
      expect(got[k]).toBe(out.torn!.keptSectors);
      expect(out.torn!.keptSectors).toBeGreaterThanOrEqual(1);
      expect(out.torn!.keptSectors).toBeLessThan(4);
      expect(got.slice(0, k).every((x) => x === 4)).toBe(true);
      expect(got.slice(k + 1).every((x) => x === 0)).toBe(true);
      // The kept sectors are the write's first ones.
      const img = readFileSync(s.file);
      expect(img[(8 * k + out.torn!.keptSectors - 1) * S]).toBe(k + 1);
      expect(img[(8 * k + out.torn!.keptSectors) * S]).toBe(0);
    }
  });

  it('flush: ignored persists nothing at FLUSH or FUA; a clean power-down writes the cache back', () => {
    const s = store('drop-unflushed', 'ignored');
    s.write(0, Buffer.alloc(S, 1), true);
    s.flush();
    expect(readFileSync(s.file)[0]).toBe(0);
    expect(s.read(0, S)[0]).toBe(1);
    s.writeBackAll();
    expect(readFileSync(s.file)[0]).toBe(1);
  });

  it('groups sorted sectors into runs', () => {
    expect(runsOf([1, 2, 3, 7, 8, 10])).toEqual([[1, 2, 3], [7, 8], [10]]);
  });
});
