// A userspace NBD server for one export, on a unix socket only, run by the harness (host side).
// Fixed-newstyle handshake; NBD_OPT_GO / INFO / LIST / ABORT / EXPORT_NAME, structured replies
// and everything else refused with NBD_REP_ERR_UNSUP; transmission with simple replies:
// READ, WRITE (+FUA), FLUSH, TRIM, WRITE_ZEROES, DISC. Requests are served one at a time in
// arrival order (QEMU pipelines them; serial service is a valid drive). Every WRITE, FLUSH,
// TRIM and WRITE_ZEROES the server completes goes to the write log with host-clock times.
// A bad request (out of range, unaligned) gets EINVAL and a problem line naming the offset.
import fs from 'node:fs';
import net from 'node:net';
import { hostClockUs } from '../../engine/common/clock.ts';
import { DiskFaults } from './disk-faults.ts';
import {
  ClientGoneError,
  CMD,
  CMD_FLAG_FUA,
  CMD_NAME,
  decodeInfoRequest,
  decodeRequestHead,
  encodeInfoBlockSize,
  encodeInfoExport,
  encodeOptionReply,
  encodeServerGreeting,
  encodeServerListEntry,
  encodeSimpleReply,
  FLAG_NO_ZEROES,
  IHAVEOPT,
  MAX_REQUEST_BYTES,
  NBD_ERR,
  OPT,
  REP,
  REQUEST_HEAD_BYTES,
  SocketReader,
  TF,
} from './nbd-protocol.ts';
import type { VolatileCacheStore } from './volatile-cache.ts';
import { SECTOR_BYTES, WriteLogFullError, type WriteLogWriter } from './write-log.ts';

export const TRANSMISSION_FLAGS = TF.HAS_FLAGS | TF.SEND_FLUSH | TF.SEND_FUA | TF.SEND_TRIM | TF.SEND_WRITE_ZEROES;

export interface NbdServerOptions {
  socketPath: string;
  store: VolatileCacheStore;
  faults: DiskFaults;
  writeLog: WriteLogWriter | null;
  /** The export's name (clients asking for '' get it too). */
  exportName?: string;
  /** Called once per problem (bad request, short read, full write log); also kept in `problems`. */
  onProblem?: (line: string) => void;
}

