// The NBD server against QEMU's own client (qemu-io / qemu-img from qemu-utils over the unix
// socket): handshake, READ / WRITE / FUA / FLUSH / TRIM, the write log, injected EIO, a client
// killed mid-session; and, with a raw socket, what QEMU's client never sends: requests out of
// range, unknown and refused options. The backing file is a real file and is read back.
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, type TestContext } from 'vitest';
import { missingRequirement } from '../../test/requirements.ts';
import { findExecutable } from '../vm/prerequisites.ts';
import { DiskFaults } from './disk-faults.ts';
import { DEFAULT_DISK_SPEC, type ErrorRule } from '../model/disk-spec.ts';
import { CMD, NBD_ERR, OPT, REP, REQUEST_MAGIC, TF } from './nbd-protocol.ts';
import { exportNameRequest, rawNbdClient } from './nbd-raw-client.ts';
import { NbdServer } from './nbd-server.ts';
import { VolatileCacheStore } from './volatile-cache.ts';
import { readWriteLog, requireComplete, WriteLogWriter } from './write-log.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-nbd-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open: NbdServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(opts: { sizeBytes?: number; errors?: ErrorRule[]; flush?: 'honoured' | 'ignored'; logLimit?: number } = {}) {
  const id = ++n;
  const file = path.join(dir, `disk-${id}.img`);
  writeFileSync(file, '');
  truncateSync(file, opts.sizeBytes ?? 1 << 20);
  const store = new VolatileCacheStore({ file, onCut: 'drop-unflushed', flush: opts.flush ?? 'honoured', volatile: true });
  const logPath = path.join(dir, `disk-${id}.wlog`);
  const writeLog = new WriteLogWriter(logPath, opts.logLimit ?? 64 << 20);
  const problems: string[] = [];
  const faults = new DiskFaults(opts.errors ?? [], DEFAULT_DISK_SPEC.latency, 7);
  const server = await NbdServer.listen({
    socketPath: path.join(dir, `s${id}.sock`),
    store,
    faults,
    writeLog,
    onProblem: (l) => problems.push(l),
  });
  open.push(server);
  return { file, store, server, faults, writeLog, logPath, problems, url: `nbd+unix:///durolab?socket=${server.socketPath}` };
}

function qemuIo(ctx: TestContext): string {
  return findExecutable('qemu-io') ?? missingRequirement(ctx, 'qemu-io (Debian package qemu-utils)');
}

/** qemu-io with a write-back cache (its default, writethrough, would add a FLUSH after every write). */
async function io(bin: string, url: string, cmds: string[]) {
  const r = await execa(bin, ['-f', 'raw', '-t', 'writeback', url, ...cmds.flatMap((c) => ['-c', c])], { reject: false });
  return { code: r.exitCode, out: `${r.stdout}\n${r.stderr}` };
}

