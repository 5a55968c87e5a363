// One onCut meaning for the live NBD disk and the crash-state builder. One sequence of requests
// goes both to a VolatileCacheStore over a real backing file and through WriteLogWriter into a
// write log; the live disk is cut with a seed, the builder materialises the state at the same
// point with the same seed (plan.cutSeed), and the two images must be byte-identical for every
// policy, seed and point. Each sector of each write carries its own bytes, so equal images
// mean equal kept sectors. Then the policies' own properties on chooseAtCut: drop keeps none,
// torn a prefix up to one write that keeps a proper prefix of its sectors, random-subset whole
// 4 KiB-aligned runs with p = 1/2, reorder a non-empty suffix after a non-empty lost run.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blockRunsOf, chooseAtCut, ON_CUT_POLICIES, runsOf, type OnCutPolicy, type UnflushedWrite } from './on-cut.ts';
import { VolatileCacheStore } from './volatile-cache.ts';
import { WriteLogWriter, readWriteLog, requireComplete, type WriteLogEntry, type WriteLogRecord } from './write-log.ts';
import { planAtPoints, planCrashStates, pointTime } from './crash-states/plan.ts';
import { RunningImage } from './crash-states/materialise.ts';
import { ON_CUT_POLICIES as FROM_DISK_SPEC } from '../model/disk-spec.ts';
import { ON_CUT_POLICIES as FROM_PLAN } from './crash-states/plan.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-on-cut-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const S = 512;
const DISK_BYTES = 128 * 1024;
const base = path.join(dir, 'base.img');
writeFileSync(base, Buffer.alloc(DISK_BYTES));

type Op = { op: 'write'; sector: number; sectors: number; fua?: boolean } | { op: 'trim'; sector: number; sectors: number } | { op: 'flush' };

/** Sector k of the j-th write: every byte says (j, k), so a kept sector is recognisable in an image. */
function dataOf(j: number, sectors: number): Buffer {
  const b = Buffer.alloc(sectors * S);
  for (let k = 0; k < sectors; k++) for (let x = 0; x < S; x += 2) b.writeUInt16LE(((j + 1) << 8) | (k + 1), k * S + x);
  return b;
}

// w0 flushed; then unflushed: w1 8K aligned, w2 crossing 4K blocks, w3 over part of w2, a FUA
// write over part of w1, a one-sector write, a TRIM over flushed data, a 20 KiB write, w7 over
// w1's start; a FLUSH in the middle of a second burst.
const OPS: Op[] = [
  { op: 'write', sector: 0, sectors: 8 },
  { op: 'write', sector: 72, sectors: 8 },
  { op: 'flush' },
  { op: 'write', sector: 8, sectors: 16 },
  { op: 'write', sector: 27, sectors: 13 },
  { op: 'write', sector: 30, sectors: 4 },
  { op: 'write', sector: 10, sectors: 2, fua: true },
  { op: 'write', sector: 64, sectors: 1 },
  { op: 'trim', sector: 72, sectors: 8 },
  { op: 'write', sector: 80, sectors: 40 },
  { op: 'write', sector: 8, sectors: 4 },
  { op: 'write', sector: 130, sectors: 3 },
  { op: 'flush' },
  { op: 'write', sector: 160, sectors: 24 },
  { op: 'write', sector: 170, sectors: 6 },
  { op: 'write', sector: 190, sectors: 1 },
  { op: 'write', sector: 200, sectors: 9 },
];

interface Recorded {
  records: WriteLogRecord[];
  /** The request sequence, one entry per log record. */
  entries: WriteLogEntry[];
}

