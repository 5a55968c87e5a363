import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { Log, type IoMode, type LogConfig } from './index.ts';
import { makeBatch, removeTmpDirs, tmpDir } from './testing.ts';
import { missingRequirement } from '../../test/requirements.ts';

afterAll(removeTmpDirs);

/** Deterministic sizes that put batch boundaries all over 4 KiB blocks. */
function sizes(n: number, min: number, max: number, seed = 1): number[] {
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(min + (x % (max - min + 1)));
  }
  return out;
}

function filesOf(dir: string): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const f of fs.readdirSync(dir).sort()) if (/\.(log|index|timeindex)$/.test(f)) m.set(f, fs.readFileSync(path.join(dir, f)));
  return m;
}

function expectSameFiles(a: string, b: string): void {
  const fa = filesOf(a);
  const fb = filesOf(b);
  expect([...fa.keys()]).toEqual([...fb.keys()]);
  for (const [name, bytes] of fa) expect([name, bytes.length, bytes.equals(fb.get(name)!)]).toEqual([name, fb.get(name)!.length, true]);
}

/** Runs the same appends in a buffered log and in a log of `io`, reading each batch back right after it is written. */
function twin(io: LogConfig['io'], valueSizes: number[], config: Partial<LogConfig> = {}): { ref: string; dir: string; log: Log; refLog: Log } {
  const ref = tmpDir('durolab-io-ref-');
  const dir = tmpDir(`durolab-io-${io}-`);
  const refLog = Log.open(ref, { ...config, io: 'buffered' });
  const log = Log.open(dir, { ...config, io });
  valueSizes.forEach((v, i) => {
    const b = makeBatch(i, { valueBytes: v, records: 1 + (i % 2) });
    const copy = Buffer.from(b);
    const r = log.append(b, { nowMs: 1000 + i });
    refLog.append(copy, { nowMs: 1000 + i });
    expect(log.read(r.baseOffset, 1).data.equals(b)).toBe(true);
  });
  return { ref, dir, log, refLog };
}

