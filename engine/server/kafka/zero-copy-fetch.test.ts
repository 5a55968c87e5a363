// Zero-copy Fetch against the copy path on real broker processes over one data dir: the same
// Fetch requests answered by a broker with fetch.transfer=copy and then by one with
// fetch.transfer=sendfile on the same log give the same response frames, byte for byte:
// fetches spanning rolled segments, several partitions in one answer, a partition limit below a
// batch (the first batch whole, as Kafka answers), the log end, Fetch v11 (int32 records
// length) and v12 (compact). A fetch across a torn tail (bytes past the last whole batch in
// the active segment, as a write in flight leaves them) serves whole batches only, as the copy
// path did. A long-poll fetch
// woken by a produce that rolled the segment under it serves the new segment's batch.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBatch } from '../../records/index.ts';
import type { Struct } from '../../protocol/schema.ts';
import { request as httpRequest } from '../http-client.ts';
import { produce, startBrokerProcess, tempDir, type BrokerProcess } from '../test-support.ts';
import { rawExchange, request, response } from './kafka-client-support.ts';

const TOPIC = 'zc';
const SEGMENT_BYTES = 64 * 1024;
let dir = '';

async function start(transfer: 'copy' | 'sendfile'): Promise<BrokerProcess> {
  return startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', `${TOPIC}:2`, '--set', `segment.bytes=${SEGMENT_BYTES}`, '--set', `fetch.transfer=${transfer}`]);
}

async function stop(b: BrokerProcess): Promise<void> {
  b.kill('SIGTERM');
  await b.exited;
}

interface FetchCase {
  version: number;
  maxBytes: number;
  parts: Array<{ partition: number; offset: number; maxBytes: number }>;
}

const CASES: FetchCase[] = [
  { version: 11, maxBytes: 50 << 20, parts: [{ partition: 0, offset: 0, maxBytes: 1 << 20 }] },
  { version: 12, maxBytes: 50 << 20, parts: [{ partition: 0, offset: 0, maxBytes: 1 << 20 }] },
  { version: 12, maxBytes: 300_000, parts: [{ partition: 0, offset: 130, maxBytes: 1 << 20 }, { partition: 1, offset: 7, maxBytes: 1 << 20 }] },
  { version: 12, maxBytes: 1 << 20, parts: [{ partition: 1, offset: 333, maxBytes: 100 }] },
  { version: 4, maxBytes: 1 << 20, parts: [{ partition: 0, offset: 590, maxBytes: 1 << 20 }] },
];

function fetchRequest(c: FetchCase, correlationId: number, wait = { maxWaitMs: 0, minBytes: 0 }): Buffer {
  return request('Fetch', c.version, correlationId, {
    ReplicaId: -1,
    MaxWaitMs: wait.maxWaitMs,
    MinBytes: wait.minBytes,
    MaxBytes: c.maxBytes,
    SessionEpoch: -1,
    Topics: [{ Topic: TOPIC, Partitions: c.parts.map((p) => ({ Partition: p.partition, FetchOffset: p.offset, PartitionMaxBytes: p.maxBytes })) }],
    ForgottenTopicsData: [],
    RackId: '',
  });
}

async function answers(b: BrokerProcess): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const [i, c] of CASES.entries()) {
    const a = await rawExchange(b.kafka, fetchRequest(c, 100 + i), 1, 10_000);
    expect(a.frames, `case ${i} answered`).toHaveLength(1);
    out.push(a.frames[0]);
  }
  return out;
}

function records(frame: Buffer, version: number): Buffer[] {
  const body = response('Fetch', version, frame).body;
  return ((body.Responses as Struct[])[0].Partitions as Struct[]).map((p) => {
    expect(p.ErrorCode).toBe(0);
    return p.Records as Buffer;
  });
}

async function fetchBytes(b: BrokerProcess): Promise<{ sendfile: number; copy: number }> {
  const m = JSON.parse((await httpRequest(`${b.url}/v1/metrics`, { timeoutMs: 5000 })).body.toString('utf8')) as { kafka: { fetchBytes: { sendfile: number; copy: number } } };
  return m.kafka.fetchBytes;
}

let copyAnswers: Buffer[] = [];
let sendfileAnswers: Buffer[] = [];
let sendfileStats = { sendfile: 0, copy: 0 };
let copyStats = { sendfile: 0, copy: 0 };

