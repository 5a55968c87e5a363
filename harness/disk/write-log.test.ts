// The write log round-trips every op with its timestamps and data, refuses to grow past its
// limit without losing what it holds, and a log cut at any byte (a harness killed mid-record)
// or with a flipped byte reads back its valid prefix and names the file and offset.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostClockUs } from '../../engine/common/clock.ts';
import {
  RECORD_HEAD_BYTES,
  WRITE_LOG_HEADER_BYTES,
  WriteLogCorruptError,
  WriteLogFullError,
  WriteLogWriter,
  readWriteLog,
  requireComplete,
  type WriteLogEntry,
} from './write-log.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-write-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function entries(): WriteLogEntry[] {
  const t = hostClockUs();
  const data = Buffer.alloc(4096, 0xab);
  data.write('hello', 100);
  return [
    { op: 'write', fua: false, submitUs: t, completeUs: t + 5, offset: 1 << 20, length: 4096, data },
    { op: 'flush', fua: false, submitUs: t + 6, completeUs: t + 90, offset: 0, length: 0, data: null },
    { op: 'write', fua: true, submitUs: t + 91, completeUs: t + 99, offset: 3 * 2 ** 32, length: 512, data: Buffer.alloc(512, 7) },
    { op: 'trim', fua: false, submitUs: t + 100, completeUs: t + 101, offset: 8192, length: 65536, data: null },
    { op: 'write-zeroes', fua: false, submitUs: t + 102, completeUs: t + 103, offset: 0, length: 1024, data: null },
  ];
}

describe('write log', () => {
  it('round-trips writes (data, FUA, offsets past 4 GiB), flushes, trims, in order with their host-clock times', () => {
    const file = path.join(dir, 'roundtrip.wlog');
    const w = new WriteLogWriter(file, 1 << 20);
    const es = entries();
    expect(es.map((e) => w.append(e))).toEqual([0, 1, 2, 3, 4]);
    w.close();
    const log = readWriteLog(file);
    expect(log.truncated).toBeNull();
    const recs = requireComplete(log);
    expect(recs.map((r) => ({ op: r.op, fua: r.fua, submitUs: r.submitUs, completeUs: r.completeUs, offset: r.offset, length: r.length }))).toEqual(
      es.map((e) => ({ op: e.op, fua: e.fua, submitUs: e.submitUs, completeUs: e.completeUs, offset: e.offset, length: e.length })),
    );
    expect(recs[0].data!.equals(es[0].data!)).toBe(true);
    expect(recs[2].data!.equals(es[2].data!)).toBe(true);
    expect(recs[1].data).toBeNull();
    expect(recs.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(w.sizeBytes).toBe(readFileSync(file).length);
  });

  it('refuses a record over the limit with a clear error and keeps every earlier record', () => {
    const file = path.join(dir, 'full.wlog');
    const limit = WRITE_LOG_HEADER_BYTES + 2 * (RECORD_HEAD_BYTES + 4096) + 10;
    const w = new WriteLogWriter(file, limit);
    const es = entries();
    w.append(es[0]);
    w.append(es[0]);
    let err: unknown;
    try {
      w.append(es[0]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WriteLogFullError);
    expect(String(err)).toContain(file);
    expect(String(err)).toContain(`limit of ${limit} bytes`);
    w.close();
    expect(requireComplete(readWriteLog(file))).toHaveLength(2);
  });

  it('a log cut at every byte of its last record reads back the intact prefix and names the offset', () => {
    const file = path.join(dir, 'torn.wlog');
    const w = new WriteLogWriter(file, 1 << 20);
    for (const e of entries()) w.append(e);
    w.close();
    const whole = readFileSync(file);
    const recs = requireComplete(readWriteLog(file));
    const lastStart = recs[recs.length - 1].fileOffset;
    for (let cut = lastStart + 1; cut < whole.length; cut++) {
      const f = path.join(dir, 'cut.wlog');
      writeFileSync(f, whole);
      truncateSync(f, cut);
      const log = readWriteLog(f);
      expect(log.records).toHaveLength(recs.length - 1);
      expect(log.truncated?.offset).toBe(lastStart);
      expect(() => requireComplete(log)).toThrow(new RegExp(`write log ${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} at byte ${lastStart}: .*${recs.length - 1} records before it are intact`));
    }
  });

  it('a flipped byte inside a record stops the read at that record (CRC-32C), not silently', () => {
    const file = path.join(dir, 'flip.wlog');
    const w = new WriteLogWriter(file, 1 << 20);
    for (const e of entries()) w.append(e);
    w.close();
    const bytes = readFileSync(file);
    const recs = requireComplete(readWriteLog(file));
    bytes[recs[2].fileOffset + RECORD_HEAD_BYTES + 17] ^= 0xff;
    writeFileSync(file, bytes);
    const log = readWriteLog(file);
    expect(log.records).toHaveLength(2);
    expect(log.truncated).toEqual({ offset: recs[2].fileOffset, reason: expect.stringContaining('CRC-32C mismatch') });
  });

  it('a file that is not a write log is refused naming the file and what was expected', () => {
    const file = path.join(dir, 'not.wlog');
    writeFileSync(file, 'this is not a write log at all');
    expect(() => readWriteLog(file)).toThrow(WriteLogCorruptError);
    expect(() => readWriteLog(file)).toThrow(/not\.wlog at byte 0: expected magic DUROWLOG/);
  });
});
