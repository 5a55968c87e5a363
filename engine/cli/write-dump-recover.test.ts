import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatDump, runDump } from './dump-command.ts';
import { formatRecovery, runRecover } from './recover-command.ts';
import { formatWrite, runWrite } from './write-command.ts';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-engine-cli-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function flipByte(file: string, position: number): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, position);
    b[0] ^= 0xff;
    fs.writeSync(fd, b, 0, 1, position);
  } finally {
    fs.closeSync(fd);
  }
}

describe('engine write', () => {
  it('appends every record in batches and reports what it did', () => {
    const dir = path.join(tmp, 'p');
    const r = runWrite({ dir, records: 1000, recordBytes: 200, batchRecords: 64, flush: 'per-batch' });
    expect(r.records).toBe(1000);
    expect(r.batches).toBe(16); // 15 full batches of 64 and one of 40
    expect(r.logEndOffset).toBe(1000);
    expect(r.flushes).toBe(16);
    expect(r.appendLatencyUs.count).toBe(16);
    expect(r.appendLatencyUs.p50).toBeGreaterThan(0);
    expect(r.bytes).toBe(fs.statSync(path.join(dir, '00000000000000000000.log')).size);
    expect(r.mbPerSec).toBeGreaterThan(0);
    expect(r.recovered).toBe(false);
    expect(r.config).toMatchObject({ io: 'buffered', flush: 'per-batch', sync: 'fdatasync' });
    const text = formatWrite(r);
    expect(text).toContain('wrote 1,000 records in 16 batches');
    expect(text).toMatch(/append latency µs: p50 \d+ {2}p99 \d+ {2}p99\.9 \d+/);
  });

  it('rolls segments at --segment-bytes and writes through O_DIRECT', () => {
    const dir = path.join(tmp, 'p');
    const r = runWrite({ dir, records: 400, recordBytes: 1000, batchRecords: 20, io: 'direct', segmentBytes: 64 * 1024 });
    expect(r.segments).toBeGreaterThan(3);
    expect(r.rolls).toBe(r.segments - 1);
    const dump = runDump({ dir });
    expect(dump.totals.records).toBe(400);
    expect(dump.totals.invalidBatches).toBe(0);
    // O_DIRECT pads the last block; a clean close cuts every .log back to whole batches.
    for (const s of dump.segments) expect(s.stoppedAt).toBeNull();
  });

  it('reports the recovery that open() ran on a log cut mid-batch', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 100, recordBytes: 100, batchRecords: 10 });
    const log = path.join(dir, '00000000000000000000.log');
    fs.truncateSync(log, fs.statSync(log).size - 50);
    fs.rmSync(path.join(dir, '.kafka_cleanshutdown'));
    const r = runWrite({ dir, records: 10, recordBytes: 100, batchRecords: 10 });
    expect(r.recovered).toBe(true);
    expect(r.openReport.batchesTruncated).toBe(1);
    expect(r.logEndOffset).toBe(100); // 90 survived, 10 appended
    expect(formatWrite(r)).toContain('open() recovered the log');
  });
});

describe('engine dump', () => {
  it('shows every batch with a valid CRC, producer fields and index entries', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 500, recordBytes: 300, batchRecords: 25, producerId: 77 });
    const d = runDump({ dir });
    expect(d.segments).toHaveLength(1);
    const s = d.segments[0];
    expect(s.batches).toHaveLength(20);
    expect(s.batches.every((b) => b.crcValid)).toBe(true);
    expect(s.batches.map((b) => b.baseOffset)).toEqual(Array.from({ length: 20 }, (_, i) => i * 25));
    expect(s.batches[3]).toMatchObject({ producerId: 77, producerEpoch: 0, baseSequence: 75, lastOffset: 99, records: 25 });
    expect(s.batches[1].position).toBe(s.batches[0].size);
    expect(s.stoppedAt).toBeNull();
    expect(s.index.entries.length).toBeGreaterThan(0);
    expect(s.index.problem).toBeNull();
    expect(d.cleanShutdownMarker).toBe(true);
    const text = formatDump(d, { index: true });
    expect(text).toContain('baseOffset: 75 lastOffset: 99 count: 25 position:');
    expect(text).toContain('producerId: 77');
    expect(text).toMatch(/\n {2}offset: \d+ position: \d+/);
    expect(text).toContain('scan reached the end');
    const brief = formatDump(d, { records: false });
    expect(brief).not.toContain('baseOffset:');
  });

  it('marks a batch whose payload byte flipped as crcValid false and goes on', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 100, recordBytes: 100, batchRecords: 10 });
    const before = runDump({ dir }).segments[0].batches;
    flipByte(path.join(dir, '00000000000000000000.log'), before[4].position + 100);
    const s = runDump({ dir }).segments[0];
    expect(s.batches).toHaveLength(10);
    expect(s.batches.filter((b) => !b.crcValid).map((b) => b.baseOffset)).toEqual([40]);
    expect(s.invalidBatches).toBe(1);
  });

  it('stops at a corrupt length field and says where and why, without throwing', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 100, recordBytes: 100, batchRecords: 10 });
    const logFile = path.join(dir, '00000000000000000000.log');
    const at = runDump({ dir }).segments[0].batches[6].position;
    flipByte(logFile, at + 8); // high byte of the length: a negative length
    const d = runDump({ dir });
    const s = d.segments[0];
    expect(s.batches).toHaveLength(6);
    expect(s.stoppedAt?.position).toBe(at);
    expect(s.stoppedAt?.reason).toMatch(/length-out-of-range/);
    expect(d.totals.stoppedSegments).toBe(1);
    expect(formatDump(d)).toContain(`scan stopped at position ${at} of`);
  });

  it('names the flag when the directory does not exist', () => {
    expect(() => runDump({ dir: path.join(tmp, 'nope') })).toThrow(/--dir .*nope: no such directory/);
  });
});

describe('engine recover', () => {
  it('reports the truncation at the first corrupt batch', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 100, recordBytes: 100, batchRecords: 10 });
    const logFile = path.join(dir, '00000000000000000000.log');
    const batches = runDump({ dir }).segments[0].batches;
    flipByte(logFile, batches[7].position + 70);
    const r = runRecover({ dir });
    expect(r.segmentsScanned).toBe(1);
    expect(r.batchesTruncated).toBe(3);
    expect(r.bytesTruncated).toBe(batches.slice(7).reduce((a, b) => a + b.size, 0));
    expect(r.logEndOffset).toBe(70);
    expect(r.truncation?.reason).toMatch(/crc-mismatch/);
    expect(r.truncation?.segmentBaseOffset).toBe(0);
    const text = formatRecovery(r);
    expect(text).toContain('truncated at segment 0, position');
    expect(text).toContain('and 3 batch(es)');
    // After recovery the dump is clean and shorter.
    const after = runDump({ dir });
    expect(after.totals.batches).toBe(7);
    expect(after.totals.invalidBatches).toBe(0);
  });

  it('reports nothing to truncate on a clean log', () => {
    const dir = path.join(tmp, 'p');
    runWrite({ dir, records: 50, recordBytes: 10, batchRecords: 5 });
    const r = runRecover({ dir, full: true });
    expect(r.batchesValidated).toBe(10);
    expect(r.bytesTruncated).toBe(0);
    expect(r.truncation).toBeUndefined();
    expect(formatRecovery(r)).toContain('no truncation');
  });
});
