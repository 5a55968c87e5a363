// Test support (not product code): a TCP proxy in front of one broker's Kafka listener that
// loses Produce answers, as a network does when a connection breaks after the broker appended
// a batch but before the client heard back. It swallows the first `lose` Produce responses and
// closes that client connection, so a real client retries a batch the broker already has.
// Metadata answers are rewritten to name the proxy, so clients keep talking through it.
import net from 'node:net';
import { decodeResponse, encodeResponse, readRequestPrefix } from '../../protocol/frame.ts';
import { API_KEYS, apiSpec } from '../../protocol/messages.ts';
import type { Struct } from '../../protocol/schema.ts';

export interface LostAnswerProxy {
  address: string;
  /** Produce answers swallowed so far. */
  lost(): number;
  close(): Promise<void>;
}

function frames(onFrame: (f: Buffer) => void): (chunk: Buffer) => void {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const n = buf.readInt32BE(0);
      onFrame(buf.subarray(0, 4 + n));
      buf = buf.subarray(4 + n);
    }
  };
}

export async function startLostAnswerProxy(broker: string, lose: number): Promise<LostAnswerProxy> {
  const i = broker.lastIndexOf(':');
  const target = { host: broker.slice(0, i), port: Number(broker.slice(i + 1)) };
  let lost = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const pending = new Map<number, { apiKey: number; version: number }>();
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on(
      'data',
      frames((f) => {
        const h = readRequestPrefix(f.subarray(4));
        pending.set(h.correlationId, { apiKey: h.apiKey, version: h.apiVersion });
        upstream.write(f);
      }),
    );
    upstream.on(
      'data',
      frames((f) => {
        const correlationId = f.readInt32BE(4);
        const req = pending.get(correlationId);
        pending.delete(correlationId);
        if (req?.apiKey === API_KEYS.Produce && lost < lose) {
          lost++;
          kill();
          return;
        }
        if (req?.apiKey === API_KEYS.Metadata) {
          const spec = apiSpec(API_KEYS.Metadata)!;
          const { body } = decodeResponse(spec, req.version, f.subarray(4));
          const port = (server.address() as net.AddressInfo).port;
          body.Brokers = (body.Brokers as Struct[]).map((b) => ({ ...b, Host: '127.0.0.1', Port: port }));
          client.write(encodeResponse(spec, req.version, correlationId, body));
          return;
        }
        client.write(f);
      }),
    );
    for (const s of [client, upstream]) {
      s.on('error', kill);
      s.on('close', () => {
        sockets.delete(s);
        kill();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    lost: () => lost,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
