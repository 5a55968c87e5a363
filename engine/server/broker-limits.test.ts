// The broker's resource limits, each against a real `durolab broker` process under load:
// request bodies are buffered as bytes arrive (300 trickling clients cost little memory and a
// normal client is still served), fetch.max.bytes caps a fetch asking for 1 GiB,
// max.connections refuses the connection over the cap without disturbing the others, and the
// admin log hash reads a large log in chunks while produce keeps being served.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch, iterateBatches, recordsOf } from '../records/index.ts';
import { DEFAULT_FETCH_MAX_BYTES } from './config.ts';
import { request } from './http-client.ts';
import { RECORD_BATCH_TYPE } from './http-util.ts';
import { partitionMetrics, produce, recordsPath, startBrokerProcess, tempDir, type BrokerProcess } from './test-support.ts';

interface Running {
  broker: BrokerProcess;
  dir: string;
}

async function start(name: string, sets: string[]): Promise<Running> {
  const dir = tempDir(name);
  const broker = await startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 't:1', ...sets.flatMap((s) => ['--set', s])]);
  return { broker, dir };
}

async function stop(r: Running | undefined): Promise<void> {
  if (!r) return;
  r.broker.kill('SIGTERM');
  await r.broker.exited;
  rmSync(r.dir, { recursive: true, force: true });
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`/proc/${pid}/status has no VmRSS line`);
  return Number(m[1]) * 1024;
}

async function arrayBufferBytes(url: string): Promise<number> {
  const a = await request(`${url}/v1/metrics`, { timeoutMs: 5000 });
  return (JSON.parse(a.body.toString('utf8')) as { memory: { arrayBuffers: number } }).memory.arrayBuffers;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One batch of `count` records of `bytes` each. */
function bigBatch(count: number, bytes: number, fill: number): Buffer {
  return encodeBatch({ records: Array.from({ length: count }, () => ({ value: Buffer.alloc(bytes, fill) })) });
}

async function produceBatch(url: string, batch: Buffer, timeoutMs = 10_000): Promise<number> {
  const a = await request(`${recordsPath(url, 't')}?acks=1`, { method: 'POST', headers: { 'content-type': RECORD_BATCH_TYPE }, body: batch, timeoutMs });
  if (a.status !== 200) throw new Error(`produce: HTTP ${a.status} ${a.body.toString('utf8')}`);
  return a.status;
}

/** Produces 1-KiB batches in a loop until stopped; every answer must be 200. */
function backgroundLoad(url: string): { stop: () => Promise<{ ok: number; maxMs: number }> } {
  let running = true;
  let ok = 0;
  let maxMs = 0;
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      await produceBatch(url, bigBatch(1, 1024, 7), 5000);
      maxMs = Math.max(maxMs, Date.now() - t0);
      ok++;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { ok, maxMs };
    },
  };
}

describe('request bodies grow as bytes arrive', () => {
  let r: Running;
  beforeAll(async () => (r = await start('limits-slow', [])));
  afterAll(() => stop(r));

  it('300 clients trickling 1-MiB bodies grow RSS by < 32 MiB while a normal client is served within its timeout', async () => {
    const url = new URL(r.broker.url);
    // Warm up the produce path first so the baseline includes its steady-state allocations.
    for (let i = 0; i < 50; i++) await produce(r.broker.url, 't', [`warm-${i}`], '1');
    await sleep(300);
    const before = rssBytes(r.broker.pid);
    const buffersBefore = await arrayBufferBytes(r.broker.url);

    const declared = 1_000_000;
    const sockets: net.Socket[] = [];
    const closedEarly: string[] = [];
    for (let i = 0; i < 300; i++) {
      const s = net.connect(Number(url.port), url.hostname);
      s.on('error', (e) => closedEarly.push(e.message));
      s.write(`POST /v1/topics/t/partitions/0/records?acks=1 HTTP/1.1\r\nhost: x\r\ncontent-type: ${RECORD_BATCH_TYPE}\r\ncontent-length: ${declared}\r\n\r\n`);
      sockets.push(s);
    }
    // Every client sends 1 KiB every 500 ms for 8 s (16 KiB of its declared 1 MB): the old
    // reader allocated 300 x 1 MB up front (~290 MiB of array buffers, whether or not their
    // pages were touched); growing buffers hold ~300 x 16 KiB.
    const served: number[] = [];
    const deadline = Date.now() + 8000;
    let tick = 0;
    while (Date.now() < deadline) {
      for (const s of sockets) if (!s.destroyed) s.write(Buffer.alloc(1024, tick & 0xff));
      tick++;
      const t0 = Date.now();
      const a = await produce(r.broker.url, 't', [`normal-${tick}`], '1', 0, 2000);
      expect(a.status).toBe(200);
      served.push(Date.now() - t0);
      await sleep(Math.max(0, 500 - (Date.now() - t0)));
    }
    const after = rssBytes(r.broker.pid);
    // What the broker allocated for buffers (V8's count, touched or not): RSS alone can hide
    // an up-front 1 MB allocation whose pages are never written.
    const buffersGrew = (await arrayBufferBytes(r.broker.url)) - buffersBefore;
    const open = sockets.filter((s) => !s.destroyed).length;
    for (const s of sockets) s.destroy();

    expect(closedEarly).toEqual([]);
    expect(open).toBe(300);
    expect(served.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...served)).toBeLessThan(2000);
    const grewMiB = ((after - before) / 1048576).toFixed(1);
    const buffersMiB = (buffersGrew / 1048576).toFixed(1);
    console.log(`300 trickling clients: broker RSS grew ${grewMiB} MiB, array buffers ${buffersMiB} MiB; normal produce max ${Math.max(...served)} ms`);
    expect(buffersGrew, `array buffers grew ${buffersMiB} MiB`).toBeLessThan(32 * 1024 * 1024);
    expect(after - before, `RSS grew ${grewMiB} MiB`).toBeLessThan(32 * 1024 * 1024);
    // The slow bodies are still incomplete: nothing of theirs was appended.
    expect((await partitionMetrics(r.broker.url, 't')).leo).toBe(50 + tick);
  });
});

