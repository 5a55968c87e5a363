import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE, CLEAN_SHUTDOWN_FILE, dumpLog, Log, recoverLog, type AppendResult, type SegmentInfo } from './index.ts';
import { copyDir, makeBatch, removeTmpDirs, tmpDir } from './testing.ts';

afterAll(removeTmpDirs);

const CONFIG = { segmentBytes: 2500, indexIntervalBytes: 300 };

interface Template {
  dir: string;
  results: AppendResult[];
  infos: SegmentInfo[];
  bytes: Map<string, Buffer>;
}

/** A cleanly closed log of several segments; tests damage copies of it. */
function buildTemplate(batches: number, lastValueBytes = 120): Template {
  const dir = tmpDir('durolab-recovery-tmpl-');
  const log = Log.open(dir, CONFIG);
  const results: AppendResult[] = [];
  for (let i = 0; i < batches; i++) {
    results.push(log.append(makeBatch(1000 + i, { records: 1 + (i % 3), valueBytes: i === batches - 1 ? lastValueBytes : 90 + (i % 5) * 20 })));
  }
  log.close();
  const infos = log.segmentInfos();
  const bytes = new Map<string, Buffer>();
  for (const f of fs.readdirSync(dir)) bytes.set(f, fs.readFileSync(path.join(dir, f)));
  return { dir, results, infos, bytes };
}

function copyOf(t: Template): string {
  const d = tmpDir('durolab-recovery-');
  fs.rmSync(d, { recursive: true });
  copyDir(t.dir, d);
  return d;
}

function unclean(dir: string, checkpoint?: number): void {
  fs.rmSync(path.join(dir, CLEAN_SHUTDOWN_FILE), { force: true });
  if (checkpoint !== undefined) fs.writeFileSync(path.join(dir, CHECKPOINT_FILE), `0\n1\n${path.basename(dir)} ${checkpoint}\n`);
}

/** Everything below `end` reads back byte for byte as the template's log files hold it. */
function expectIntactBelow(log: Log, t: Template, end: number): void {
  const orig = Buffer.concat(t.infos.map((s) => t.bytes.get(path.basename(s.logPath))!));
  const got = log.read(0, 1 << 30, end).data;
  const lastBefore = t.results.filter((r) => r.lastOffset < end);
  const expectedBytes = lastBefore.reduce((a, r) => a + r.bytes, 0);
  expect(got.length).toBe(expectedBytes);
  expect(got.equals(orig.subarray(0, expectedBytes))).toBe(true);
}

