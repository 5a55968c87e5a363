// The NBD wire protocol, the parts the harness's server speaks (github.com/NetworkBlockDevice/
// nbd, doc/proto.md): the fixed-newstyle handshake, option haggling (GO, INFO, LIST, ABORT,
// EXPORT_NAME; structured replies refused), and simple replies in transmission. Constants and
// codecs only; harness/disk/nbd-server.ts runs them over a unix socket.
import type net from 'node:net';

export const NBDMAGIC = 0x4e42444d41474943n;
export const IHAVEOPT = 0x49484156454f5054n;
export const OPT_REPLY_MAGIC = 0x3e889045565a9n;
export const REQUEST_MAGIC = 0x25609513;
export const SIMPLE_REPLY_MAGIC = 0x67446698;

/** Handshake flags (server) and client flags. */
export const FLAG_FIXED_NEWSTYLE = 1;
export const FLAG_NO_ZEROES = 2;

/** Transmission flags. */
export const TF = {
  HAS_FLAGS: 1 << 0,
  READ_ONLY: 1 << 1,
  SEND_FLUSH: 1 << 2,
  SEND_FUA: 1 << 3,
  ROTATIONAL: 1 << 4,
  SEND_TRIM: 1 << 5,
  SEND_WRITE_ZEROES: 1 << 6,
} as const;

export const OPT = {
  EXPORT_NAME: 1,
  ABORT: 2,
  LIST: 3,
  STARTTLS: 5,
  INFO: 6,
  GO: 7,
  STRUCTURED_REPLY: 8,
  LIST_META_CONTEXT: 9,
  SET_META_CONTEXT: 10,
} as const;

export const REP = {
  ACK: 1,
  SERVER: 2,
  INFO: 3,
  ERR_UNSUP: 2 ** 31 + 1,
  ERR_POLICY: 2 ** 31 + 2,
  ERR_INVALID: 2 ** 31 + 3,
  ERR_UNKNOWN: 2 ** 31 + 6,
} as const;

export const INFO_EXPORT = 0;
export const INFO_BLOCK_SIZE = 3;

export const CMD = {
  READ: 0,
  WRITE: 1,
  DISC: 2,
  FLUSH: 3,
  TRIM: 4,
  CACHE: 5,
  WRITE_ZEROES: 6,
  BLOCK_STATUS: 7,
} as const;
export const CMD_NAME: Record<number, string> = Object.fromEntries(Object.entries(CMD).map(([k, v]) => [v, k]));

export const CMD_FLAG_FUA = 1;
export const CMD_FLAG_NO_HOLE = 2;

/** errno values on the wire (NBD fixes them, whatever the host's). */
export const NBD_ERR = { EPERM: 1, EIO: 5, ENOMEM: 12, EINVAL: 22, ENOSPC: 28, EOVERFLOW: 75, ENOTSUP: 95, ESHUTDOWN: 108 } as const;

/** Sizes the server advertises (NBD_INFO_BLOCK_SIZE): 512-byte sectors, at most 32 MiB per request (QEMU's own limit). */
export const MIN_BLOCK = 512;
export const PREFERRED_BLOCK = 4096;
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

export const REQUEST_HEAD_BYTES = 28;

export interface NbdRequest {
  flags: number;
  type: number;
  /** The client's opaque cookie, echoed in the reply. */
  handle: Buffer;
  offset: number;
  length: number;
}

export function decodeRequestHead(b: Buffer): NbdRequest {
  const magic = b.readUInt32BE(0);
  if (magic !== REQUEST_MAGIC) throw new Error(`NBD request magic 0x${magic.toString(16)}, expected 0x${REQUEST_MAGIC.toString(16)}`);
  const offset = b.readBigUInt64BE(16);
  if (offset > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`NBD request offset ${offset} is beyond 2^53`);
  return { flags: b.readUInt16BE(4), type: b.readUInt16BE(6), handle: Buffer.from(b.subarray(8, 16)), offset: Number(offset), length: b.readUInt32BE(24) };
}

export function encodeSimpleReply(error: number, handle: Buffer): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(SIMPLE_REPLY_MAGIC, 0);
  b.writeUInt32BE(error, 4);
  handle.copy(b, 8);
  return b;
}

export function encodeOptionReply(option: number, type: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(20 + data.length);
  b.writeBigUInt64BE(OPT_REPLY_MAGIC, 0);
  b.writeUInt32BE(option, 8);
  b.writeUInt32BE(type, 12);
  b.writeUInt32BE(data.length, 16);
  data.copy(b, 20);
  return b;
}

export function encodeInfoExport(size: number, flags: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(INFO_EXPORT, 0);
  b.writeBigUInt64BE(BigInt(size), 2);
  b.writeUInt16BE(flags, 10);
  return b;
}

export function encodeInfoBlockSize(): Buffer {
  const b = Buffer.alloc(14);
  b.writeUInt16BE(INFO_BLOCK_SIZE, 0);
  b.writeUInt32BE(MIN_BLOCK, 2);
  b.writeUInt32BE(PREFERRED_BLOCK, 6);
  b.writeUInt32BE(MAX_REQUEST_BYTES, 10);
  return b;
}

export function encodeServerGreeting(): Buffer {
  const b = Buffer.alloc(18);
  b.writeBigUInt64BE(NBDMAGIC, 0);
  b.writeBigUInt64BE(IHAVEOPT, 8);
  b.writeUInt16BE(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES, 16);
  return b;
}

/** NBD_REP_SERVER's payload for one export name. */
export function encodeServerListEntry(name: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const b = Buffer.alloc(4 + n.length);
  b.writeUInt32BE(n.length, 0);
  n.copy(b, 4);
  return b;
}

/** An export name and info requests of NBD_OPT_INFO/GO; null when the payload is malformed. */
export function decodeInfoRequest(data: Buffer): { name: string; infos: number[] } | null {
  if (data.length < 4) return null;
  const nameLen = data.readUInt32BE(0);
  if (data.length < 4 + nameLen + 2) return null;
  const name = data.toString('utf8', 4, 4 + nameLen);
  const count = data.readUInt16BE(4 + nameLen);
  if (data.length !== 4 + nameLen + 2 + 2 * count) return null;
  const infos: number[] = [];
  for (let i = 0; i < count; i++) infos.push(data.readUInt16BE(4 + nameLen + 2 + 2 * i));
  return { name, infos };
}

/** Reads exact byte counts from a socket (the protocol is length-prefixed throughout). */
export class SocketReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private waiter: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  private ended: Error | null = null;

  constructor(socket: net.Socket) {
    socket.on('data', (c: Buffer) => {
      this.chunks.push(c);
      this.buffered += c.length;
      this.pump();
    });
    const end = (why: string) => {
      this.ended ??= new ClientGoneError(why);
      this.pump();
    };
    socket.on('end', () => end('the client closed the connection'));
    socket.on('close', () => end('the connection closed'));
    socket.on('error', (e) => end(`socket error: ${e.message}`));
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered -= n;
    return out;
  }

  private pump(): void {
    const w = this.waiter;
    if (!w) return;
    if (this.buffered >= w.n) {
      this.waiter = null;
      w.resolve(this.take(w.n));
    } else if (this.ended) {
      this.waiter = null;
      w.reject(this.ended);
    }
  }

  read(n: number): Promise<Buffer> {
    if (this.waiter) throw new Error('SocketReader: one read at a time');
    if (n === 0) return Promise.resolve(Buffer.alloc(0));
    return new Promise((resolve, reject) => {
      this.waiter = { n, resolve, reject };
      this.pump();
    });
  }
}

export class ClientGoneError extends Error {}