export interface NbdCounters {
  connections: number;
  reads: number;
  writes: number;
  fuaWrites: number;
  flushes: number;
  trims: number;
  writeZeroes: number;
  errors: number;
  bytesRead: number;
  bytesWritten: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class NbdServer {
  readonly problems: string[] = [];
  readonly counters: NbdCounters = { connections: 0, reads: 0, writes: 0, fuaWrites: 0, flushes: 0, trims: 0, writeZeroes: 0, errors: 0, bytesRead: 0, bytesWritten: 0 };
  /** Set when the write log filled up: the trial fails with this. */
  writeLogFull: WriteLogFullError | null = null;
  private readonly server: net.Server;
  private readonly sessions = new Set<Promise<void>>();
  private readonly sockets = new Set<net.Socket>();
  private closed = false;

  private constructor(private readonly opts: NbdServerOptions) {
    this.server = net.createServer((socket) => {
      if (this.closed) {
        socket.destroy();
        return;
      }
      this.counters.connections++;
      this.sockets.add(socket);
      const session = this.serve(socket)
        .catch((err: unknown) => {
          if (!(err instanceof ClientGoneError)) this.problem(`NBD ${this.opts.socketPath}: connection ended by an error: ${(err as Error).message}`);
        })
        .finally(() => {
          socket.destroy();
          this.sockets.delete(socket);
          this.sessions.delete(session);
        });
      this.sessions.add(session);
    });
  }

  static async listen(opts: NbdServerOptions): Promise<NbdServer> {
    if (Buffer.byteLength(opts.socketPath) > 107) throw new Error(`NBD socket path ${opts.socketPath} is longer than the 107 bytes a unix socket address holds`);
    fs.rmSync(opts.socketPath, { force: true });
    const s = new NbdServer(opts);
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(opts.socketPath, () => {
        s.server.off('error', reject);
        resolve();
      });
    });
    return s;
  }

  get socketPath(): string {
    return this.opts.socketPath;
  }

  get exportName(): string {
    return this.opts.exportName ?? 'durolab';
  }

  private problem(line: string): void {
    this.problems.push(line);
    this.opts.onProblem?.(line);
  }

  /** Resolves when no client is connected (e.g. after QEMU was killed): nothing is in flight any more. */
  async idle(): Promise<void> {
    while (this.sessions.size > 0) await Promise.allSettled([...this.sessions]);
  }

  /** Stops listening, drops every connection, removes the socket file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
    await this.idle();
    fs.rmSync(this.opts.socketPath, { force: true });
  }

  private async serve(socket: net.Socket): Promise<void> {
    const reader = new SocketReader(socket);
    const send = (b: Buffer): void => {
      if (!socket.destroyed) socket.write(b);
    };
    send(encodeServerGreeting());
    const clientFlags = (await reader.read(4)).readUInt32BE(0);
    const noZeroes = (clientFlags & FLAG_NO_ZEROES) !== 0;
    // Option haggling until GO / EXPORT_NAME (or ABORT).
    for (;;) {
      const head = await reader.read(16);
      if (head.readBigUInt64BE(0) !== IHAVEOPT) throw new Error(`NBD option magic 0x${head.readBigUInt64BE(0).toString(16)}, expected IHAVEOPT`);
      const option = head.readUInt32BE(8);
      const length = head.readUInt32BE(12);
      if (length > 64 * 1024) throw new Error(`NBD option ${option} carries ${length} bytes (at most 65536 accepted)`);
      const data = await reader.read(length);
      if (option === OPT.EXPORT_NAME) {
        const name = data.toString('utf8');
        if (name !== '' && name !== this.exportName) throw new Error(`NBD_OPT_EXPORT_NAME asked for export '${name}'; this server has '${this.exportName}'`);
        const b = Buffer.alloc(noZeroes ? 10 : 134);
        b.writeBigUInt64BE(BigInt(this.opts.store.sizeBytes), 0);
        b.writeUInt16BE(TRANSMISSION_FLAGS, 8);
        send(b);
        break;
      }
      if (option === OPT.ABORT) {
        send(encodeOptionReply(option, REP.ACK));
        return;
      }
      if (option === OPT.LIST) {
        if (length !== 0) send(encodeOptionReply(option, REP.ERR_INVALID, Buffer.from('NBD_OPT_LIST takes no data')));
        else {
          send(encodeOptionReply(option, REP.SERVER, encodeServerListEntry(this.exportName)));
          send(encodeOptionReply(option, REP.ACK));
        }
        continue;
      }
      if (option === OPT.INFO || option === OPT.GO) {
        const req = decodeInfoRequest(data);
        if (!req) {
          send(encodeOptionReply(option, REP.ERR_INVALID, Buffer.from('malformed NBD_OPT_INFO/GO payload')));
          continue;
        }
        if (req.name !== '' && req.name !== this.exportName) {
          send(encodeOptionReply(option, REP.ERR_UNKNOWN, Buffer.from(`no export '${req.name}' (this server has '${this.exportName}')`)));
          continue;
        }
        send(encodeOptionReply(option, REP.INFO, encodeInfoExport(this.opts.store.sizeBytes, TRANSMISSION_FLAGS)));
        // Block sizes always: 512-byte sectors keep every request sector-aligned.
        send(encodeOptionReply(option, REP.INFO, encodeInfoBlockSize()));
        send(encodeOptionReply(option, REP.ACK));
        if (option === OPT.GO) break;
        continue;
      }
      // STARTTLS, STRUCTURED_REPLY, meta contexts and anything newer.
      send(encodeOptionReply(option, REP.ERR_UNSUP, Buffer.from(`option ${option} is not supported by this server`)));
    }
    await this.transmission(socket, reader, send);
  }

  private async transmission(socket: net.Socket, reader: SocketReader, send: (b: Buffer) => void): Promise<void> {
    const { store, faults } = this.opts;
    const size = store.sizeBytes;
    for (;;) {
      const req = decodeRequestHead(await reader.read(REQUEST_HEAD_BYTES));
      const submitUs = hostClockUs();
      const name = CMD_NAME[req.type] ?? `command ${req.type}`;
      if (req.type === CMD.DISC) return;
      if (req.type === CMD.WRITE && req.length > MAX_REQUEST_BYTES) {
        this.problem(`NBD ${this.opts.socketPath}: WRITE of ${req.length} bytes at offset ${req.offset} exceeds the ${MAX_REQUEST_BYTES}-byte request limit; connection closed`);
        return;
      }
      const payload = req.type === CMD.WRITE ? await reader.read(req.length) : null;
      const reply = (error: number, data?: Buffer): void => {
        if (error !== 0) this.counters.errors++;
        send(encodeSimpleReply(error, req.handle));
        if (data && error === 0) send(data);
      };
      const bad = (why: string): void => {
        this.problem(`NBD ${this.opts.socketPath}: ${name} at offset ${req.offset}, length ${req.length}: ${why}`);
        reply(NBD_ERR.EINVAL);
      };
      const ranged = req.type === CMD.READ || req.type === CMD.WRITE || req.type === CMD.TRIM || req.type === CMD.WRITE_ZEROES;
      if (ranged && req.offset + req.length > size) {
        bad(`out of range: the export has ${size} bytes`);
        continue;
      }
      if (ranged && req.type !== CMD.READ && (req.offset % SECTOR_BYTES !== 0 || req.length % SECTOR_BYTES !== 0)) {
        bad(`not aligned to ${SECTOR_BYTES}-byte sectors`);
        continue;
      }
      const delay = faults.delayMs();
      if (delay > 0) await sleep(delay);
      // QEMU was killed while the request waited: it never completes.
      if (socket.destroyed) return;
      const fua = (req.flags & CMD_FLAG_FUA) !== 0;
      try {
        switch (req.type) {
          case CMD.READ: {
            if (req.length > MAX_REQUEST_BYTES) {
              bad(`exceeds the ${MAX_REQUEST_BYTES}-byte request limit`);
              break;
            }
            const failed = faults.readFault(req.offset, req.length);
            if (failed?.mode === 'eio') {
              reply(NBD_ERR.EIO);
              break;
            }
            const data = store.read(req.offset, req.length);
            this.counters.reads++;
            this.counters.bytesRead += req.length;
            // wrong-bytes: the stored bytes stay; the reader gets every byte of the range with its lowest bit flipped.
            reply(0, failed ? flipRange(data, req.offset, failed) : data);
            break;
          }
          case CMD.WRITE:
          case CMD.TRIM:
          case CMD.WRITE_ZEROES: {
            if (faults.writeFails(req.offset, req.length)) {
              reply(NBD_ERR.EIO);
              break;
            }
            const op = req.type === CMD.WRITE ? 'write' : req.type === CMD.TRIM ? 'trim' : 'write-zeroes';
            this.logOp({ op, fua, submitUs, offset: req.offset, length: req.length, data: payload });
            if (req.type === CMD.WRITE) {
              store.write(req.offset, payload!, fua);
              this.counters.writes++;
              if (fua) this.counters.fuaWrites++;
              this.counters.bytesWritten += req.length;
            } else {
              // TRIM reads back as zeros here (allowed: trimmed data is unspecified).
              for (let at = 0; at < req.length; at += MAX_REQUEST_BYTES) {
                const n = Math.min(MAX_REQUEST_BYTES, req.length - at);
                store.write(req.offset + at, Buffer.alloc(n), fua);
              }
              if (req.type === CMD.TRIM) this.counters.trims++;
              else this.counters.writeZeroes++;
            }
            reply(0);
            break;
          }
          case CMD.FLUSH: {
            if (faults.flushFails()) {
              reply(NBD_ERR.EIO);
              break;
            }
            store.flush();
            this.logOp({ op: 'flush', fua: false, submitUs, offset: 0, length: 0, data: null });
            this.counters.flushes++;
            reply(0);
            break;
          }
          default:
            this.problem(`NBD ${this.opts.socketPath}: unsupported ${name} at offset ${req.offset}`);
            reply(NBD_ERR.EINVAL);
        }
      } catch (err) {
        if (err instanceof WriteLogFullError) {
          this.writeLogFull ??= err;
          this.problem(err.message);
          reply(NBD_ERR.ENOSPC);
          continue;
        }
        this.problem(`NBD ${this.opts.socketPath}: ${name} at offset ${req.offset}, length ${req.length} failed: ${(err as Error).message}`);
        reply(NBD_ERR.EIO);
      }
    }
  }

  private logOp(e: { op: 'write' | 'flush' | 'trim' | 'write-zeroes'; fua: boolean; submitUs: number; offset: number; length: number; data: Buffer | null }): void {
    // Before the store changes: a full log refuses the request, so the log never misses a completed write.
    const lie = this.opts.store.liesAboutFlush && (e.op === 'flush' || e.fua);
    this.opts.writeLog?.append({ ...e, data: e.op === 'write' ? e.data : null, completeUs: hostClockUs(), ...(lie ? { notHonoured: true as const } : {}) });
  }
}

/** A copy of `data` (read at `offset`) with the bytes inside [r.from, r.to) each XORed with 1. */
function flipRange(data: Buffer, offset: number, r: { from: number; to: number }): Buffer {
  const out = Buffer.from(data);
  const a = Math.max(0, r.from - offset);
  const b = Math.min(out.length, r.to - offset);
  for (let i = a; i < b; i++) out[i] = out[i]! ^ 1;
  return out;
}
