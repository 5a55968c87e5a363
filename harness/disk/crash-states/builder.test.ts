// The crash-state builder on hand-made write logs over a small raw image: which writes are
// durable at a crash point (the flushed prefix, FUA), what each onCut policy keeps of the
// unflushed rest (subset at 4 KiB runs, reorder, torn at 512-byte sectors), TRIM, and
// overlapping writes ending in log order. Real files: the log goes through WriteLogWriter and
// readWriteLog, the states are sparse copies written with pwrite.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WriteLogWriter, readWriteLog, requireComplete, type WriteLogEntry, type WriteLogRecord } from '../write-log.ts';
import { chooseCrashPoints, planAtPoints, planCrashStates, pointTime, type CrashPoint, type OnCutPolicy } from './plan.ts';
import { RunningImage } from './materialise.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-crash-builder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const IMAGE_BYTES = 64 * 1024;
const base = path.join(dir, 'base.img');
writeFileSync(base, Buffer.alloc(IMAGE_BYTES, 0x00));

let clock = 1_000_000;
const w = (offset: number, length: number, fill: number, fua = false): WriteLogEntry => {
  const data = Buffer.alloc(length, fill);
  // Each sector says which sector of the write it is, so torn pieces are recognisable.
  for (let s = 0; s * 512 < length; s++) data[s * 512] = s;
  return { op: 'write', fua, submitUs: clock++, completeUs: clock++, offset, length, data };
};
const flush = (): WriteLogEntry => ({ op: 'flush', fua: false, submitUs: clock++, completeUs: clock++, offset: 0, length: 0, data: null });
const trim = (offset: number, length: number): WriteLogEntry => ({ op: 'trim', fua: false, submitUs: clock++, completeUs: clock++, offset, length, data: null });

function logOf(name: string, entries: WriteLogEntry[]): WriteLogRecord[] {
  const file = path.join(dir, `${name}.wlog`);
  const writer = new WriteLogWriter(file, 1 << 24);
  for (const e of entries) writer.append(e);
  writer.close();
  return requireComplete(readWriteLog(file));
}

const at = (records: WriteLogRecord[], position: number): CrashPoint => ({ position, kind: 'spread', timeUs: pointTime(records, position, records[records.length - 1]!.completeUs) });

async function stateAt(records: WriteLogRecord[], position: number, policy: OnCutPolicy, seed = 1): Promise<{ image: Buffer; plan: ReturnType<typeof planAtPoints>[number] }> {
  const [plan] = planAtPoints(records, [at(records, position)], { policy, seed });
  const running = await RunningImage.create(base, path.join(dir, `running-${position}-${policy}-${seed}.img`), records);
  const out = path.join(dir, `state-${position}-${policy}-${seed}.img`);
  try {
    await running.materialise(plan!, out);
  } finally {
    running.close();
  }
  return { image: readFileSync(out), plan: plan! };
}

/** The fill byte of sector 1 of each 4 KiB block (sector 0 of a write holds its sector number). */
const blockFill = (img: Buffer, block: number) => img[block * 4096 + 1];
const sectorByte = (img: Buffer, sector: number) => img[sector * 512 + 1];

