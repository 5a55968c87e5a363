// Zero-copy fetch (fetch.transfer=sendfile): a Fetch answer's records go from the segment files
// to the consumer's socket with sendfile(2), never through user space, as Kafka's
// FileRecords.writeTo does through FileChannel.transferTo. The copy path (fetch.transfer=copy)
// reads them into a buffer and writes that, as a broker without sendfile must.
//
// The send: the frame's head bytes up to a hole through socket.write (waiting for its
// callback: the bytes are in the kernel), then each region of the hole with the native
// sendFile on a libuv worker thread (dist/sendfile.node, engine/native/sendfile/sendfile.c),
// and so on. A region's descriptor is a duplicate taken when the fetch was read (pinRegions),
// so a segment rolled, closed or deleted meanwhile still serves the bytes it was sliced from; the
// sender closes the duplicates once the frame went (or was dropped). A region that comes back
// short (its file was truncated after the slice) ends the connection, as Kafka's "Size of
// FileRecords has been truncated during write" does: the frame's size prefix is already out.
import fs from 'node:fs';
import type net from 'node:net';
import { errnoException } from '../../common/errno.ts';
import { loadNativeAddon } from '../../common/native-addon.ts';
import { FileRegions, frameRegions, type FileRegion, type SplicedFrame } from '../../protocol/spliced-frame.ts';
import { readFully } from '../../storage/batch-walker.ts';
import type { FileSlice } from '../../storage/types.ts';

export type FetchTransfer = 'sendfile' | 'copy';

/** A socket that takes no byte for this long fails the send (a consumer that stopped reading). */
const SEND_STALL_MS = 30_000;

interface SendfileAddon {
  dupFd(fd: number): number;
  sendFile(socketFd: number, fileFd: number, position: number, length: number, stallMs: number, cb: (errno: number, sent: number) => void): number;
}

function loadAddon(): { addon: SendfileAddon | null; reason: string | null } {
  const r = loadNativeAddon('sendfile', (mod) => (typeof mod.dupFd === 'function' && typeof mod.sendFile === 'function' ? null : 'exports no dupFd/sendFile functions'));
  if (r.module === null) return { addon: null, reason: `${r.reason} (run node scripts/build-native.mjs; it needs a C compiler)` };
  return { addon: r.module as unknown as SendfileAddon, reason: null };
}

const loaded = loadAddon();

/** Why fetch.transfer=sendfile falls back to the copy path here, or null when sendfile runs. */
export const sendfileUnavailable: string | null = loaded.reason;

/** The kernel descriptor of a TCP socket (libuv's), or null where Node does not expose it. */
export function socketFd(socket: net.Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

export function releaseRegions(regions: readonly FileRegion[]): void {
  for (const r of regions) {
    try {
      fs.closeSync(r.fd);
    } catch {
      // already closed: nothing holds it
    }
  }
}

/**
 * The slices as FileRegions on descriptors of their own (dup), so they outlive the segment;
 * null when the addon is not loaded or a dup fails (EMFILE): the caller reads instead.
 */
export function pinRegions(slices: readonly FileSlice[]): FileRegions | null {
  if (!loaded.addon) return null;
  const out: FileRegion[] = [];
  for (const s of slices) {
    const fd = loaded.addon.dupFd(s.fd);
    if (fd < 0) {
      releaseRegions(out);
      return null;
    }
    out.push({ fd, position: s.position, length: s.length, file: s.file });
  }
  return new FileRegions(out);
}

function writeChunk(socket: net.Socket, b: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (b.length === 0) return resolve();
    socket.write(b, (err) => (err ? reject(err) : resolve()));
  });
}

function sendRegion(addon: SendfileAddon, sock: number, r: FileRegion): Promise<void> {
  return new Promise((resolve, reject) => {
    const queued = addon.sendFile(sock, r.fd, r.position, r.length, SEND_STALL_MS, (errno, sent) => {
      if (errno !== 0) reject(errnoException(errno, 'sendfile', `${r.file} [${r.position}, ${r.position + r.length}) after ${sent} bytes`));
      else if (sent !== r.length) reject(new Error(`${r.file} was truncated during the send: ${sent} of ${r.length} bytes from position ${r.position}`));
      else resolve();
    });
    if (queued < 0) reject(errnoException(queued, 'fcntl', 'duplicating the socket descriptor'));
  });
}

/** The frame with its holes read into memory (a socket without a descriptor: the copy path). */
export function materializeFrame(f: SplicedFrame): Buffer {
  const out = Buffer.allocUnsafe(f.wireBytes);
  let src = 0;
  let dst = 0;
  for (const h of f.holes) {
    dst += f.head.copy(out, dst, src, h.at);
    src = h.at;
    for (const r of h.records.regions) {
      if (readFully(r.fd, out, dst, r.length, r.position) !== r.length) throw new Error(`${r.file} ended before position ${r.position + r.length}`);
      dst += r.length;
    }
  }
  f.head.copy(out, dst, src);
  return out;
}

/**
 * Sends a spliced frame; resolves once all of it is in the kernel. Rejects on a socket error, a
 * stalled consumer or a truncated region (the caller closes the connection: the frame is cut).
 * The frame's descriptors are closed either way.
 */
export async function sendSplicedFrame(socket: net.Socket, f: SplicedFrame): Promise<void> {
  try {
    const sock = socketFd(socket);
    if (!loaded.addon || sock === null) {
      await writeChunk(socket, materializeFrame(f));
      return;
    }
    let pos = 0;
    for (const h of f.holes) {
      await writeChunk(socket, f.head.subarray(pos, h.at));
      for (const r of h.records.regions) if (r.length > 0) await sendRegion(loaded.addon, sock, r);
      pos = h.at;
    }
    await writeChunk(socket, f.head.subarray(pos));
  } finally {
    releaseRegions(frameRegions(f));
  }
}