describe('fetch.max.bytes (default 50 MiB) and the bounded log hash', () => {
  let r: Running;
  const batches = 56;
  beforeAll(async () => {
    r = await start('limits-fetch', []);
    // 56 batches of ~1 MB (16 records of 64000 bytes): 57 MB on disk, more than fetch.max.bytes.
    for (let i = 0; i < batches; i++) await produceBatch(r.broker.url, bigBatch(16, 64_000, i));
  });
  afterAll(() => stop(r));

  it('a fetch asking for 1 GiB under produce load is answered with at most fetch.max.bytes, read in chunks', async () => {
    const url = r.broker.url;
    const load = backgroundLoad(url);
    // Produces sent after the fetch request and answered before its headers: the 50 MiB were
    // read in 1 MiB chunks with the event loop free in between, not in one synchronous read.
    let headersArrived = false;
    const fetched = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = http.get(`${recordsPath(url, 't')}?offset=0&maxBytes=${2 ** 30}`, { agent: false }, (res) => {
        headersArrived = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.setTimeout(20_000, () => req.destroy(new Error('fetch: no answer within 20 s')));
      req.on('error', reject);
    });
    let beforeHeaders = 0;
    while (!headersArrived) {
      await produceBatch(url, bigBatch(1, 100, 2), 5000);
      if (!headersArrived) beforeHeaders++;
    }
    const a = await fetched;
    const { ok } = await load.stop();
    expect(a.status).toBe(200);
    expect(a.body.length).toBeLessThanOrEqual(DEFAULT_FETCH_MAX_BYTES);
    // Whole batches up to the cap: the cap, not the log's end, ended the answer.
    expect(a.body.length).toBeGreaterThan(DEFAULT_FETCH_MAX_BYTES - 1_100_000);
    const next = Number(a.headers['x-next-offset']);
    expect(next).toBeLessThan(batches * 16);
    expect([...recordsOf(a.body)].length).toBe(next);
    expect(ok).toBeGreaterThan(0);
    expect(beforeHeaders).toBeGreaterThanOrEqual(1);
  });

  it('hashes a 57 MB log in 1 MiB chunks while produce is served, and the hash is that of the served bytes', async () => {
    const url = r.broker.url;
    // On the host: sha256 of every batch whose last offset is in [16, 16 * 40), read by fetch.
    const from = 16;
    const upTo = 16 * 40;
    const h = createHash('sha256');
    let offset = from;
    while (offset < upTo) {
      const f = await request(`${recordsPath(url, 't')}?offset=${offset}&maxBytes=4000000`, { timeoutMs: 10_000 });
      for (const b of iterateBatches(f.body)) {
        const last = b.header.baseOffset + b.header.lastOffsetDelta;
        if (last >= from && last < upTo) h.update(f.body.subarray(b.position, b.position + b.size));
      }
      offset = Number(f.headers['x-next-offset']);
    }
    const ranged = JSON.parse((await request(`${url}/v1/admin/log-hash?topic=t&partition=0&from=${from}&upTo=${upTo}`, { timeoutMs: 10_000 })).body.toString('utf8')) as Record<
      string,
      number | string
    >;
    expect(ranged).toMatchObject({ hash: h.digest('hex'), from, upTo, firstOffset: from, nextOffset: upTo, batches: 39 });

    // The whole log (>= 56 chunks): produces sent after the hash request are answered before it.
    const hashDone = request(`${url}/v1/admin/log-hash?topic=t&partition=0`, { timeoutMs: 20_000 });
    let answeredFirst = 0;
    let hashFinished = false;
    void hashDone.then(() => (hashFinished = true));
    while (!hashFinished) {
      await produceBatch(url, bigBatch(1, 100, 1), 5000);
      if (!hashFinished) answeredFirst++;
    }
    const whole = JSON.parse((await hashDone).body.toString('utf8')) as { chunks: number; batches: number };
    expect(whole.chunks).toBeGreaterThanOrEqual(batches);
    expect(whole.batches).toBeGreaterThanOrEqual(batches);
    expect(answeredFirst).toBeGreaterThanOrEqual(3);

    const bad = await request(`${url}/v1/admin/log-hash?topic=t&partition=0&from=10&upTo=5`, { timeoutMs: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.body.toString('utf8')).toContain('from (10) must not exceed upTo (5)');
  });
});

/** A keep-alive connection of its own (an agent with one socket), to count as one of the cap. */
function ownConnection(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}

function get(url: string, agent: http.Agent): Promise<{ status: number; body: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, reused: req.reusedSocket }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${url}: no answer within 5000 ms`)));
    req.on('error', reject);
  });
}

describe('max.connections and a small fetch.max.bytes', () => {
  let r: Running;
  const cap = 20;
  beforeAll(async () => (r = await start('limits-conn', [`max.connections=${cap}`, 'fetch.max.bytes=65536'])));
  afterAll(() => stop(r));

  it('fetch.max.bytes=65536 answers a 1 GiB fetch with at most 64 KiB of whole batches', async () => {
    for (let i = 0; i < 20; i++) await produceBatch(r.broker.url, bigBatch(4, 2500, i));
    const a = await request(`${recordsPath(r.broker.url, 't')}?offset=0&maxBytes=${2 ** 30}`, { timeoutMs: 5000 });
    expect(a.body.length).toBeLessThanOrEqual(65536);
    expect(a.body.length).toBeGreaterThan(65536 - 11_000);
    // Whole, valid batches only (iterateBatches checks each CRC and throws on a cut one).
    const sizes = [...iterateBatches(a.body)].map((b) => b.size);
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(a.body.length);
  });

  it(`with ${cap} connections open, connection ${cap + 1} is closed at once and the ${cap} keep being served`, async () => {
    const url = r.broker.url;
    // The keep-alive connections of the earlier requests (node's global agent) are closed first.
    http.globalAgent.destroy();
    await sleep(200);
    const agents = Array.from({ length: cap }, ownConnection);
    const first = await Promise.all(agents.map((a) => get(`${url}/v1/health`, a)));
    expect(first.map((x) => x.status)).toEqual(Array(cap).fill(200));

    // The extra connection: TCP accepts it (the kernel's backlog), the broker closes it without a byte.
    const u = new URL(url);
    const t0 = Date.now();
    const extra = await new Promise<{ data: string; ms: number }>((resolve) => {
      const s = net.connect(Number(u.port), u.hostname);
      let data = '';
      s.on('data', (d) => (data += d.toString('latin1')));
      s.on('error', () => {});
      s.on('close', () => resolve({ data, ms: Date.now() - t0 }));
      s.write('GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n');
      setTimeout(() => s.destroy(), 5000);
    });
    expect(extra.data).toBe('');
    expect(extra.ms).toBeLessThan(1000);

    // The served ones, under produce load on their own connections: every answer on the same socket.
    const again = await Promise.all(
      agents.map((a, i) =>
        i % 2 === 0
          ? get(`${url}/v1/health`, a)
          : new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
              const req = http.request(`${recordsPath(url, 't')}?acks=1`, { method: 'POST', agent: a, headers: { 'content-type': RECORD_BATCH_TYPE } }, (res) => {
                res.resume();
                res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
              });
              req.on('error', reject);
              req.end(bigBatch(1, 100, i));
            }),
      ),
    );
    expect(again.map((x) => x.status)).toEqual(Array(cap).fill(200));
    expect(again.every((x) => x.reused)).toBe(true);
    const metrics = JSON.parse((await get(`${url}/v1/metrics`, agents[0])).body) as { http: { connectionsRefused: number } };
    expect(metrics.http.connectionsRefused).toBe(1);

    // A freed slot is usable again.
    agents[cap - 1].destroy();
    await sleep(200);
    const fresh = ownConnection();
    expect((await get(`${url}/v1/health`, fresh)).status).toBe(200);
    fresh.destroy();
    for (const a of agents) a.destroy();
  });
});