/** The requests as the NBD server logs them (a lying drive marks its FLUSHes and FUA writes notHonoured). */
function record(ops: Op[], flush: 'honoured' | 'ignored'): Recorded {
  let clock = 5_000_000;
  let j = 0;
  const lie = flush === 'ignored';
  const entries = ops.map((o): WriteLogEntry => {
    const t = { submitUs: clock++, completeUs: clock++ };
    if (o.op === 'flush') return { op: 'flush', fua: false, ...t, offset: 0, length: 0, data: null, ...(lie ? { notHonoured: true as const } : {}) };
    if (o.op === 'trim') return { op: 'trim', fua: false, ...t, offset: o.sector * S, length: o.sectors * S, data: null };
    const fua = o.fua ?? false;
    return { op: 'write', fua, ...t, offset: o.sector * S, length: o.sectors * S, data: dataOf(j++, o.sectors), ...(lie && fua ? { notHonoured: true as const } : {}) };
  });
  const file = path.join(dir, `log-${++files}.wlog`);
  const writer = new WriteLogWriter(file, 1 << 24);
  for (const e of entries) writer.append(e);
  writer.close();
  return { records: requireComplete(readWriteLog(file)), entries };
}

/** The live disk after the first `position` requests, cut with `seed`: its backing file and the cut's outcome. */
function liveCut(rec: Recorded, position: number, policy: OnCutPolicy, flush: 'honoured' | 'ignored', seed: number) {
  const file = path.join(dir, `live-${++files}.img`);
  writeFileSync(file, '');
  truncateSync(file, DISK_BYTES);
  const store = new VolatileCacheStore({ file, onCut: policy, flush, volatile: true });
  try {
    for (const e of rec.entries.slice(0, position)) {
      // As harness/disk/nbd-server.ts serves them: TRIM reads back as zeroes.
      if (e.op === 'flush') store.flush();
      else store.write(e.offset, e.op === 'write' ? e.data! : Buffer.alloc(e.length), e.fua);
    }
    const outcome = store.cut(seed);
    return { image: readFileSync(file), outcome };
  } finally {
    store.close();
  }
}

const keptSectorCount = (records: WriteLogRecord[], kept: Array<{ record: number; sectors: number[] | null }>) =>
  kept.reduce((a, k) => a + (k.sectors ? k.sectors.length : Math.ceil(records[k.record]!.length / S)), 0);

/** The 512-byte sectors at which two images differ. */
function differingSectors(a: Buffer, b: Buffer): number[] {
  const out: number[] = [];
  for (let s = 0; s < a.length / S; s++) if (!a.subarray(s * S, (s + 1) * S).equals(b.subarray(s * S, (s + 1) * S))) out.push(s);
  return out;
}

describe('onCut: one definition', () => {
  it('disk-spec.ts and crash-states/plan.ts re-export the one list', () => {
    expect(FROM_DISK_SPEC).toBe(ON_CUT_POLICIES);
    expect(FROM_PLAN).toBe(ON_CUT_POLICIES);
    expect([...ON_CUT_POLICIES]).toEqual(['drop-unflushed', 'random-subset', 'reorder', 'torn']);
  });
});