describe('recovery after an unclean stop', () => {
  let t: Template;
  beforeAll(() => {
    t = buildTemplate(31, 40);
  });

  it('a torn last batch, cut at every byte, is truncated to the previous batch end', () => {
    const last = t.results[t.results.length - 1];
    const prev = t.results[t.results.length - 2];
    const seg = t.infos[t.infos.length - 1];
    expect(last.segmentBaseOffset).toBe(seg.baseOffset);
    const full = t.bytes.get(path.basename(seg.logPath))!;
    expect(full.length).toBe(last.position + last.bytes);
    let zeroCuts = 0;
    for (let k = 0; k < last.bytes; k++) {
      const d = copyOf(t);
      const logPath = path.join(d, path.basename(seg.logPath));
      fs.truncateSync(logPath, last.position + k);
      unclean(d);
      const log = Log.open(d, CONFIG);
      const r = log.recovery;
      const allZero = full.subarray(last.position, last.position + k).every((b) => b === 0);
      if (k > 0 && allZero) zeroCuts++;
      expect({ k, leo: log.logEndOffset, bytes: r.bytesTruncated, batches: r.batchesTruncated, zeros: r.zeroTailBytes }).toEqual({
        k,
        leo: prev.lastOffset + 1,
        bytes: k,
        batches: k > 0 && !allZero ? 1 : 0,
        zeros: allZero ? k : 0,
      });
      expect(r.cleanShutdown).toBe(false);
      expect(r.segmentsScanned).toBe(1);
      expect(r.segmentsDeleted).toBe(0);
      expect(fs.statSync(logPath).size).toBe(last.position);
      if (k === 3) expectIntactBelow(log, t, prev.lastOffset + 1);
      // The log goes on where the torn batch was.
      expect(log.append(makeBatch(7)).baseOffset).toBe(prev.lastOffset + 1);
      log.abandon();
      fs.rmSync(d, { recursive: true });
    }
    // The first bytes of a batch are its big-endian base offset: high zero bytes look like padding.
    expect(zeroCuts).toBeGreaterThan(0);
  });

  it('a corrupted byte in the middle of a segment truncates there and deletes the later segments', () => {
    expect(t.infos.length).toBeGreaterThanOrEqual(4);
    const segIdx = 1;
    const seg = t.infos[segIdx];
    const inSeg = t.results.filter((r) => r.segmentBaseOffset === seg.baseOffset);
    const victim = inSeg[Math.floor(inSeg.length / 2)];
    const d = copyOf(t);
    const logPath = path.join(d, path.basename(seg.logPath));
    const buf = fs.readFileSync(logPath);
    const at = victim.position + Math.floor(victim.bytes / 2);
    buf[at] ^= 0x5a;
    fs.writeFileSync(logPath, buf);
    unclean(d, 0);
    const log = Log.open(d, CONFIG);
    const r = log.recovery;
    expect(log.logEndOffset).toBe(victim.baseOffset);
    const later = t.infos.slice(segIdx + 1);
    expect(r.segmentsDeleted).toBe(later.length);
    for (const s of later) {
      expect(fs.existsSync(path.join(d, path.basename(s.logPath)))).toBe(false);
      expect(fs.existsSync(path.join(d, path.basename(s.indexPath)))).toBe(false);
    }
    const lost = t.results.filter((x) => x.baseOffset >= victim.baseOffset);
    expect(r.batchesTruncated).toBe(lost.length);
    expect(r.bytesTruncated).toBe(lost.reduce((a, x) => a + x.bytes, 0));
    expect(r.truncation?.segmentBaseOffset).toBe(seg.baseOffset);
    expect(r.truncation?.reason).toMatch(/crc-mismatch/);
    expect(r.truncation?.position).toBe(victim.position);
    expect(r.segmentsScanned).toBe(segIdx + 1);
    expectIntactBelow(log, t, victim.baseOffset);
    log.close();
  });

  it('trusts segments below the recovery point (as Kafka does); recoverLog full=true validates them too', () => {
    const seg = t.infos[0];
    const victim = t.results[2];
    const d = copyOf(t);
    const logPath = path.join(d, path.basename(seg.logPath));
    const buf = fs.readFileSync(logPath);
    buf[victim.position + victim.bytes - 5] ^= 0x01;
    fs.writeFileSync(logPath, buf);
    const leo = t.results[t.results.length - 1].lastOffset + 1;
    unclean(d, leo);
    const log = Log.open(d, CONFIG);
    expect(log.recovery.segmentsScanned).toBe(1);
    expect(log.logEndOffset).toBe(leo);
    log.close();
    const report = recoverLog(d, CONFIG, { full: true });
    expect(report.segmentsScanned).toBe(1);
    expect(report.logEndOffset).toBe(victim.baseOffset);
    expect(report.segmentsDeleted).toBe(t.infos.length - 1);
    expect(fs.existsSync(path.join(d, CLEAN_SHUTDOWN_FILE))).toBe(true);
    const again = Log.open(d, CONFIG);
    expect(again.recovery.cleanShutdown).toBe(true);
    expect(again.logEndOffset).toBe(victim.baseOffset);
    again.close();
  });

  it('a garbage tail is cut as a lost batch; a zero-padded tail is cut as padding', () => {
    const seg = t.infos[t.infos.length - 1];
    const leo = t.results[t.results.length - 1].lastOffset + 1;
    const garbage = Buffer.alloc(1000);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 131 + 7) & 0xff || 1;
    const d1 = copyOf(t);
    fs.appendFileSync(path.join(d1, path.basename(seg.logPath)), garbage);
    unclean(d1);
    const l1 = Log.open(d1, CONFIG);
    expect([l1.logEndOffset, l1.recovery.bytesTruncated, l1.recovery.batchesTruncated, l1.recovery.zeroTailBytes]).toEqual([leo, 1000, 1, 0]);
    expect(l1.recovery.truncation?.reason).toMatch(/length-out-of-range|bad-magic|short/);
    l1.close();

    const d2 = copyOf(t);
    fs.appendFileSync(path.join(d2, path.basename(seg.logPath)), Buffer.alloc(4096));
    unclean(d2);
    const l2 = Log.open(d2, CONFIG);
    expect([l2.logEndOffset, l2.recovery.bytesTruncated, l2.recovery.batchesTruncated, l2.recovery.zeroTailBytes]).toEqual([leo, 4096, 0, 4096]);
    expect(l2.recovery.truncation).toBeUndefined();
    expect(fs.statSync(path.join(d2, path.basename(seg.logPath))).size).toBe(seg.sizeBytes);
    l2.close();
  });

  it('zero padding after a middle segment is cut without deleting the segments that continue it', () => {
    const d = copyOf(t);
    fs.appendFileSync(path.join(d, path.basename(t.infos[1].logPath)), Buffer.alloc(3000));
    unclean(d, 0);
    const log = Log.open(d, CONFIG);
    expect(log.recovery.segmentsDeleted).toBe(0);
    expect(log.recovery.zeroTailBytes).toBe(3000);
    expect(log.recovery.segmentsScanned).toBe(t.infos.length);
    expect(log.recovery.batchesValidated).toBe(t.results.length);
    expect(log.logEndOffset).toBe(t.results[t.results.length - 1].lastOffset + 1);
    expectIntactBelow(log, t, log.logEndOffset);
    log.close();
  });

  it('recovery moves the recovery point to the new end and the next clean open trusts it', () => {
    const d = copyOf(t);
    unclean(d, 0);
    const log = Log.open(d, CONFIG);
    expect(log.recovery.recoveryPoint).toBe(0);
    expect(log.recoveryPoint).toBe(log.logEndOffset);
    expect(fs.readFileSync(path.join(d, CHECKPOINT_FILE), 'utf8')).toContain(` ${log.logEndOffset}\n`);
    // A second crash right away: nothing left to validate past the checkpoint but the last segment.
    const d2 = copyOf({ ...t, dir: d });
    unclean(d2);
    const again = Log.open(d2, CONFIG);
    expect(again.recovery.segmentsScanned).toBe(1);
    again.close();
    log.close();
  });
});

