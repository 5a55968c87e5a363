// Request/response plumbing shared by the broker and controller servers: capped body
// reading, JSON answers, Kafka-named errors and strict query parsing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BrokerError, brokerErrorFromStorage } from '../replication/index.ts';
import { StorageError } from '../storage/index.ts';

export const RECORD_BATCH_TYPE = 'application/vnd.kafka.recordbatch.v2';

/** Smallest body allocation (made when the first bytes arrive), then doubled as needed. */
export const BODY_INITIAL_BYTES = 4 * 1024;

/**
 * Reads the whole body into one buffer that grows as bytes arrive (doubling, never past the
 * declared content-length or the cap), so memory follows what a client actually sent: a client
 * that declares 1 MiB and trickles bytes holds a few KiB, not 1 MiB. A body that arrives as
 * one chunk of its declared length (the produce path's usual case: a 16 KiB batch in one
 * socket read) is that chunk, not a copy: it pins its socket read (at most one read's bytes)
 * only as long as the request. Otherwise each chunk is copied once into the buffer (keeping
 * many small chunks would pin as many reads). The cap is enforced while streaming: an
 * oversized body is never buffered (413, and the connection is closed by the caller's answer
 * because the rest was not read).
 */
export function readBody(req: IncomingMessage, cap: number): Promise<Buffer> {
  const lengthHeader = req.headers['content-length'];
  const declared = lengthHeader === undefined ? -1 : Number(lengthHeader);
  if (declared > cap) {
    return Promise.reject(tooLarge(declared, cap));
  }
  const limit = declared >= 0 ? declared : cap;
  return new Promise<Buffer>((resolve, reject) => {
    let done = false;
    let received = 0;
    // Nothing is allocated before the first bytes arrive; a body that comes in one chunk gets
    // one allocation of exactly its size.
    let buf: Buffer = Buffer.alloc(0);
    const finish = (err: Error | null, body?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) {
        // Stop reading: the caller answers with Connection: close, which ends the socket.
        req.pause();
        reject(err);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer): void => {
      if (received === 0 && chunk.length === declared) {
        // The whole body in one chunk: no allocation, no copy (issue 14: the produce path).
        buf = chunk;
        received = declared;
        return;
      }
      const next = received + chunk.length;
      // (node's parser never hands over more than content-length bytes)
      if (next > cap) {
        finish(tooLarge(next, cap));
        return;
      }
      if (next > buf.length) {
        const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(next, buf.length * 2, BODY_INITIAL_BYTES)));
        buf.copy(grown, 0, 0, received);
        buf = grown;
      }
      chunk.copy(buf, received);
      received = next;
    };
    const onEnd = (): void => {
      if (declared >= 0 && received !== declared) {
        finish(new BrokerError('INVALID_REQUEST', `request body ended after ${received} of ${declared} bytes`));
      } else finish(null, received === buf.length ? buf : buf.subarray(0, received));
    };
    const onError = (err: Error): void => finish(new ClientGoneError(`request stream failed: ${err.message}`));
    const onClose = (): void => {
      if (!req.complete) finish(new ClientGoneError(`client closed the request after ${received} body bytes`));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The client went away mid-request: nothing to answer, nothing to append. */
export class ClientGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientGoneError';
  }
}

function tooLarge(bytes: number, cap: number): BrokerError {
  return new BrokerError('MESSAGE_TOO_LARGE', `request body of ${bytes}+ bytes exceeds message.max.bytes (${cap})`, { maxBytes: cap });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...extraHeaders,
  };
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Error answer `{error, message, ...details}`. When the request body was not (fully) read the
 * connection is closed after the answer, so the unread bytes are never parsed as a request.
 */
export function sendError(res: ServerResponse, err: BrokerError, closeConnection = false): void {
  sendJson(res, err.httpStatus, err.toJSON(), closeConnection ? { connection: 'close' } : undefined);
}

export function invalid(parameter: string, expected: string, got: string | null | undefined): BrokerError {
  return new BrokerError('INVALID_REQUEST', `query parameter ${parameter}: expected ${expected}, got ${got === null || got === undefined ? 'nothing' : `'${got}'`}`, {
    parameter,
    expected,
  });
}

/** Query parameters, rejecting names the route does not know (a typo must not be ignored). */
export function parseQuery(search: string, allowed: readonly string[]): URLSearchParams {
  const q = new URLSearchParams(search);
  for (const name of q.keys()) {
    if (!allowed.includes(name)) {
      throw new BrokerError('INVALID_REQUEST', `unknown query parameter '${name}' (allowed: ${allowed.join(', ') || 'none'})`, {
        parameter: name,
        expected: allowed.join(', '),
      });
    }
  }
  return q;
}

export function intParam(q: URLSearchParams, name: string, def: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = q.get(name);
  if (v === null) {
    if (def === undefined) throw invalid(name, `an integer in [${min}, ${max}]`, v);
    return def;
  }
  if (!/^-?\d+$/.test(v)) throw invalid(name, `an integer in [${min}, ${max}]`, v);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalid(name, `an integer in [${min}, ${max}]`, v);
  return n;
}

export function mediaType(req: IncomingMessage): string {
  const ct = req.headers['content-type'];
  if (!ct) return '';
  const semi = ct.indexOf(';');
  return (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

/** JSON request body for the small control-plane routes (never the produce hot path). */
export async function readJsonBody(req: IncomingMessage, cap = 1 << 20): Promise<unknown> {
  const type = mediaType(req);
  if (type !== 'application/json' && type !== '') {
    throw new BrokerError('UNSUPPORTED_MEDIA_TYPE', `content-type ${type}: expected application/json`, { accepted: ['application/json'] });
  }
  const body = await readBody(req, cap);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BrokerError('INVALID_REQUEST', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Converts anything thrown in a handler into a BrokerError answer (unexpected ones as 500). */
export function toBrokerError(err: unknown): BrokerError {
  if (err instanceof BrokerError) return err;
  if (err instanceof StorageError) return brokerErrorFromStorage(err);
  if (err && typeof err === 'object' && (err as { name?: string }).name === 'CorruptBatchError') {
    return new BrokerError('CORRUPT_MESSAGE', (err as Error).message);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new BrokerError('KAFKA_STORAGE_ERROR', `internal error: ${message}`);
}