describe('onCut: the live disk and the crash-state builder keep the same sectors', () => {
  for (const flush of ['honoured', 'ignored'] as const) {
    for (const policy of ON_CUT_POLICIES) {
      it(`${policy}, flush ${flush}: the end state equals the live cut for every seed`, async () => {
        const rec = record(OPS, flush);
        const n = rec.records.length;
        const end = { position: n, kind: 'end' as const, timeUs: pointTime(rec.records, n, rec.records[n - 1]!.completeUs) };
        const images = new Set<string>();
        const running = await RunningImage.create(base, path.join(dir, `running-${++files}.img`), rec.records);
        try {
          for (let seed = 1; seed <= 30; seed++) {
            const [plan] = planAtPoints(rec.records, [end], { policy, seed });
            expect(plan!.cutSeed).toBe(seed);
            const out = path.join(dir, `state-${++files}.img`);
            await running.materialise(plan!, out);
            const built = readFileSync(out);
            rmSync(out);
            const live = liveCut(rec, n, policy, flush, seed);
            expect(differingSectors(live.image, built), `${policy} seed ${seed}`).toEqual([]);
            expect(live.outcome.persistedSectors).toBe(keptSectorCount(rec.records, plan!.kept));
            // Sectors 30..33 of the write at 27 (the 4th write: high byte 4) were overwritten by the
            // write at 30 before the cut: a cache holds only the newer copy, so never its bytes there.
            for (let s = 30; s < 34; s++) expect(built.readUInt16LE(s * S) >> 8).not.toBe(4);
            images.add(built.toString('base64'));
          }
        } finally {
          running.close();
        }
        if (policy === 'drop-unflushed') expect(images.size).toBe(1);
        // reorder after the last honoured FLUSH: 4 unflushed writes, 3 places to split.
        else expect(images.size).toBeGreaterThanOrEqual(3);
      });
    }
  }

  it('every state the builder plans (spread, around FLUSHes, the end) equals the live disk cut at its point with its cutSeed', async () => {
    for (const policy of ON_CUT_POLICIES) {
      const rec = record(OPS, 'honoured');
      const plans = planCrashStates(rec.records, { states: 16, policy, seed: 77 });
      expect(plans).toHaveLength(16);
      expect(new Set(plans.map((p) => p.cutSeed)).size).toBe(16);
      expect(planCrashStates(rec.records, { states: 16, policy, seed: 77 })).toEqual(plans);
      const running = await RunningImage.create(base, path.join(dir, `running-${++files}.img`), rec.records);
      try {
        for (const plan of plans) {
          const out = path.join(dir, `state-${++files}.img`);
          await running.materialise(plan, out);
          const built = readFileSync(out);
          rmSync(out);
          const live = liveCut(rec, plan.point.position, policy, 'honoured', plan.cutSeed);
          expect(differingSectors(live.image, built), `${policy} state ${plan.index} at ${plan.point.position}`).toEqual([]);
        }
      } finally {
        running.close();
      }
    }
  });
});

/** Random unflushed writes (ascending sector lists, some with holes as after an overwrite). */
function randomWrites(seed: number, count: number): UnflushedWrite[] {
  let x = seed * 2654435761;
  const next = (m: number) => {
    x = (Math.imul(x ^ (x >>> 13), 0x5bd1e995) + 0x27d4eb2d) >>> 0;
    return x % m;
  };
  return Array.from({ length: count }, () => {
    const start = next(4096);
    const len = 1 + next(40);
    const sectors = Array.from({ length: len }, (_, k) => start + k).filter((s) => next(6) !== 0 || s === start);
    return { sectors };
  });
}