describe('crash-state builder', () => {
  // w0 @0 (0xa1), w1 @4K (0xa2), FLUSH, w2 @8K (0xa3), w3 FUA @12K (0xa4), w4 @16K (0xa5), FLUSH, w5 @20K 8 KiB (0xa6)
  const records = logOf('prefix', [w(0, 4096, 0xa1), w(4096, 4096, 0xa2), flush(), w(8192, 4096, 0xa3), w(12288, 4096, 0xa4, true), w(16384, 4096, 0xa5), flush(), w(20480, 8192, 0xa6)]);

  it('drop-unflushed: the state holds the writes completed before the last FLUSH and nothing after it', async () => {
    const before = await stateAt(records, 2, 'drop-unflushed'); // FLUSH not completed yet
    expect([0, 1].map((b) => blockFill(before.image, b))).toEqual([0, 0]);
    expect(before.plan).toMatchObject({ durableWrites: 0, unflushedWrites: 2, flushRecord: -1, epoch: 0 });
    const after = await stateAt(records, 3, 'drop-unflushed'); // FLUSH completed
    expect([0, 1].map((b) => blockFill(after.image, b))).toEqual([0xa1, 0xa2]);
    expect(after.plan).toMatchObject({ durableWrites: 2, unflushedWrites: 0, flushRecord: 2, epoch: 1 });
    const later = await stateAt(records, 6, 'drop-unflushed'); // w2..w4 completed, second FLUSH not
    expect([0, 1, 2, 3, 4].map((b) => blockFill(later.image, b))).toEqual([0xa1, 0xa2, 0, 0xa4, 0]);
    expect(later.plan.kept).toEqual([]);
  });

  it('FUA: a FUA write is durable as soon as it completes, without a FLUSH', async () => {
    const s = await stateAt(records, 5, 'drop-unflushed');
    expect(blockFill(s.image, 3)).toBe(0xa4);
    expect(blockFill(s.image, 2)).toBe(0);
    expect(s.plan.durable).toEqual([0, 1, 4]);
    const end = await stateAt(records, records.length, 'drop-unflushed');
    expect([0, 1, 2, 3, 4, 5, 6].map((b) => blockFill(end.image, b))).toEqual([0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0, 0]);
  });

  it('random-subset: a seeded subset of the unflushed 4 KiB runs, the same for the same seed', async () => {
    const big = logOf('subset', [w(0, 4096, 0xb0), flush(), w(4096, 32768, 0xb1), w(40960, 16384, 0xb2)]);
    const seen = new Set<string>();
    for (let seed = 1; seed <= 12; seed++) {
      const s = await stateAt(big, big.length, 'random-subset', seed);
      expect(blockFill(s.image, 0)).toBe(0xb0);
      const blocks = Array.from({ length: 12 }, (_, i) => blockFill(s.image, i + 1));
      // Every block is either its write's byte or untouched, whole 4 KiB runs only.
      blocks.forEach((b, i) => expect([0, i < 8 ? 0xb1 : 0xb2]).toContain(b));
      // Whole 4 KiB runs: the 8 sectors of a block all hold the same fill.
      for (let blk = 1; blk <= 12; blk++) {
        const fills = Array.from({ length: 8 }, (_, k) => sectorByte(s.image, blk * 8 + k));
        expect(new Set(fills).size).toBe(1);
      }
      seen.add(blocks.join(','));
      const again = await stateAt(big, big.length, 'random-subset', seed);
      expect(again.image.equals(s.image)).toBe(true);
    }
    expect(seen.size).toBeGreaterThan(3);
  });

  it('reorder: an earlier unflushed write is dropped while every later one persists', async () => {
    const log = logOf('reorder', [flush(), w(0, 4096, 0xc1), w(4096, 4096, 0xc2), w(8192, 4096, 0xc3)]);
    for (let seed = 1; seed <= 6; seed++) {
      const s = await stateAt(log, log.length, 'reorder', seed);
      const blocks = [0, 1, 2].map((b) => blockFill(s.image, b));
      const dropped = blocks.lastIndexOf(0);
      expect(dropped).toBeGreaterThanOrEqual(0);
      expect(dropped).toBeLessThan(2);
      expect(blocks.slice(dropped + 1).every((b) => b !== 0)).toBe(true);
      expect(blocks.slice(0, dropped).every((b) => b === 0)).toBe(true);
      expect(s.plan.policyApplied).toBe(true);
    }
    const one = logOf('reorder-one', [flush(), w(0, 4096, 0xc1)]);
    expect((await stateAt(one, one.length, 'reorder')).plan.policyApplied).toBe(false);
  });

  it('torn: one unflushed write persists only a prefix of its 512-byte sectors, earlier ones whole, later ones not', async () => {
    const log = logOf('torn', [w(0, 512, 0xd0), flush(), w(4096, 4096, 0xd1), w(8192, 8192, 0xd2), w(16384, 4096, 0xd3)]);
    let partial = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const s = await stateAt(log, log.length, 'torn', seed);
      const torn = s.plan.kept[s.plan.kept.length - 1]!;
      expect(torn.sectors).not.toBeNull();
      const rec = log[torn.record]!;
      const n = rec.length / 512;
      expect(torn.sectors!.length).toBeGreaterThan(0);
      expect(torn.sectors!.length).toBeLessThan(n);
      // A prefix of its sectors (as the live disk tears a write: on-cut.ts).
      expect(torn.sectors).toEqual(Array.from({ length: torn.sectors!.length }, (_, k) => k));
      const firstSector = rec.offset / 512;
      for (let k = 0; k < n; k++) {
        const expected = torn.sectors!.includes(k) ? rec.data![1] : 0;
        expect(sectorByte(s.image, firstSector + k)).toBe(expected);
      }
      // Writes after the torn one are lost; the ones before it are whole.
      for (const later of log.slice(torn.record + 1)) if (later.op === 'write') expect(blockFill(s.image, later.offset / 4096)).toBe(0);
      for (const earlier of s.plan.kept.slice(0, -1)) expect(earlier.sectors).toBeNull();
      partial++;
    }
    expect(partial).toBe(10);
  });

  it('TRIM reads back as zeroes once durable; not before its FLUSH', async () => {
    const log = logOf('trim', [w(0, 8192, 0xe1), flush(), trim(0, 4096), flush()]);
    const beforeFlush = await stateAt(log, 3, 'drop-unflushed');
    expect(blockFill(beforeFlush.image, 0)).toBe(0xe1);
    const after = await stateAt(log, 4, 'drop-unflushed');
    expect(blockFill(after.image, 0)).toBe(0);
    expect(blockFill(after.image, 1)).toBe(0xe1);
  });

  it('overlapping writes end in log order even when a flushed write follows a kept unflushed one', async () => {
    // w0 completes after the FLUSH was sent, so only w1 (completed before) is covered by it.
    const t = clock;
    const entries: WriteLogEntry[] = [
      { ...w(0, 4096, 0xf1), submitUs: t, completeUs: t + 50 },
      { ...w(0, 4096, 0xf2), submitUs: t + 1, completeUs: t + 5 },
      { op: 'flush', fua: false, submitUs: t + 10, completeUs: t + 60, offset: 0, length: 0, data: null },
    ];
    clock = t + 100;
    const log = logOf('overlap', entries);
    const [plan] = planAtPoints(log, [at(log, 3)], { policy: 'random-subset', seed: 3 });
    expect(plan!.durable).toEqual([1]);
    const running = await RunningImage.create(base, path.join(dir, 'running-overlap.img'), log);
    const keptAll = { ...plan!, kept: [{ record: 0, sectors: null }] };
    await running.materialise(keptAll, path.join(dir, 'overlap.img'));
    running.close();
    // w0 (kept) was written before w1 in the log: w1's content wins.
    expect(blockFill(readFileSync(path.join(dir, 'overlap.img')), 0)).toBe(0xf2);
    // A recorder with observed times (blklogwrites): the FLUSH covers everything before it in the log.
    const [byLog] = planAtPoints(log, [at(log, 3)], { policy: 'drop-unflushed', seed: 3, flushCovers: 'earlier-in-log' });
    expect(byLog!.durable).toEqual([0, 1]);
    expect(byLog!.unflushedWrites).toBe(0);
  });

  it('chooses distinct crash points spread over the log, around FLUSHes and at the end, reproducibly', () => {
    const entries: WriteLogEntry[] = [];
    for (let i = 0; i < 400; i++) entries.push(i % 10 === 9 ? flush() : w((i % 16) * 4096, 4096, i & 0xff));
    const log = logOf('points', entries);
    const pts = chooseCrashPoints(log, { states: 100, seed: 7 });
    expect(pts).toHaveLength(100);
    expect(new Set(pts.map((p) => `${p.position}:${p.timeUs}`)).size).toBe(100);
    expect(pts[pts.length - 1]).toMatchObject({ position: 400, kind: 'end' });
    const kinds = new Set(pts.map((p) => p.kind));
    expect([...kinds].sort()).toEqual(['after-flush', 'before-flush', 'end', 'spread']);
    expect(pts.filter((p) => p.kind !== 'spread' && p.kind !== 'end').length).toBeLessThanOrEqual(50);
    // Spread over the whole log: points in every quarter.
    for (let q = 0; q < 4; q++) expect(pts.some((p) => p.position >= q * 100 && p.position < (q + 1) * 100)).toBe(true);
    expect(chooseCrashPoints(log, { states: 100, seed: 7 })).toEqual(pts);
    for (const p of pts.filter((x) => x.kind === 'before-flush')) expect(log[p.position]!.op).toBe('flush');
    // A spread point's instant lies within the interval of its disk state.
    for (const p of pts.filter((x) => x.kind === 'spread')) {
      if (p.position > 0) expect(p.timeUs).toBeGreaterThanOrEqual(log[p.position - 1]!.completeUs);
      if (p.position < log.length) expect(p.timeUs).toBeLessThan(log[p.position]!.completeUs);
    }
    // A log of few requests still yields the states asked for: several instants share a disk state.
    const short = logOf('short', [w(0, 4096, 1), flush(), w(4096, 4096, 2)]);
    const many = planCrashStates(short, { states: 40, seed: 3, policy: 'drop-unflushed', endUs: short[2]!.completeUs + 10_000 });
    expect(many).toHaveLength(40);
    expect(new Set(many.map((p) => p.point.position)).size).toBeLessThanOrEqual(4);
    expect(() => chooseCrashPoints(log, { states: 0, seed: 1 })).toThrow(/states must be an integer >= 1/);
  });
  it('a FLUSH or FUA the drive acknowledged without persisting (notHonoured) is no durability point', async () => {
    const lie = (e: WriteLogEntry): WriteLogEntry => ({ ...e, notHonoured: true });
    // w0 @0 (0xb1), lying FLUSH, w1 lying FUA @4K (0xb2), honest FLUSH, w2 @8K (0xb3), lying FLUSH, w3 @12K (0xb4)
    const lying = logOf('lying', [w(0, 4096, 0xb1), lie(flush()), lie(w(4096, 4096, 0xb2, true)), flush(), w(8192, 4096, 0xb3), lie(flush()), w(12288, 4096, 0xb4)]);
    expect(lying.map((r) => Boolean(r.notHonoured))).toEqual([false, true, true, false, false, true, false]);
    // After the lying FLUSH and the lying FUA write: nothing is durable.
    const early = await stateAt(lying, 3, 'drop-unflushed');
    expect(early.plan).toMatchObject({ flushRecord: -1, epoch: 0, durableWrites: 0, unflushedWrites: 2 });
    expect([blockFill(early.image, 0), blockFill(early.image, 1)]).toEqual([0, 0]);
    // The honest FLUSH makes w0 and the FUA write durable; the later lying FLUSH adds nothing.
    const end = await stateAt(lying, lying.length, 'drop-unflushed');
    expect(end.plan).toMatchObject({ flushRecord: 3, epoch: 1, durableWrites: 2, unflushedWrites: 2 });
    expect([0, 1, 2, 3].map((b) => blockFill(end.image, b))).toEqual([0xb1, 0xb2, 0, 0]);
    // The same log with every FLUSH and FUA honoured: w2 becomes durable at the last FLUSH.
    const honest = logOf('honest', lying.map(({ seq: _s, fileOffset: _f, notHonoured: _n, ...e }) => e));
    const endHonest = await stateAt(honest, honest.length, 'drop-unflushed');
    expect(endHonest.plan).toMatchObject({ flushRecord: 5, epoch: 3, durableWrites: 3, unflushedWrites: 1 });
    expect([0, 1, 2, 3].map((b) => blockFill(endHonest.image, b))).toEqual([0xb1, 0xb2, 0xb3, 0]);
  });
});