describe('index files and the directory', () => {
  let t: Template;
  beforeAll(() => {
    t = buildTemplate(40);
  });

  const cases: Array<[string, (d: string, s: SegmentInfo) => void]> = [
    ['index size not a multiple of 8', (d, s) => fs.appendFileSync(path.join(d, path.basename(s.indexPath)), Buffer.from([1, 2, 3]))],
    ['index entries out of order', (d, s) => {
      const p = path.join(d, path.basename(s.indexPath));
      const b = fs.readFileSync(p);
      const e0 = Buffer.from(b.subarray(0, 8));
      b.copy(b, 0, 8, 16);
      e0.copy(b, 8);
      fs.writeFileSync(p, b);
    }],
    ['index position beyond the log', (d, s) => {
      const p = path.join(d, path.basename(s.indexPath));
      const b = fs.readFileSync(p);
      b.writeInt32BE(1_000_000, b.length - 4);
      fs.writeFileSync(p, b);
    }],
    ['index entry not at a batch start', (d, s) => {
      const p = path.join(d, path.basename(s.indexPath));
      const b = fs.readFileSync(p);
      b.writeInt32BE(b.readInt32BE(b.length - 4) + 1, b.length - 4);
      fs.writeFileSync(p, b);
    }],
    ['index entry with the wrong offset', (d, s) => {
      const p = path.join(d, path.basename(s.indexPath));
      const b = fs.readFileSync(p);
      b.writeInt32BE(b.readInt32BE(b.length - 8) + 1, b.length - 8);
      fs.writeFileSync(p, b);
    }],
    ['index truncated to nothing and time index missing', (d, s) => {
      fs.truncateSync(path.join(d, path.basename(s.indexPath)), 0);
      fs.rmSync(path.join(d, path.basename(s.timeIndexPath)));
    }],
    ['time index out of order', (d, s) => {
      const p = path.join(d, path.basename(s.timeIndexPath));
      const b = fs.readFileSync(p);
      b.writeBigInt64BE(0n, b.length - 12);
      fs.writeFileSync(p, b);
    }],
    ['time index pointing past the segment', (d, s) => {
      const p = path.join(d, path.basename(s.timeIndexPath));
      const b = fs.readFileSync(p);
      b.writeInt32BE(100_000, b.length - 4);
      fs.writeFileSync(p, b);
    }],
  ];

  for (const [name, damage] of cases) {
    it(`rebuilds on a clean open: ${name}`, () => {
      for (const segIdx of [0, t.infos.length - 1]) {
        const s = t.infos[segIdx];
        expect(fs.readFileSync(path.join(t.dir, path.basename(s.indexPath))).length).toBeGreaterThanOrEqual(16);
        expect(fs.readFileSync(path.join(t.dir, path.basename(s.timeIndexPath))).length).toBeGreaterThanOrEqual(12);
        const d = copyOf(t);
        damage(d, s);
        const log = Log.open(d, CONFIG);
        expect(log.recovery.cleanShutdown).toBe(true);
        expect(log.recovery.indexesRebuilt).toBe(2);
        expect(log.recovery.bytesTruncated).toBe(0);
        for (const r of t.results) expect(log.read(r.lastOffset, 1).firstOffset).toBe(r.baseOffset);
        log.close();
        // The rebuilt files are the ones the appends wrote.
        for (const f of [s.indexPath, s.timeIndexPath]) {
          const name = path.basename(f);
          expect([name, fs.readFileSync(path.join(d, name)).equals(t.bytes.get(name)!)]).toEqual([name, true]);
        }
        fs.rmSync(d, { recursive: true });
      }
    });
  }

  it('reports stray files and keeps them; removes orphan index files', () => {
    const d = copyOf(t);
    fs.writeFileSync(path.join(d, 'notes.txt'), 'keep me');
    fs.writeFileSync(path.join(d, '00000000000000000005.log.swp'), 'x');
    fs.mkdirSync(path.join(d, 'junk'));
    fs.writeFileSync(path.join(d, '00000000000000099999.index'), Buffer.alloc(16));
    fs.writeFileSync(path.join(d, '00000000000000099999.timeindex'), Buffer.alloc(12));
    const log = Log.open(d, CONFIG);
    expect(log.recovery.strayFiles).toEqual(['00000000000000000005.log.swp', 'junk', 'notes.txt']);
    expect(log.recovery.deletedFiles).toEqual(['00000000000000099999.index', '00000000000000099999.timeindex']);
    log.append(makeBatch(1));
    log.close();
    expect(fs.readFileSync(path.join(d, 'notes.txt'), 'utf8')).toBe('keep me');
    expect(fs.existsSync(path.join(d, '00000000000000000005.log.swp'))).toBe(true);
    expect(fs.statSync(path.join(d, 'junk')).isDirectory()).toBe(true);
    expect(fs.existsSync(path.join(d, '00000000000000099999.index'))).toBe(false);
  });

  it('a missing or unreadable checkpoint makes an unclean open recover from offset 0', () => {
    const d = copyOf(t);
    unclean(d);
    fs.writeFileSync(path.join(d, CHECKPOINT_FILE), 'garbage');
    const log = Log.open(d, CONFIG);
    expect(log.recovery.recoveryPoint).toBe(0);
    expect(log.recovery.segmentsScanned).toBe(t.infos.length);
    log.close();
  });

  it('dumpLog reports batches, CRC failures, index entries and where a damaged log stops, without throwing', () => {
    const d = copyOf(t);
    const s0 = t.infos[0];
    const victim = t.results[1];
    const p0 = path.join(d, path.basename(s0.logPath));
    const b = fs.readFileSync(p0);
    b[victim.position + victim.bytes - 2] ^= 0xff;
    fs.writeFileSync(p0, b);
    const last = t.infos[t.infos.length - 1];
    fs.appendFileSync(path.join(d, path.basename(last.logPath)), Buffer.from('not a batch at all, just text'));
    fs.appendFileSync(path.join(d, path.basename(s0.indexPath)), Buffer.from([9]));
    const dump = dumpLog(d);
    expect(dump.segments.length).toBe(t.infos.length);
    expect(dump.cleanShutdownMarker).toBe(true);
    expect(dump.recoveryPointCheckpoint).toBe(t.results[t.results.length - 1].lastOffset + 1);
    const seg0 = dump.segments[0];
    expect(seg0.batches.map((x) => x.crcValid)).toEqual(seg0.batches.map((_, i) => i !== 1));
    expect(seg0.batches[1]).toMatchObject({ baseOffset: victim.baseOffset, lastOffset: victim.lastOffset, position: victim.position, size: victim.bytes, records: victim.records });
    expect(seg0.index.problem).toMatch(/multiple of 8/);
    expect(seg0.stoppedAt).toBeNull();
    const dl = dump.segments[dump.segments.length - 1];
    expect(dl.stoppedAt?.position).toBe(last.sizeBytes);
    expect(dl.index.entries.length).toBe(last.indexEntries);
    expect(dl.timeIndex.problem).toBeNull();
    expect(dump.segments.reduce((a, s) => a + s.batches.length, 0)).toBe(t.results.length);
  });
});
