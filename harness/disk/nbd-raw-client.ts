// A minimal NBD client for tests (nbd-server.test.ts, clock-skew.test.ts): the handshake's
// options and single requests with their replies, byte by byte, including what qemu-io never
// sends (requests out of range, unknown and refused options).
import net from 'node:net';
import { CMD, IHAVEOPT, REP, REQUEST_MAGIC, SocketReader } from './nbd-protocol.ts';

export interface RawNbdClient {
  sock: net.Socket;
  reader: SocketReader;
  /** Sends one option and returns every reply up to the final one. */
  option(opt: number, data?: Buffer): Promise<Array<{ type: number; data: Buffer }>>;
  /** Sends one request (a WRITE carries `length` zero bytes) and returns the reply's error (0: done). */
  request(type: number, offset: bigint, length: number): Promise<number>;
}

/** NBD_OPT_GO's payload for one export name, no info requests. */
export function exportNameRequest(name: string): Buffer {
  return Buffer.concat([Buffer.from([0, 0, 0, name.length]), Buffer.from(name), Buffer.from([0, 0])]);
}

export async function rawNbdClient(socketPath: string): Promise<RawNbdClient> {
  const sock = net.createConnection(socketPath);
  await new Promise<void>((r, j) => sock.once('connect', r).once('error', j));
  const reader = new SocketReader(sock);
  const greet = await reader.read(18);
  if ((greet.readUInt16BE(16) & 1) !== 1) throw new Error(`NBD server ${socketPath}: its greeting lacks FIXED_NEWSTYLE`);
  sock.write(Buffer.from([0, 0, 0, 3]));
  const option = async (opt: number, data: Buffer = Buffer.alloc(0)) => {
    const h = Buffer.alloc(16);
    h.writeBigUInt64BE(IHAVEOPT, 0);
    h.writeUInt32BE(opt, 8);
    h.writeUInt32BE(data.length, 12);
    sock.write(Buffer.concat([h, data]));
    const replies: Array<{ type: number; data: Buffer }> = [];
    for (;;) {
      const rh = await reader.read(20);
      const rd = await reader.read(rh.readUInt32BE(16));
      replies.push({ type: rh.readUInt32BE(12), data: rd });
      if (rh.readUInt32BE(12) !== REP.SERVER && rh.readUInt32BE(12) !== REP.INFO) return replies;
    }
  };
  const request = async (type: number, offset: bigint, length: number) => {
    const b = Buffer.alloc(28);
    b.writeUInt32BE(REQUEST_MAGIC, 0);
    b.writeUInt16BE(type, 6);
    b.write('cookie!!', 8, 'latin1');
    b.writeBigUInt64BE(offset, 16);
    b.writeUInt32BE(length, 24);
    sock.write(type === CMD.WRITE ? Buffer.concat([b, Buffer.alloc(length)]) : b);
    const r = await reader.read(16);
    const cookie = r.toString('latin1', 8, 16);
    if (cookie !== 'cookie!!') throw new Error(`NBD server ${socketPath}: a reply with cookie ${JSON.stringify(cookie)}, expected "cookie!!"`);
    return r.readUInt32BE(4);
  };
  return { sock, reader, option, request };
}
