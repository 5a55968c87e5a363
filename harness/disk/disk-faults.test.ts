// Injected EIO and latency of the NBD disk: which request each rule fails (nth write once or
// sticky, nth flush, a sector range, the nth data write outside the journal of a real ext4
// image, found with debugfs), and the delay a request waits (fixed, seeded jitter, stalls).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileDisk } from '../vm/disk.ts';
import { DiskFaults } from './disk-faults.ts';
import { DEFAULT_DISK_SPEC } from '../model/disk-spec.ts';
import { journalSectorRanges } from './ext4-journal.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-disk-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const noLatency = DEFAULT_DISK_SPEC.latency;

describe('DiskFaults', () => {
  it('fails the nth write once, from the nth on when sticky, the nth flush, and a sector range', () => {
    const once = new DiskFaults([{ on: 'write', nth: 3, sticky: false }], noLatency, 1);
    expect([1, 2, 3, 4, 5].map(() => once.writeFails(0, 512))).toEqual([false, false, true, false, false]);
    const sticky = new DiskFaults([{ on: 'write', nth: 2, sticky: true }], noLatency, 1);
    expect([1, 2, 3].map(() => sticky.writeFails(0, 512))).toEqual([false, true, true]);
    const flush = new DiskFaults([{ on: 'flush', nth: 2, sticky: false }], noLatency, 1);
    expect([flush.flushFails(), flush.flushFails(), flush.flushFails()]).toEqual([false, true, false]);
    const range = new DiskFaults([{ on: 'sectors', from: 10, to: 11, sticky: true }], noLatency, 1);
    expect([range.writeFails(9 * 512, 512), range.writeFails(11 * 512, 1024), range.writeFails(12 * 512, 512), range.writeFails(4608, 1024)]).toEqual([false, true, false, true]);
    expect(range.injected.map((e) => e.offset)).toEqual([11 * 512, 4608]);
  });

  it("counts data writes outside a real ext4 image's journal and at least minBytes long", async () => {
    const disk = await createFileDisk(path.join(dir, 'fs.img'), 64);
    const journal = await journalSectorRanges(disk.path);
    expect(journal.length).toBeGreaterThan(0);
    const [jFrom, jTo] = journal[0]!;
    expect(jTo - jFrom + 1).toBeGreaterThanOrEqual(2048);
    const f = new DiskFaults([{ on: 'data-write', nth: 2, minBytes: 8192, sticky: false }], noLatency, 1);
    f.journalSectors = journal;
    const outside = jTo + 1 + 1000;
    expect(f.writeFails(jFrom * 512, 16384)).toBe(false); // journal
    expect(f.writeFails(outside * 512, 4096)).toBe(false); // too small
    expect(f.writeFails(outside * 512, 16384)).toBe(false); // data write 1
    expect(f.writeFails(jFrom * 512 + 8192, 16384)).toBe(false); // journal
    expect(f.writeFails(outside * 512, 16384)).toBe(true); // data write 2
    expect(f.writeFails(outside * 512, 16384)).toBe(false);
  });

  it('delays requests by the fixed time plus seeded jitter, and holds them through a stall', async () => {
    const a = new DiskFaults([], { perOpUs: 2000, jitterUs: 1000, stallEveryMs: 0, stallForMs: 0 }, 9);
    const b = new DiskFaults([], { perOpUs: 2000, jitterUs: 1000, stallEveryMs: 0, stallForMs: 0 }, 9);
    const da = [a.delayMs(), a.delayMs(), a.delayMs()];
    expect(da).toEqual([b.delayMs(), b.delayMs(), b.delayMs()]);
    for (const d of da) expect(d >= 2 && d <= 3).toBe(true);
    const s = new DiskFaults([], { perOpUs: 0, jitterUs: 0, stallEveryMs: 200, stallForMs: 150 }, 1);
    expect(s.delayMs()).toBe(0);
    await new Promise((r) => setTimeout(r, 80));
    const inStall = s.delayMs();
    expect(inStall).toBeGreaterThan(50);
    expect(inStall).toBeLessThanOrEqual(150);
  });
});