beforeAll(async () => {
  dir = tempDir('zero-copy-fetch');
  const copy = await start('copy');
  try {
    // 600 records per partition in batches of 10 x ~1 KiB: ~10 segments of 64 KiB each.
    for (const partition of [0, 1]) {
      for (let b = 0; b < 60; b++) {
        const values = Array.from({ length: 10 }, (_, i) => `p${partition} b${b} r${i} ${'v'.repeat(900 + ((b * 13 + i) % 200))}`);
        const r = await produce(copy.url, TOPIC, values, '1', partition);
        expect(r.status).toBe(200);
      }
    }
    copyAnswers = await answers(copy);
    copyStats = await fetchBytes(copy);
  } finally {
    await stop(copy);
  }
  const zc = await start('sendfile');
  try {
    sendfileAnswers = await answers(zc);
    sendfileStats = await fetchBytes(zc);
  } finally {
    await stop(zc);
  }
}, 120_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('Fetch: sendfile against the copy path', () => {
  it('the log spans several segments, so the fetches cross segment rolls', () => {
    const logs = fs.readdirSync(path.join(dir, `${TOPIC}-0`)).filter((n) => n.endsWith('.log'));
    expect(logs.length).toBeGreaterThanOrEqual(8);
    const all = records(copyAnswers[0], 11)[0];
    expect(all.length).toBeGreaterThan(SEGMENT_BYTES * 4);
  });

  it('answers every fetch with the same frame, byte for byte, and only the sendfile broker used sendfile', () => {
    expect(sendfileAnswers).toHaveLength(CASES.length);
    for (const [i, frame] of sendfileAnswers.entries()) {
      expect(frame.length, `case ${i} length`).toBe(copyAnswers[i].length);
      expect(frame.equals(copyAnswers[i]), `case ${i} bytes`).toBe(true);
    }
    expect(copyStats.sendfile).toBe(0);
    expect(copyStats.copy).toBeGreaterThan(1 << 20);
    expect(sendfileStats.copy).toBe(0);
    expect(sendfileStats.sendfile).toBe(copyStats.copy);
  });

  it('a partition limit below one batch still gets that batch whole; the batches decode with valid CRCs', () => {
    const one = records(sendfileAnswers[3], 12)[0];
    const b = decodeBatch(one, 0);
    expect(b.header.baseOffset).toBe(330);
    expect(b.header.length + 12).toBe(one.length);
    let pos = 0;
    const all = records(sendfileAnswers[0], 11)[0];
    let next = 0;
    while (pos < all.length) {
      const d = decodeBatch(all, pos);
      expect(d.header.baseOffset).toBe(next);
      next = d.header.baseOffset + d.header.lastOffsetDelta + 1;
      pos += d.header.length + 12;
    }
    expect(pos).toBe(all.length);
  });
});

describe('Fetch with sendfile on a live log', () => {
  it('serves whole batches only across a torn tail, and a long poll woken by a rolling produce serves the new segment', async () => {
    const zc = await start('sendfile');
    try {
      // A torn tail: bytes past the last whole batch of the active segment (a write in flight).
      const pdir = path.join(dir, `${TOPIC}-0`);
      const active = fs.readdirSync(pdir).filter((n) => n.endsWith('.log')).sort().at(-1)!;
      fs.appendFileSync(path.join(pdir, active), Buffer.from('torn tail: half a batch header \x00\x00\x00\x01'));
      const tail = await rawExchange(zc.kafka, fetchRequest(CASES[4], 7), 1, 10_000);
      // Same bytes as the copy broker's answer before the tear (only the correlation id differs).
      expect(tail.frames[0].subarray(4).equals(copyAnswers[4].subarray(4))).toBe(true);

      // A long poll at the log end of partition 1; the produce that wakes it does not fit in the
      // active segment, so the log rolls before it is appended: the answer comes from a segment
      // that did not exist when the poll began.
      const p1 = path.join(dir, `${TOPIC}-1`);
      const logsOf = () => fs.readdirSync(p1).filter((n) => n.endsWith('.log')).sort();
      let end = 600;
      while (fs.statSync(path.join(p1, logsOf().at(-1)!)).size < SEGMENT_BYTES - 30_000) {
        expect((await produce(zc.url, TOPIC, Array.from({ length: 5 }, (_, i) => `fill ${end + i} ${'f'.repeat(1000)}`), '1', 1)).status).toBe(200);
        end += 5;
      }
      const before = logsOf().length;
      const c: FetchCase = { version: 12, maxBytes: 1 << 20, parts: [{ partition: 1, offset: end, maxBytes: 1 << 20 }] };
      const polled = rawExchange(zc.kafka, fetchRequest(c, 9, { maxWaitMs: 10_000, minBytes: 1 }), 1, 15_000);
      await new Promise((r) => setTimeout(r, 300));
      const sent = Array.from({ length: 40 }, (_, i) => `late r${i} ${'w'.repeat(1000)}`);
      expect((await produce(zc.url, TOPIC, sent, '1', 1)).status).toBe(200);
      const got = await polled;
      expect(got.frames).toHaveLength(1);
      expect(logsOf().length).toBe(before + 1);
      const recs = records(got.frames[0], 12)[0];
      const d = decodeBatch(recs, 0);
      expect(d.header.baseOffset).toBe(end);
      expect(d.header.length + 12).toBe(recs.length);
      expect(d.records.map((r) => r.value!.toString('utf8'))).toEqual(sent);
      expect((await fetchBytes(zc)).copy).toBe(0);
    } finally {
      await stop(zc);
    }
  }, 60_000);
});

