// A real standalone broker process (`durolab broker`, RF 1) on loopback: produce and fetch,
// and bad input of every kind — each gets a clear error, appends nothing, loses nothing, and
// the broker keeps serving.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch, recordsOf } from '../records/index.ts';
import { request } from './http-client.ts';
import { RECORD_BATCH_TYPE } from './http-util.ts';
import {
  batchOf,
  logHash,
  partitionMetrics,
  produce,
  readAllValues,
  recordsPath,
  startBrokerProcess,
  tempDir,
  waitFor,
  type BrokerProcess,
} from './test-support.ts';

const MAX = 64 * 1024;
let dir: string;
let broker: BrokerProcess;
let url: string;

function brokerArgs(): string[] {
  return [
    '--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 't:2', '--topic', 'other:1',
    '--set', `message.max.bytes=${MAX}`,
    '--set', 'http.headers.timeout.ms=1000',
    '--set', 'http.request.timeout.ms=1500',
  ];
}

beforeAll(async () => {
  dir = tempDir('broker-test');
  broker = await startBrokerProcess(brokerArgs());
  url = broker.url;
});

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function post(body: Buffer | string, opts: { query?: string; type?: string; topic?: string; partition?: number } = {}) {
  const a = await request(`${recordsPath(url, opts.topic ?? 't', opts.partition ?? 0)}${opts.query ?? '?acks=1'}`, {
    method: 'POST',
    headers: { 'content-type': opts.type ?? RECORD_BATCH_TYPE },
    body: typeof body === 'string' ? Buffer.from(body) : body,
    timeoutMs: 10_000,
  });
  return { status: a.status, headers: a.headers, json: a.body.length ? (JSON.parse(a.body.toString('utf8')) as Record<string, unknown>) : {} };
}

/** Sends raw bytes on a fresh connection; resolves with what came back when the server closed it. */
function raw(bytes: Buffer | string, opts: { halfClose?: boolean; waitMs?: number } = {}): Promise<{ text: string; closedByServer: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const t0 = Date.now();
    const s = net.connect(Number(u.port), u.hostname);
    let text = '';
    let settled = false;
    const done = (closedByServer: boolean): void => {
      if (settled) return;
      settled = true;
      s.destroy();
      resolve({ text, closedByServer, ms: Date.now() - t0 });
    };
    s.on('data', (d) => (text += d.toString('latin1')));
    s.on('end', () => done(true));
    s.on('close', () => done(true));
    s.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? done(true) : reject(e)));
    s.write(bytes, () => {
      if (opts.halfClose) s.end();
    });
    setTimeout(() => done(false), opts.waitMs ?? 5000);
  });
}