describe('io=direct', () => {
  it('many small appends that straddle 4 KiB blocks: the tail block is rewritten and the files match a buffered log', () => {
    const { ref, dir, log, refLog } = twin('direct', sizes(300, 20, 3000));
    // While open the file holds whole blocks: the logical end is tracked apart from the size.
    const info = log.segmentInfos()[0];
    expect(fs.statSync(info.logPath).size % 4096).toBe(0);
    expect(fs.statSync(info.logPath).size).toBeGreaterThanOrEqual(info.sizeBytes);
    log.close();
    refLog.close();
    expect(fs.statSync(info.logPath).size).toBe(info.sizeBytes);
    expectSameFiles(ref, dir);
    // Reopened, the partial last block is loaded back into the staging buffer and rewritten.
    const again = Log.open(dir, { io: 'direct' });
    const refAgain = Log.open(ref, { io: 'buffered' });
    for (const [i, v] of sizes(40, 10, 2000, 7).entries()) {
      again.append(makeBatch(500 + i, { valueBytes: v }), { nowMs: 5000 + i });
      refAgain.append(makeBatch(500 + i, { valueBytes: v }), { nowMs: 5000 + i });
    }
    again.close();
    refAgain.close();
    expectSameFiles(ref, dir);
  });

  it('appends of 8 KiB and more (alignment errors hide below a page) across segment rolls', () => {
    const { ref, dir, log, refLog } = twin('direct', [8192, 9000, 4096 - 120, 20_000, 70_000, 12_345, 300_000, 8191, 100, 65_536], {
      segmentBytes: 400_000,
    });
    expect(log.segmentInfos().length).toBeGreaterThan(1);
    // Rolled segments were cut to their logical size.
    for (const s of log.segmentInfos().slice(0, -1)) expect(fs.statSync(s.logPath).size).toBe(s.sizeBytes);
    log.close();
    refLog.close();
    expectSameFiles(ref, dir);
  });

  it('after a crash the zero padding of the last block is removed by recovery and nothing is lost', () => {
    const { dir, log, refLog } = twin('direct', sizes(50, 100, 1500, 3), { flush: { kind: 'per-batch' } });
    const leo = log.logEndOffset;
    const info = log.segmentInfos()[0];
    const padded = fs.statSync(info.logPath).size;
    expect(padded).toBeGreaterThan(info.sizeBytes);
    log.abandon();
    refLog.close();
    const again = Log.open(dir, { io: 'direct' });
    expect(again.recovery.cleanShutdown).toBe(false);
    expect(again.logEndOffset).toBe(leo);
    expect(again.recovery.zeroTailBytes).toBe(padded - info.sizeBytes);
    expect(again.recovery.batchesTruncated).toBe(0);
    expect(fs.statSync(info.logPath).size).toBe(info.sizeBytes);
    again.close();
  });

  it('truncateTo in the middle of a block, then appends: same bytes as a buffered log doing the same', () => {
    const { ref, dir, log, refLog } = twin('direct', sizes(30, 200, 900, 5));
    log.truncateTo(20);
    refLog.truncateTo(20);
    expect(log.logEndOffset).toBe(refLog.logEndOffset);
    for (let i = 0; i < 10; i++) {
      log.append(makeBatch(900 + i, { valueBytes: 333 }), { nowMs: 9000 + i });
      refLog.append(makeBatch(900 + i, { valueBytes: 333 }), { nowMs: 9000 + i });
    }
    log.close();
    refLog.close();
    expectSameFiles(ref, dir);
  });

  it('on tmpfs: a clear error naming the mode and the path', (ctx) => {
    if (!fs.existsSync('/dev/shm') || fs.statfsSync('/dev/shm').type !== 0x01021994) {
      missingRequirement(ctx, '/dev/shm mounted as tmpfs (to check that io=direct refuses it)');
    }
    const dir = fs.mkdtempSync('/dev/shm/durolab-direct-');
    try {
      expect(() => Log.open(dir, { io: 'direct' })).toThrow(/io=direct: .*durolab-direct-.* is on tmpfs/);
      expect(fs.readdirSync(dir)).toEqual([]);
      // Buffered is fine there.
      const log = Log.open(dir, { io: 'buffered' });
      log.append(makeBatch(1));
      log.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('io=dsync', () => {
  it('writes through O_DSYNC and reads back the same bytes as a buffered log', () => {
    const { ref, dir, log, refLog } = twin('dsync', sizes(40, 50, 5000, 9), { segmentBytes: 50_000 });
    log.close();
    refLog.close();
    expectSameFiles(ref, dir);
  });
});

/** open(2) flag bits as /proc/<pid>/fdinfo shows them (octal), per architecture. */
const OPEN_FLAG_BITS: Record<string, { O_DIRECT: number; O_DSYNC: number; O_SYNC_ONLY: number }> = {
  // asm-generic/fcntl.h (x86_64): O_DIRECT 040000, O_DSYNC 010000, __O_SYNC 04000000
  x64: { O_DIRECT: 0o40000, O_DSYNC: 0o10000, O_SYNC_ONLY: 0o4000000 },
  // arch/arm64/include/uapi/asm/fcntl.h: O_DIRECT 0200000
  arm64: { O_DIRECT: 0o200000, O_DSYNC: 0o10000, O_SYNC_ONLY: 0o4000000 },
};

/** The kernel's `flags:` of every descriptor this process holds open on `file`. */
function kernelFlagsOf(file: string): number[] {
  const target = fs.realpathSync(file);
  const out: number[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link: string;
    let info: string;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (link !== target) continue;
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // the descriptor of the listing itself, or one closed meanwhile
    }
    const m = /^flags:\s+([0-7]+)$/m.exec(info);
    if (!m) throw new Error(`/proc/self/fdinfo/${fd} has no flags: line: ${info}`);
    out.push(parseInt(m[1], 8));
  }
  return out;
}

function openAndAppend(ctx: TestContext, io: IoMode): { log: Log; logPath: string } {
  const dir = tmpDir(`durolab-fdinfo-${io}-`);
  let log: Log;
  try {
    log = Log.open(dir, { io });
    log.append(makeBatch(0, { valueBytes: 5000 }));
  } catch (e) {
    const msg = (e as Error).message;
    if (io === 'direct' && /io=direct: .*(tmpfs|ramfs|refuses O_DIRECT|logical block size)/.test(msg)) {
      return missingRequirement(ctx, `O_DIRECT support on the filesystem of ${dir}: ${msg}`);
    }
    throw e;
  }
  return { log, logPath: log.segmentInfos()[0].logPath };
}

describe('the open flags the kernel sees (/proc/self/fdinfo)', () => {
  const bits = OPEN_FLAG_BITS[process.arch];

  for (const io of ['buffered', 'direct', 'dsync'] as const) {
    it(`io=${io}: the segment is written through a descriptor with exactly its mode's flags`, (ctx) => {
    if (!bits) throw new Error(`open flag bits for ${process.arch} are not known to this test (known: ${Object.keys(OPEN_FLAG_BITS).join(', ')})`);
    if (!fs.existsSync('/proc/self/fdinfo')) missingRequirement(ctx, '/proc/self/fdinfo (Linux procfs)');
    const { log, logPath } = openAndAppend(ctx, io);
    const flags = kernelFlagsOf(logPath);
    log.close();
    // Buffered: one read-write descriptor reads and writes a segment this process created;
    // O_DIRECT and O_DSYNC: a reader and a writer of their own (opened on the first append).
    if (io === 'buffered') expect(flags.length).toBe(1);
    else expect(flags.length).toBeGreaterThanOrEqual(2);
    const withDirect = flags.filter((f) => (f & bits.O_DIRECT) !== 0).length;
    const withDsync = flags.filter((f) => (f & bits.O_DSYNC) !== 0).length;
    const fmt = flags.map((f) => `0${f.toString(8)}`).join(', ');
    if (io === 'buffered') expect([withDirect, withDsync], `flags ${fmt}`).toEqual([0, 0]);
    if (io === 'direct') expect([withDirect >= 1, withDsync], `flags ${fmt}`).toEqual([true, 0]);
    if (io === 'dsync') expect([withDirect, withDsync >= 1], `flags ${fmt}`).toEqual([0, true]);
    // O_DSYNC, not O_SYNC (which would also sync metadata such as mtime on every write).
    expect(flags.filter((f) => (f & bits.O_SYNC_ONLY) !== 0), `flags ${fmt}`).toEqual([]);
    expect(kernelFlagsOf(logPath)).toEqual([]);
    });
  }
});