describe('NBD server with qemu-io', () => {
  it('serves WRITE, READ, FUA, FLUSH and TRIM, keeps unflushed writes in the cache and logs every op', async (ctx) => {
    const bin = qemuIo(ctx);
    const d = await serve();
    const r = await io(bin, d.url, ['write -P 0xab 0 64k', 'write -f -P 0xcd 64k 4k', 'read -P 0xab 0 64k', 'read -P 0xcd 64k 4k']);
    expect(r.out).not.toMatch(/fail|mismatch/i);
    expect(r.code).toBe(0);
    // qemu-io flushes when it closes the image: everything is on the backing file now.
    const img = readFileSync(d.file);
    expect(img.subarray(0, 65536).every((b) => b === 0xab)).toBe(true);
    expect(img.subarray(65536, 69632).every((b) => b === 0xcd)).toBe(true);
    expect(d.store.cachedSectors).toBe(0);
    d.writeLog.sync();
    const recs = requireComplete(readWriteLog(d.logPath));
    const ops = recs.map((x) => `${x.op}${x.fua ? '+fua' : ''}@${x.offset}/${x.length}`);
    expect(ops).toEqual(['write@0/65536', 'write+fua@65536/4096', 'flush@0/0']);
    expect(recs[0]!.data!.every((b) => b === 0xab)).toBe(true);
    expect(recs.every((x) => x.completeUs >= x.submitUs)).toBe(true);

    const t = await io(bin, d.url, ['discard 0 4k', 'read -P 0 0 4k', 'read -P 0xab 4k 60k']);
    expect(t.out).not.toMatch(/fail|mismatch/i);
    expect(d.server.counters.trims).toBe(1);
    expect(readFileSync(d.file).subarray(0, 4096).every((b) => b === 0)).toBe(true);
  });

  it('a client killed before it flushes leaves its writes only in the cache; a cut drops them', async (ctx) => {
    const bin = qemuIo(ctx);
    const d = await serve();
    await io(bin, d.url, ['write -P 0x11 0 8k', 'write -f -P 0x22 8k 4k', 'sigraise 9']);
    await d.server.idle();
    expect(d.store.cachedSectors).toBe(16);
    // The guest reads its own cached writes before the cut ...
    expect(d.store.read(0, 8192).every((b) => b === 0x11)).toBe(true);
    const img = readFileSync(d.file);
    expect(img.subarray(0, 8192).every((b) => b === 0)).toBe(true);
    expect(img.subarray(8192, 12288).every((b) => b === 0x22)).toBe(true);
    // ... and a power cut loses them (drop-unflushed), the FUA write stays.
    const out = d.store.cut(1);
    expect(out).toMatchObject({ unflushedWrites: 1, unflushedSectors: 16, persistedSectors: 0 });
    expect(d.store.read(0, 8192).every((b) => b === 0)).toBe(true);
    expect(d.store.read(8192, 4096).every((b) => b === 0x22)).toBe(true);
  });

  it('a lying drive acknowledges FLUSH and FUA and persists nothing', async (ctx) => {
    const bin = qemuIo(ctx);
    const d = await serve({ flush: 'ignored' });
    const r = await io(bin, d.url, ['write -P 0x33 0 4k', 'write -f -P 0x44 4k 4k', 'flush', 'sigraise 9']);
    expect(r.out).not.toMatch(/failed/);
    await d.server.idle();
    expect(d.server.counters.flushes).toBe(1);
    d.writeLog.sync();
    // The write log marks the lies: these FLUSH and FUA are no durability points.
    expect(requireComplete(readWriteLog(d.logPath)).map((x) => `${x.op}${x.fua ? '+fua' : ''}${x.notHonoured ? ' (not honoured)' : ''}`)).toEqual([
      'write',
      'write+fua (not honoured)',
      'flush (not honoured)',
    ]);
    expect(readFileSync(d.file).subarray(0, 8192).every((b) => b === 0)).toBe(true);
    d.store.cut(2);
    expect(d.store.read(0, 8192).every((b) => b === 0)).toBe(true);
  });

  it('injects EIO on the Nth write (once), the Nth flush and a sector range (sticky), and logs no failed op', async (ctx) => {
    const bin = qemuIo(ctx);
    const d = await serve({
      errors: [
        { on: 'write', nth: 2, sticky: false },
        { on: 'flush', nth: 1, sticky: false },
        { on: 'sectors', from: 200, to: 207, sticky: true },
      ],
    });
    const r = await io(bin, d.url, ['write -P 1 0 4k', 'write -P 2 4k 4k', 'write -P 3 8k 4k', 'flush', 'flush', 'write -P 4 100k 4k', 'write -P 5 100k 512', 'sigraise 9']);
    expect(r.out.match(/write failed: Input\/output error/g)?.length, r.out).toBe(3);
    await d.server.idle();
    // qemu-io prints nothing for a failed flush: the server's counters tell (1 of 2 flushes failed).
    expect(d.server.counters).toMatchObject({ flushes: 1, errors: 4 });
    d.writeLog.sync();
    const ops = requireComplete(readWriteLog(d.logPath)).map((x) => `${x.op}@${x.offset}`);
    expect(ops).toEqual(['write@0', 'write@8192', 'flush@0']);
    expect(readFileSync(d.file).subarray(4096, 8192).every((b) => b === 0)).toBe(true);
    expect(readFileSync(d.file).subarray(8192, 12288).every((b) => b === 3)).toBe(true);
  });

  it('fails reads of armed ranges (fault kind read-error): EIO, or every byte flipped while the stored ones stay; counted; disarmed reads clean', async (ctx) => {
    const bin = qemuIo(ctx);
    const d = await serve();
    const w = await io(bin, d.url, ['write -P 1 0 4k', 'write -P 2 4k 4k', 'write -P 3 8k 4k', 'flush']);
    expect(w.code, w.out).toBe(0);
    d.faults.setReadErrors([
      { from: 4096, to: 8192, mode: 'eio' },
      { from: 8192, to: 12288, mode: 'wrong-bytes' },
    ]);
    // -P checks the pattern: 3 ^ 1 = 2 is what the flipped range hands back.
    const r = await io(bin, d.url, ['read -P 1 0 4k', 'read -P 2 4k 4k', 'read -P 2 8k 4k']);
    expect(r.out.match(/read failed: Input\/output error/g)?.length, r.out).toBe(1);
    expect(r.out, r.out).not.toMatch(/Pattern verification failed/);
    expect(d.faults.readErrorHits().map((h) => [h.mode, h.hits])).toEqual([['eio', 1], ['wrong-bytes', 1]]);
    expect(readFileSync(d.file).subarray(8192, 12288).every((b) => b === 3)).toBe(true);
    d.faults.setReadErrors([]);
    const clean = await io(bin, d.url, ['read -P 2 4k 4k', 'read -P 3 8k 4k']);
    expect(clean.out, clean.out).not.toMatch(/failed/);
  });

  it('qemu-img sees the export size; a full write log refuses the write with ENOSPC and the message naming the log', async (ctx) => {
    const bin = qemuIo(ctx);
    const img = findExecutable('qemu-img') ?? missingRequirement(ctx, 'qemu-img (Debian package qemu-utils)');
    const d = await serve({ sizeBytes: 4 << 20, logLimit: 16 + 48 + 4096 + 48 + 10 });
    const info = await execa(img, ['info', '--output=json', d.url]);
    expect(JSON.parse(info.stdout)['virtual-size']).toBe(4 << 20);
    const r = await io(bin, d.url, ['write -P 1 0 4k', 'write -P 2 4k 4k', 'sigraise 9']);
    expect(r.out).toMatch(/write failed: No space left on device/);
    expect(d.server.writeLogFull?.message).toMatch(/over its limit of 4218 bytes/);
    expect(d.problems.join('\n')).toContain(d.logPath);
    // What the log already held is intact.
    expect(requireComplete(readWriteLog(d.logPath)).map((x) => x.op)).toEqual(['write']);
  });
});

