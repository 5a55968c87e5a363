// Minimal node:http client for broker-to-broker and broker-to-controller calls: keep-alive
// agents (one TCP connection reused per peer), abort signals for restarting fetchers, and a
// deadline so a stopped (SIGSTOP) peer cannot hang a loop forever.
import http from 'node:http';
import { BrokerError, ERROR_STATUS, type KafkaErrorName } from '../replication/index.ts';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  agent?: http.Agent;
  signal?: AbortSignal;
  /** Whole-request deadline, ms. */
  timeoutMs?: number;
}

export function newKeepAliveAgent(maxSockets = 8): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, keepAliveMsecs: 1000 });
}

export function request(url: string, opts: RequestOptions = {}): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
    const headers: Record<string, string | number> = { ...opts.headers };
    if (body) headers['content-length'] = body.length;
    let timer: NodeJS.Timeout | undefined;
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: opts.agent, signal: opts.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (timer) clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        if (timer) clearTimeout(timer);
        reject(err);
      });
    });
    req.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => req.destroy(new Error(`${opts.method ?? 'GET'} ${url}: no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    }
    req.end(body);
  });
}

/** Turns a `{error, message, ...}` answer back into the BrokerError the peer raised. */
export function errorFromAnswer(url: string, a: HttpAnswer): BrokerError {
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = JSON.parse(a.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    parsed = undefined;
  }
  const name = parsed?.error;
  if (typeof name === 'string' && name in ERROR_STATUS) {
    const { error: _e, message, ...details } = parsed!;
    return new BrokerError(name as KafkaErrorName, `${url}: ${String(message)}`, details);
  }
  return new BrokerError('KAFKA_STORAGE_ERROR', `${url}: HTTP ${a.status}: ${a.body.toString('utf8').slice(0, 200)}`);
}

export async function requestJson<T>(url: string, opts: RequestOptions & { json?: unknown } = {}): Promise<T> {
  const o: RequestOptions = { ...opts };
  if (opts.json !== undefined) {
    o.body = JSON.stringify(opts.json);
    o.headers = { 'content-type': 'application/json', ...opts.headers };
    o.method ??= 'POST';
  }
  const a = await request(url, o);
  if (a.status < 200 || a.status >= 300) throw errorFromAnswer(url, a);
  return JSON.parse(a.body.toString('utf8')) as T;
}
