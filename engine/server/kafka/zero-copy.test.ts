// The zero-copy sender (zero-copy.ts) over real files and a real loopback TCP connection: a
// spliced frame arrives byte for byte as its materialized copy, from several regions of several
// files, after the files were unlinked and their original descriptors closed (a segment deleted
// between the slice and the send); a region whose file was truncated after the slice fails the
// send instead of cutting the frame silently; every duplicated descriptor is closed afterwards.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRegions, type SplicedFrame } from '../../protocol/spliced-frame.ts';
import { tempDir } from '../test-support.ts';
import { materializeFrame, pinRegions, sendSplicedFrame, sendfileUnavailable, socketFd } from './zero-copy.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A connected loopback pair: the server side's socket and everything the client receives. */
async function socketPair(): Promise<{ server: net.Socket; received: () => Promise<Buffer>; close: () => void }> {
  const listener = net.createServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  const accepted = new Promise<net.Socket>((r) => listener.once('connection', r));
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  const chunks: Buffer[] = [];
  client.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((r) => client.on('end', () => r()));
  const server = await accepted;
  return {
    server,
    received: async () => {
      server.end();
      await ended;
      return Buffer.concat(chunks);
    },
    close: () => {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

describe('zero-copy sender', () => {
  it('loads the sendfile addon (CI=true: required) and finds a TCP socket\'s descriptor', async () => {
    if (process.env.CI === 'true') expect(sendfileUnavailable).toBeNull();
    const pair = await socketPair();
    try {
      expect(socketFd(pair.server)).toBeGreaterThan(2);
    } finally {
      pair.close();
    }
  });

  it('sends head bytes and file regions in order, byte for byte, from files already unlinked and closed', async () => {
    if (sendfileUnavailable) throw new Error(`the sendfile addon is not loaded: ${sendfileUnavailable}`);
    const dir = tempDir('zero-copy');
    dirs.push(dir);
    // Two "segments" of 3 MiB and 200 KiB of varied bytes: more than a loopback socket buffer takes at once.
    const a = Buffer.alloc(3 << 20);
    for (let i = 0; i < a.length; i++) a[i] = (i * 31 + (i >>> 11)) & 0xff;
    const b = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) & 0xff));
    const fa = path.join(dir, 'a.log');
    const fb = path.join(dir, 'b.log');
    fs.writeFileSync(fa, a);
    fs.writeFileSync(fb, b);
    const fdA = fs.openSync(fa, 'r');
    const fdB = fs.openSync(fb, 'r');
    const before = openFds();
    const slices = [
      { fd: fdA, position: 100, length: a.length - 100, file: fa },
      { fd: fdB, position: 0, length: 150_000, file: fb },
    ];
    const first = pinRegions(slices)!;
    const second = pinRegions([{ fd: fdB, position: 150_000, length: 50_000, file: fb }])!;
    expect(openFds()).toBe(before + 3);
    const head = Buffer.from('HEAD-one|two|tail', 'latin1');
    const frame: SplicedFrame = { head, holes: [{ at: 9, records: first }, { at: 13, records: second }], wireBytes: head.length + first.sizeInBytes + second.sizeInBytes };
    const expected = Buffer.concat([head.subarray(0, 9), a.subarray(100), b.subarray(0, 150_000), head.subarray(9, 13), b.subarray(150_000), head.subarray(13)]);
    expect(materializeFrame(frame).equals(expected)).toBe(true);
    // The segment goes away between the read and the send: unlinked, its descriptors closed.
    fs.rmSync(fa);
    fs.rmSync(fb);
    fs.closeSync(fdA);
    fs.closeSync(fdB);
    const pair = await socketPair();
    try {
      await sendSplicedFrame(pair.server, frame);
      const got = await pair.received();
      expect(got.length).toBe(expected.length);
      expect(got.equals(expected)).toBe(true);
    } finally {
      pair.close();
    }
    // The three duplicates were closed by the send; the two originals by the test.
    expect(openFds()).toBe(before - 2);
  });

  it('fails the send, naming the file, when a region was truncated after the slice', async () => {
    if (sendfileUnavailable) throw new Error(`the sendfile addon is not loaded: ${sendfileUnavailable}`);
    const dir = tempDir('zero-copy-trunc');
    dirs.push(dir);
    const f = path.join(dir, 'c.log');
    fs.writeFileSync(f, Buffer.alloc(100_000, 7));
    const fd = fs.openSync(f, 'r+');
    const regions = pinRegions([{ fd, position: 0, length: 100_000, file: f }])!;
    fs.ftruncateSync(fd, 60_000);
    fs.closeSync(fd);
    const pair = await socketPair();
    try {
      const frame: SplicedFrame = { head: Buffer.from('xy'), holes: [{ at: 1, records: regions }], wireBytes: 2 + 100_000 };
      await expect(sendSplicedFrame(pair.server, frame)).rejects.toThrow(/c\.log was truncated during the send: 60000 of 100000 bytes/);
    } finally {
      pair.close();
    }
  });

  it('an empty FileRegions is a zero-length hole', () => {
    const empty = new FileRegions([]);
    const frame: SplicedFrame = { head: Buffer.from('abc'), holes: [{ at: 2, records: empty }], wireBytes: 3 };
    expect(materializeFrame(frame).toString()).toBe('abc');
  });
});
