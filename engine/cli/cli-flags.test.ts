import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseBenchFlags } from './bench-command.ts';
import { parseByteSize } from '../common/flags.ts';
import { main } from './engine-command.ts';
import { parseWriteFlags } from './write-command.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const WRITE = { dir: '/tmp/x', records: '10', 'record-bytes': '100', 'batch-records': '5' };

describe('engine flags', () => {
  it('parses sizes with units', () => {
    expect(parseByteSize('--x', '4096')).toBe(4096);
    expect(parseByteSize('--x', '64KiB')).toBe(65536);
    expect(parseByteSize('--x', '1m')).toBe(1048576);
    expect(parseByteSize('--x', '1MB')).toBe(1000000);
  });

  it('write: a bad value names the flag and the expected form', () => {
    expect(() => parseWriteFlags({ ...WRITE, records: 'ten' })).toThrow(/--records "ten": expected an integer in \[1,/);
    expect(() => parseWriteFlags({ ...WRITE, 'record-bytes': '12 parsecs' })).toThrow(/--record-bytes "12 parsecs": expected a whole number of bytes .*64KiB/);
    expect(() => parseWriteFlags({ ...WRITE, 'batch-records': '0' })).toThrow(/--batch-records "0": expected an integer in \[1,/);
    expect(() => parseWriteFlags({ ...WRITE, io: 'mmap' })).toThrow('--io "mmap": expected buffered|direct|dsync');
    expect(() => parseWriteFlags({ ...WRITE, sync: 'msync' })).toThrow('--sync "msync": expected fsync|fdatasync');
    expect(() => parseWriteFlags({ ...WRITE, flush: 'sometimes' })).toThrow('--flush "sometimes": expected never|per-batch|messages:N|ms:T');
    // Setting flags take the registry's bounds: a segment must hold a batch header.
    expect(() => parseWriteFlags({ ...WRITE, 'segment-bytes': '60' })).toThrow('--segment-bytes "60": expected a size from 61 bytes to 2GiB-1');
    expect(() => parseWriteFlags({ ...WRITE, flush: 'messages:01' })).toThrow('--flush "messages:01": expected never|per-batch|messages:N|ms:T');
    expect(() => parseWriteFlags({ ...WRITE, dir: undefined })).toThrow('durolab engine write: --dir is required');
    expect(parseWriteFlags({ ...WRITE, flush: 'messages:32', 'segment-bytes': '1MiB' })).toMatchObject({
      records: 10,
      flush: { kind: 'messages', every: 32 },
      segmentBytes: 1048576,
    });
  });

  it('an unknown flag is named with the subcommand', async () => {
    await expect(main(['write', '--dri', 'x'])).rejects.toThrow(/durolab engine write: Unknown option '--dri'/);
    await expect(main(['dump', '--dir'])).rejects.toThrow(/durolab engine dump: Option '--dir <value>' argument missing/);
  });

  it('an unknown subcommand exits 2 and lists the subcommands', async () => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(await main(['wirte'])).toBe(2);
    expect(err.mock.calls[0][0]).toContain("unknown subcommand 'wirte': expected one of write, dump, recover, bench");
  });

  it('write --json prints the result as JSON', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-engine-flags-'));
    try {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      expect(await main(['write', '--dir', tmp, '--records', '20', '--record-bytes', '1KiB', '--batch-records', '4', '--json'])).toBe(0);
      const out = JSON.parse(String(log.mock.calls[0][0]));
      expect(out).toMatchObject({ records: 20, batches: 5, logEndOffset: 20 });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('bench: bad filters and numbers name the flag', () => {
    expect(() => parseBenchFlags(['--mb', '0'])).toThrow('--mb "0": expected an integer in [1, 65536]');
    expect(() => parseBenchFlags(['--modes', 'buffered,mmap'])).toThrow('--modes "mmap": expected one of buffered, direct, dsync');
    expect(() => parseBenchFlags(['--batches', '512'])).toThrow(/--batches "512": expected a whole number of bytes in \[4096, 1048576\]/);
    expect(() => parseBenchFlags(['--baseline', 'dd'])).toThrow('--baseline "dd": expected one of auto, fio, writeSync');
    expect(() => parseBenchFlags(['--seconds', 'forever'])).toThrow('--seconds "forever": expected a number in [0.01, 600]');
    expect(() => parseBenchFlags(['--verify', 'maybe'])).toThrow('--verify "maybe": expected one of on, off');
    const quick = parseBenchFlags(['--quick', '--batches', '64KiB', '--verify', 'off']);
    expect(quick).not.toBe('help');
    if (quick !== 'help') {
      expect(quick.budget.reps).toBe(1);
      expect(quick.filter.batches).toEqual([65536]);
      expect(quick.filter.verify).toEqual([false]);
    }
  });
});
