// Host end of the append workload's acknowledgements: a loopback HTTP server a guest reaches
// through guestfwd. It keeps the highest cumulative count and when it arrived, so a trial can
// tell how many records were acknowledged before the cut and that the workload was still
// acknowledging right up to it (a workload that stopped early makes any cut look durable).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AckState {
  /** Records 0..count-1 were acknowledged. */
  count: number;
  /** Host Date.now() of the last ack that raised the count. */
  lastAckAtMs?: number;
  firstAckAtMs?: number;
  requests: number;
}

export interface AckCollector {
  port: number;
  state(): AckState;
  /** Resolves once count >= n (rejects after timeoutMs). */
  waitFor(n: number, timeoutMs: number): Promise<AckState>;
  /** Forget everything (next trial). */
  reset(): void;
  close(): Promise<void>;
}

export async function startAckCollector(opts: { port?: number } = {}): Promise<AckCollector> {
  let st: AckState = { count: 0, requests: 0 };
  const waiters = new Set<{ n: number; resolve: (s: AckState) => void }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let count: unknown;
      try {
        count = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { count?: unknown }).count;
      } catch {
        count = undefined;
      }
      if (req.method !== 'POST' || typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'expected POST with JSON {"count": <non-negative integer>}' }));
        return;
      }
      const now = Date.now();
      st.requests++;
      if (count > st.count) {
        st.count = count;
        st.lastAckAtMs = now;
        st.firstAckAtMs ??= now;
      }
      for (const w of waiters) if (st.count >= w.n) (waiters.delete(w), w.resolve({ ...st }));
      res.writeHead(204);
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    state: () => ({ ...st }),
    waitFor: (n, timeoutMs) =>
      new Promise((resolve, reject) => {
        if (st.count >= n) return resolve({ ...st });
        const w = {
          n,
          resolve: (s: AckState) => {
            clearTimeout(timer);
            resolve(s);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`ack collector on 127.0.0.1:${port}: ${st.count} of ${n} records acknowledged after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(w);
      }),
    reset: () => {
      st = { count: 0, requests: 0 };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