describe('NBD server with a raw client', () => {
  it('answers LIST, INFO, refuses structured replies and unknown options, and GOes into transmission', async () => {
    const d = await serve();
    const c = await rawNbdClient(d.server.socketPath);
    const list = await c.option(OPT.LIST);
    expect(list.map((r) => r.type)).toEqual([REP.SERVER, REP.ACK]);
    expect(list[0]!.data.toString('utf8', 4)).toBe('durolab');
    expect((await c.option(OPT.STRUCTURED_REPLY)).map((r) => r.type)).toEqual([REP.ERR_UNSUP]);
    expect((await c.option(99)).map((r) => r.type)).toEqual([REP.ERR_UNSUP]);
    expect((await c.option(OPT.INFO, exportNameRequest('nope'))).map((r) => r.type)).toEqual([REP.ERR_UNKNOWN]);
    const go = await c.option(OPT.GO, exportNameRequest(''));
    expect(go.map((r) => r.type)).toEqual([REP.INFO, REP.INFO, REP.ACK]);
    const flags = go[0]!.data.readUInt16BE(10);
    for (const f of [TF.HAS_FLAGS, TF.SEND_FLUSH, TF.SEND_FUA, TF.SEND_TRIM]) expect(flags & f).toBe(f);
    expect(go[0]!.data.readBigUInt64BE(2)).toBe(BigInt(1 << 20));

    // Out of range: EINVAL and a problem line naming the offset; the session goes on.
    expect(await c.request(CMD.READ, BigInt((1 << 20) - 512), 1024)).toBe(NBD_ERR.EINVAL);
    expect(await c.request(CMD.WRITE, BigInt(1 << 20), 512)).toBe(NBD_ERR.EINVAL);
    expect(d.problems.join('\n')).toMatch(/READ at offset 1048064, length 1024: out of range/);
    expect(d.problems.join('\n')).toMatch(/WRITE at offset 1048576, length 512: out of range/);
    expect(await c.request(CMD.WRITE, 512n, 512)).toBe(0);
    expect(await c.request(CMD.FLUSH, 0n, 0)).toBe(0);

    // A short read of the backing file (shrunk under the server): EIO naming the file and offset.
    truncateSync(d.file, 4096);
    expect(await c.request(CMD.READ, 8192n, 512)).toBe(NBD_ERR.EIO);
    expect(d.problems.at(-1)).toContain(`short read of the NBD backing file ${d.file} at byte 8192`);

    // DISC ends the session cleanly.
    const b = Buffer.alloc(28);
    b.writeUInt32BE(REQUEST_MAGIC, 0);
    b.writeUInt16BE(CMD.DISC, 6);
    c.sock.write(b);
    await d.server.idle();
    await new Promise((r) => (c.sock.destroyed ? r(null) : c.sock.once('close', r)));
    expect(d.problems.filter((p) => /connection ended/.test(p))).toEqual([]);
  });

  it('ABORT ends the handshake with an ACK', async () => {
    const d = await serve();
    const c = await rawNbdClient(d.server.socketPath);
    expect((await c.option(OPT.ABORT)).map((r) => r.type)).toEqual([REP.ACK]);
    await d.server.idle();
    expect(d.problems).toEqual([]);
  });
});