describe('onCut policies (chooseAtCut)', () => {
  const writes = randomWrites(3, 9);

  it('drop-unflushed keeps nothing', () => {
    for (let seed = 0; seed < 20; seed++) {
      const c = chooseAtCut('drop-unflushed', writes, seed);
      expect(c.kept.every((k) => k.length === 0)).toBe(true);
      expect(c.applied).toBe(true);
    }
    expect(chooseAtCut('drop-unflushed', [], 1).applied).toBe(false);
  });

  it('torn keeps the writes before one drawn write whole, a proper non-empty prefix of that one, nothing after', () => {
    const torn = new Set<number>();
    const prefixes = new Set<number>();
    for (let seed = 0; seed < 200; seed++) {
      const c = chooseAtCut('torn', writes, seed);
      const t = c.torn!;
      expect(t).toBeDefined();
      const of = writes[t.write]!.sectors;
      expect(t.ofSectors).toBe(of.length);
      expect(t.keptSectors).toBeGreaterThanOrEqual(1);
      expect(t.keptSectors).toBeLessThan(of.length);
      expect(c.kept[t.write]).toEqual(of.slice(0, t.keptSectors));
      writes.forEach((w, i) => {
        if (i < t.write) expect(c.kept[i]).toEqual(w.sectors);
        if (i > t.write) expect(c.kept[i]).toEqual([]);
      });
      torn.add(t.write);
      prefixes.add(t.keptSectors);
    }
    // Every write of two sectors or more gets torn for some seed; prefixes vary.
    expect([...torn].sort((a, b) => a - b)).toEqual(writes.flatMap((w, i) => (w.sectors.length > 1 ? [i] : [])));
    expect(prefixes.size).toBeGreaterThan(3);
    // One-sector writes cannot tear: an in-order prefix of the writes survives, no write in part.
    const single = [{ sectors: [4] }, { sectors: [9] }, { sectors: [2] }];
    const cuts = new Set<number>();
    for (let seed = 0; seed < 40; seed++) {
      const c = chooseAtCut('torn', single, seed);
      expect(c.torn).toBeUndefined();
      const k = c.kept.findIndex((x) => x.length === 0);
      expect(k).toBeGreaterThanOrEqual(0);
      expect(c.kept.slice(k).every((x) => x.length === 0)).toBe(true);
      expect(c.kept.slice(0, k)).toEqual(single.slice(0, k).map((w) => w.sectors));
      cuts.add(k);
    }
    expect([...cuts].sort()).toEqual([0, 1, 2]);
  });

  it('random-subset keeps whole runs (contiguous, within one 4 KiB-aligned block), each with p = 1/2', () => {
    const runs = writes.flatMap((w, i) => blockRunsOf(w.sectors).map((run) => ({ i, run })));
    const keptCount = new Array<number>(runs.length).fill(0);
    const SEEDS = 400;
    for (let seed = 0; seed < SEEDS; seed++) {
      const c = chooseAtCut('random-subset', writes, seed);
      runs.forEach(({ i, run }, r) => {
        const inKept = run.filter((s) => c.kept[i]!.includes(s)).length;
        expect([0, run.length]).toContain(inKept);
        if (inKept) keptCount[r]!++;
      });
      // Nothing outside the write's own sectors.
      c.kept.forEach((k, i) => expect(k.every((s) => writes[i]!.sectors.includes(s))).toBe(true));
    }
    for (const k of keptCount) expect(k / SEEDS).toBeGreaterThan(0.38);
    for (const k of keptCount) expect(k / SEEDS).toBeLessThan(0.62);
    expect(blockRunsOf([5, 6, 7, 8, 9, 15, 16, 18])).toEqual([[5, 6, 7], [8, 9], [15], [16], [18]]);
    expect(runsOf([5, 6, 7, 8, 9, 15, 16, 18])).toEqual([[5, 6, 7, 8, 9], [15, 16], [18]]);
  });

  it('reorder keeps a non-empty suffix of the writes whole and loses the non-empty run before it', () => {
    const splits = new Set<number>();
    for (let seed = 0; seed < 200; seed++) {
      const c = chooseAtCut('reorder', writes, seed);
      const from = c.kept.findIndex((k) => k.length > 0);
      expect(from).toBeGreaterThanOrEqual(1);
      expect(from).toBeLessThan(writes.length);
      writes.forEach((w, i) => expect(c.kept[i]).toEqual(i < from ? [] : w.sectors));
      expect(c.applied).toBe(true);
      splits.add(from);
    }
    expect([...splits].sort((a, b) => a - b)).toEqual(Array.from({ length: writes.length - 1 }, (_, i) => i + 1));
    // One write: no order to break, nothing persists.
    const one = chooseAtCut('reorder', [{ sectors: [1, 2] }], 5);
    expect(one).toMatchObject({ applied: false, kept: [[]] });
  });

  it('is a function of (policy, writes, seed), and refuses malformed writes', () => {
    for (const policy of ON_CUT_POLICIES) {
      for (let seed = 0; seed < 10; seed++) expect(chooseAtCut(policy, writes, seed)).toEqual(chooseAtCut(policy, writes, seed));
    }
    expect(() => chooseAtCut('torn', [{ sectors: [] }], 1)).toThrow(/holds no sector/);
    expect(() => chooseAtCut('torn', [{ sectors: [3, 3] }], 1)).toThrow(/strictly ascending/);
  });
});