describe('durolab broker (standalone, RF 1)', () => {
  it('produces binary and JSON batches and fetches them back, binary and as JSON', async () => {
    const a = await post(batchOf(['a0', 'a1', 'a2']));
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ baseOffset: 0, lastOffset: 2, hw: 3 });
    const j = await post(JSON.stringify({ records: [{ key: 'k', value: 'j0', headers: { h: 'v' } }, { value: null }] }), { type: 'application/json' });
    expect(j.json).toMatchObject({ baseOffset: 3, lastOffset: 4, hw: 5 });

    const bin = await request(`${recordsPath(url, 't')}?offset=0`);
    expect(bin.headers['content-type']).toBe(RECORD_BATCH_TYPE);
    expect(bin.headers['x-high-watermark']).toBe('5');
    expect(bin.headers['x-next-offset']).toBe('5');
    expect([...recordsOf(bin.body)].map((r) => r.value?.toString() ?? null)).toEqual(['a0', 'a1', 'a2', 'j0', null]);

    const js = await request(`${recordsPath(url, 't')}?offset=3`, { headers: { accept: 'application/json' } });
    const doc = JSON.parse(js.body.toString()) as { records: Array<Record<string, unknown>>; highWatermark: number };
    expect(doc.highWatermark).toBe(5);
    expect(doc.records[0]).toMatchObject({ offset: 3, key: 'k', value: 'j0', headers: [{ key: 'h', value: 'v' }] });
    expect(doc.records[1]).toMatchObject({ offset: 4, key: null, value: null });

    const a0 = await post(batchOf(['z']), { query: '?acks=0' });
    expect(a0.status).toBe(204);
    await waitFor('acks=0 record appended', async () => (await partitionMetrics(url, 't')).leo === 6);
  });

  it('long-polls a consumer fetch until a produce moves the HW', async () => {
    const leo = (await partitionMetrics(url, 't', 1)).leo;
    const t0 = Date.now();
    const pending = request(`${recordsPath(url, 't', 1)}?offset=${leo}&maxWaitMs=5000`);
    await new Promise((r) => setTimeout(r, 200));
    await post(batchOf(['late']), { partition: 1 });
    const a = await pending;
    expect(Date.now() - t0).toBeLessThan(4000);
    expect([...recordsOf(a.body)].map((r) => r.value?.toString())).toEqual(['late']);
    // A long poll may outlast http.request.timeout.ms (1.5 s): that limit is on receiving the request.
    const t1 = Date.now();
    const empty = await request(`${recordsPath(url, 't', 1)}?offset=${leo + 1}&maxWaitMs=2500`);
    expect(empty.status).toBe(200);
    expect(empty.body.length).toBe(0);
    expect(empty.headers['x-high-watermark']).toBe(String(leo + 1));
    expect(Date.now() - t1).toBeGreaterThanOrEqual(2400);
  });

  it('refuses to start on a port in use, naming --listen', async () => {
    const port = new URL(url).port;
    const other = tempDir('broker-test-port');
    try {
      await expect(startBrokerProcess(['--id', '2', '--data', other, '--listen', `127.0.0.1:${port}`, '--topic', 'x:1'])).rejects.toThrow(
        new RegExp(`--listen 127\\.0\\.0\\.1:${port}: cannot listen: .*EADDRINUSE`),
      );
      await expect(startBrokerProcess(['--id', '2', '--data', other, '--set', 'flush=sometimes'])).rejects.toThrow(/--set flush=sometimes/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('answers bogus query values with 400 INVALID_REQUEST naming the parameter, appending nothing', async () => {
    const before = await partitionMetrics(url, 't');
    const cases: Array<[string, string, 'POST' | 'GET']> = [
      ['?acks=2', 'acks', 'POST'],
      ['?acks=1&timeoutMs=abc', 'timeoutMs', 'POST'],
      ['?acks=1&timeoutMs=0', 'timeoutMs', 'POST'],
      ['?acks=1&bogus=1', 'bogus', 'POST'],
      ['?offset=-5', 'offset', 'GET'],
      ['?offset=0&maxBytes=0', 'maxBytes', 'GET'],
      ['?offset=0&maxWaitMs=1e3', 'maxWaitMs', 'GET'],
      ['?offset=0&replicaId=2', 'leaderEpoch', 'GET'],
    ];
    for (const [query, parameter, method] of cases) {
      const a =
        method === 'POST'
          ? await post(batchOf(['never']), { query })
          : await request(`${recordsPath(url, 't')}${query}`).then((r) => ({ status: r.status, json: JSON.parse(r.body.toString()) as Record<string, unknown> }));
      expect(a.status, query).toBe(400);
      expect(a.json.error, query).toBe('INVALID_REQUEST');
      expect(a.json.parameter, query).toBe(parameter);
      expect(String(a.json.message), query).toContain(parameter);
    }
    const bad = await request(`${url}/v1/topics/t/partitions/x/records?offset=0`);
    expect(bad.status).toBe(400);
    const beyond = await request(`${recordsPath(url, 't')}?offset=999999`);
    expect(beyond.status).toBe(416);
    expect(JSON.parse(beyond.body.toString()).error).toBe('OFFSET_OUT_OF_RANGE');
    expect((await partitionMetrics(url, 't')).leo).toBe(before.leo);
  });

  it('rejects a wrong content type (415, listing the accepted ones), unknown topics and partitions (404) and bad JSON (400)', async () => {
    const before = await partitionMetrics(url, 't');
    const t = await post('x', { type: 'text/plain' });
    expect(t.status).toBe(415);
    expect(t.json.error).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(t.json.accepted).toEqual([RECORD_BATCH_TYPE, 'application/octet-stream', 'application/json']);
    const u = await post(batchOf(['x']), { topic: 'nope' });
    expect(u.status).toBe(404);
    expect(u.json.error).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect((await post(batchOf(['x']), { partition: 7 })).status).toBe(404);
    expect((await request(`${recordsPath(url, 'nope')}?offset=0`)).status).toBe(404);
    for (const body of ['{', '{"records":[]}', '{"records":[{"key":"k"}]}', '{"records":[{"value":5}]}', '{"records":[{"value":"v","extra":1}]}']) {
      const j = await post(body, { type: 'application/json' });
      expect(j.status, body).toBe(400);
      expect(j.json.error, body).toBe('INVALID_REQUEST');
    }
    expect((await partitionMetrics(url, 't')).leo).toBe(before.leo);
  });

  it('rejects bodies above message.max.bytes with 413 while streaming, without buffering them, and keeps serving', async () => {
    const before = await partitionMetrics(url, 't');
    const big = encodeBatch({ records: [{ value: Buffer.alloc(MAX, 1) }] });
    const a = await post(big);
    expect(a.status).toBe(413);
    expect(a.json.error).toBe('MESSAGE_TOO_LARGE');
    expect(a.headers.connection).toBe('close');
    // Chunked, no content-length: the cap is found while reading and the rest is never read.
    const head = `POST /v1/topics/t/partitions/0/records?acks=1 HTTP/1.1\r\nhost: x\r\ncontent-type: ${RECORD_BATCH_TYPE}\r\ntransfer-encoding: chunked\r\n\r\n`;
    const chunk = Buffer.alloc(16 * 1024, 7);
    const chunks = Array.from({ length: 8 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    const r = await raw(Buffer.concat([Buffer.from(head), ...chunks]), { waitMs: 5000 });
    expect(r.text).toMatch(/^HTTP\/1\.1 413/);
    expect(r.closedByServer).toBe(true);
    const m = await partitionMetrics(url, 't');
    expect(m.leo).toBe(before.leo);
    expect((await post(batchOf(['after-413']))).status).toBe(200);
  });

  it('works with curl, including Expect: 100-continue, and refuses an oversized body before it is sent', async () => {
    const big = JSON.stringify({ records: [{ value: 'x'.repeat(2000) }] });
    const ok = execFileSync('curl', ['-s', '-X', 'POST', `${recordsPath(url, 't', 1)}?acks=1`, '-H', 'content-type: application/json', '--data-binary', big], { encoding: 'utf8' });
    expect(JSON.parse(ok)).toHaveProperty('lastOffset');
    const file = path.join(dir, 'huge.bin');
    writeFileSync(file, Buffer.alloc(4 * MAX, 1));
    const t0 = Date.now();
    const out = execFileSync('curl', ['-s', '-w', '\n%{http_code}', '-X', 'POST', `${recordsPath(url, 't', 1)}?acks=1`, '-H', `content-type: ${RECORD_BATCH_TYPE}`, '--data-binary', `@${file}`], { encoding: 'utf8' });
    const [body, code] = out.split('\n');
    expect(code).toBe('413');
    expect(JSON.parse(body).error).toBe('MESSAGE_TOO_LARGE');
    // curl waits up to 1 s for "100 Continue" when it gets nothing; the answer came at once.
    expect(Date.now() - t0).toBeLessThan(900);
  });

  it('drops truncated, half-closed and slow (slowloris) requests without appending, and keeps serving', async () => {
    const before = await partitionMetrics(url, 't');
    const batch = batchOf(['cut-short']);
    const head = `POST /v1/topics/t/partitions/0/records?acks=1 HTTP/1.1\r\nhost: x\r\ncontent-type: ${RECORD_BATCH_TYPE}\r\ncontent-length: ${batch.length}\r\n\r\n`;
    // Half of the body, then FIN: the request can never complete.
    const half = await raw(Buffer.concat([Buffer.from(head), batch.subarray(0, batch.length >> 1)]), { halfClose: true });
    expect(half.closedByServer).toBe(true);
    expect(half.text).not.toMatch(/HTTP\/1\.1 200/);
    // Half of the body, then silence: http.request.timeout.ms (1.5 s) ends it.
    const slowBody = await raw(Buffer.concat([Buffer.from(head), batch.subarray(0, 10)]), { waitMs: 6000 });
    expect(slowBody.closedByServer).toBe(true);
    expect(slowBody.ms).toBeLessThan(5000);
    // Headers never finished: http.headers.timeout.ms (1 s) ends it.
    const slowHeaders = await raw('POST /v1/topics/t/partitions/0/records HTTP/1.1\r\nhost: x\r\n', { waitMs: 6000 });
    expect(slowHeaders.closedByServer).toBe(true);
    expect(slowHeaders.ms).toBeLessThan(5000);
    // Not HTTP at all.
    const garbage = await raw('\x16\x03\x01 not http\r\n\r\n');
    expect(garbage.text).toMatch(/^HTTP\/1\.1 400/);
    expect((await partitionMetrics(url, 't')).leo).toBe(before.leo);
    const ok = await post(batchOf(['still-serving']));
    expect(ok.status).toBe(200);
    const metrics = JSON.parse((await request(`${url}/v1/metrics`)).body.toString()) as { http: { clientGone: number; clientErrors: number } };
    expect(metrics.http.clientGone + metrics.http.clientErrors).toBeGreaterThanOrEqual(3);
  });

  it('property: a mutated batch is either appended whole or rejected with a clear error; earlier records stay intact', async () => {
    // Stamped by the leader (so not covered by the CRC): baseOffset 0-7, partitionLeaderEpoch 12-15.
    // The two high bytes of baseOffset can make it exceed 2^53, which the codec rejects as
    // value-out-of-range before stamping; either answer is fine there.
    const stamped = (pos: number): boolean => (pos >= 2 && pos < 8) || (pos >= 12 && pos < 16);
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), pos: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
      fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat() }),
      fc.record({ kind: fc.constant('magic' as const), magic: fc.integer({ min: 0, max: 255 }).filter((m) => m !== 2) }),
      fc.record({ kind: fc.constant('append' as const), junk: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
      fc.record({ kind: fc.constant('length' as const), delta: fc.integer({ min: -64, max: 64 }).filter((d) => d !== 0) }),
      fc.record({ kind: fc.constant('none' as const) }),
    );
    let accepted = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 6 }), mutation, async (values, m) => {
        const good = batchOf(values);
        let body = Buffer.from(good);
        let mustAccept = false;
        switch (m.kind) {
          case 'flip': {
            const pos = m.pos % body.length;
            body[pos] ^= m.xor;
            mustAccept = stamped(pos);
            break;
          }
          case 'truncate':
            body = body.subarray(0, m.keep % body.length);
            break;
          case 'magic':
            body[16] = m.magic;
            break;
          case 'append':
            body = Buffer.concat([body, Buffer.from(m.junk)]);
            break;
          case 'length':
            body.writeInt32BE(body.readInt32BE(8) + m.delta, 8);
            break;
          case 'none':
            mustAccept = true;
        }
        const before = await partitionMetrics(url, 'other');
        const prefix = await logHash(url, 'other', 0, before.leo);
        const a = await post(body, { topic: 'other' });
        const after = await partitionMetrics(url, 'other');
        if (a.status === 200) {
          accepted++;
          expect(a.json.baseOffset).toBe(before.leo);
          expect(after.leo).toBe(before.leo + values.length);
        } else {
          rejected++;
          expect(mustAccept, `${m.kind}: ${JSON.stringify(a.json)}`).toBe(false);
          expect([400, 413]).toContain(a.status);
          expect(['CORRUPT_MESSAGE', 'MESSAGE_TOO_LARGE', 'INVALID_REQUEST']).toContain(a.json.error);
          expect(String(a.json.message).length).toBeGreaterThan(10);
          expect(after.leo).toBe(before.leo);
        }
        expect((await logHash(url, 'other', 0, before.leo)).hash).toBe(prefix.hash);
      }),
      { numRuns: 120 },
    );
    expect(accepted).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });

  it('shuts down cleanly on SIGTERM and recovers (with data intact) after SIGKILL', async () => {
    const values = await readAllValues(url, 't');
    expect(values.length).toBeGreaterThan(5);
    broker.kill('SIGTERM');
    expect(await broker.exited).toBe(0);
    broker = await startBrokerProcess(brokerArgs());
    url = broker.url;
    const h1 = JSON.parse((await request(`${url}/v1/health`)).body.toString()) as { recovery: Array<{ topic: string; partition: number; cleanShutdown: boolean }> };
    expect(h1.recovery.find((r) => r.topic === 't' && r.partition === 0)?.cleanShutdown).toBe(true);
    expect(await readAllValues(url, 't')).toEqual(values);

    const more = await produce(url, 't', ['before-kill'], '1');
    expect(more.status).toBe(200);
    broker.kill('SIGKILL');
    await broker.exited;
    broker = await startBrokerProcess(brokerArgs());
    url = broker.url;
    const h2 = JSON.parse((await request(`${url}/v1/health`)).body.toString()) as { recovery: Array<{ topic: string; partition: number; cleanShutdown: boolean }> };
    expect(h2.recovery.find((r) => r.topic === 't' && r.partition === 0)?.cleanShutdown).toBe(false);
    // SIGKILL is not a power cut: the page cache kept every write.
    expect(await readAllValues(url, 't')).toEqual([...values, 'before-kill']);
  });
});
