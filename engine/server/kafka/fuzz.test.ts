// Seeded fuzzing of the Kafka listener: valid request frames of every supported API, mutated
// (bytes flipped or set, frames cut or extended, size prefixes changed; the mutations drawn by
// fast-check from a fixed seed), sent to a live broker process over a few connections at once.
// Each mutated frame is followed on its connection by a valid ApiVersions sentinel: the
// sentinel's answer proves the broker handled the frame and still serves that connection; a
// closed connection (Kafka's answer to a frame that does not parse) is reopened. A frame whose
// size prefix no longer matches its bytes goes last on its connection, which is then ended.
// Whatever happens the broker keeps serving, never fails internally, and its log holds only
// whole, valid batches that were sent.
import { rmSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDump } from '../../cli/dump-command.ts';
import { encodeBatch } from '../../records/index.ts';
import { request as httpRequest } from '../http-client.ts';
import { startBrokerProcess, tempDir, type BrokerProcess } from '../test-support.ts';
import net from 'node:net';
import { call, kcatConsume, request, requireKcat } from './kafka-client-support.ts';

const RUNS = Number(process.env.DUROLAB_FUZZ_RUNS ?? 100_000);
const TIME_LIMIT_MS = Number(process.env.DUROLAB_FUZZ_MS ?? 110_000);
const SEED = Number(process.env.DUROLAB_FUZZ_SEED ?? 20261201);
const CONNECTIONS = 12;
/** A sentinel not answered within this (a mutated Fetch may long-poll) ends that connection. */
const STALL_MS = 1500;
let broker: BrokerProcess;
let dir = '';

beforeAll(async () => {
  await requireKcat();
  dir = tempDir('kafka-fuzz');
  broker = await startBrokerProcess(['--id', '3', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 'fz:1', '--set', 'socket.request.max.bytes=65536']);
});

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const VALID_VALUES = new Set<string>();
function batchOf(tag: string): Buffer {
  const values = [0, 1, 2].map((i) => `fuzz ${tag} record ${i}`);
  for (const v of values) VALID_VALUES.add(v);
  return encodeBatch({ producerId: 77, producerEpoch: 0, baseSequence: -1, records: values.map((v) => ({ key: Buffer.from(tag), value: Buffer.from(v) })) });
}

function seeds(): Buffer[] {
  const produce = (v: number, acks: number): Buffer =>
    request('Produce', v, 1, { TransactionalId: null, Acks: acks, TimeoutMs: 1000, TopicData: [{ Name: 'fz', PartitionData: [{ Index: 0, Records: batchOf(`p${v}a${acks}`) }] }] });
  return [
    produce(3, -1),
    produce(7, 1),
    produce(9, -1),
    produce(9, 0),
    request('Fetch', 12, 2, { ReplicaId: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: 65536, SessionEpoch: -1, Topics: [{ Topic: 'fz', Partitions: [{ Partition: 0, FetchOffset: 0, PartitionMaxBytes: 65536 }] }], ForgottenTopicsData: [], RackId: '' }),
    request('Fetch', 4, 3, { ReplicaId: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: 65536, Topics: [{ Topic: 'fz', Partitions: [{ Partition: 0, FetchOffset: 0, PartitionMaxBytes: 65536 }] }] }),
    request('Metadata', 12, 4, { Topics: null, AllowAutoTopicCreation: false }),
    request('Metadata', 1, 5, { Topics: [{ Name: 'fz' }] }),
    request('ListOffsets', 7, 6, { ReplicaId: -1, Topics: [{ Name: 'fz', Partitions: [{ PartitionIndex: 0, Timestamp: -1 }] }] }),
    request('ApiVersions', 3, 7, { ClientSoftwareName: 'fuzz', ClientSoftwareVersion: '1' }),
    request('InitProducerId', 4, 8, { TransactionalId: null, TransactionTimeoutMs: 1000, ProducerId: -1, ProducerEpoch: -1 }),
    // Group APIs that answer at once (a JoinGroup waits for the other members by design).
    request('FindCoordinator', 2, 9, { Key: 'fz-group', KeyType: 0 }),
    request('SyncGroup', 3, 10, { GroupId: 'fz-group', GenerationId: 1, MemberId: 'm', GroupInstanceId: null, Assignments: [{ MemberId: 'm', Assignment: Buffer.from([0, 1]) }] }),
    request('Heartbeat', 3, 11, { GroupId: 'fz-group', GenerationId: 1, MemberId: 'm', GroupInstanceId: null }),
    request('LeaveGroup', 3, 12, { GroupId: 'fz-group', Members: [{ MemberId: 'm', GroupInstanceId: null }] }),
    request('OffsetCommit', 5, 13, { GroupId: 'fz-group', GenerationIdOrMemberEpoch: -1, MemberId: '', Topics: [{ Name: 'fz', Partitions: [{ PartitionIndex: 0, CommittedOffset: 1, CommittedMetadata: null }] }] }),
    request('OffsetFetch', 5, 14, { GroupId: 'fz-group', Topics: null }),
  ];
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.constantFrom(0x00, 0x7f, 0x80, 0xff) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('grow' as const), extra: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('size' as const), size: fc.oneof(fc.integer({ min: -10, max: 200 }), fc.constantFrom(-1, 65537, 0x7fffffff)) }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(frame: Buffer, muts: Mutation[]): Buffer {
  let b = Buffer.from(frame);
  for (const m of muts) {
    switch (m.kind) {
      case 'flip':
        b[4 + (m.at % Math.max(1, b.length - 4))] ^= m.xor;
        break;
      case 'set':
        b[4 + (m.at % Math.max(1, b.length - 4))] = m.byte;
        break;
      case 'cut': {
        b = b.subarray(0, 4 + (m.at % Math.max(1, b.length - 4)));
        b.writeInt32BE(b.length - 4, 0);
        break;
      }
      case 'grow':
        b = Buffer.concat([b, m.extra]);
        b.writeInt32BE(b.length - 4, 0);
        break;
      case 'size':
        b.writeInt32BE(m.size, 0);
        break;
    }
  }
  return b;
}

interface LaneCounts {
  frames: number;
  answered: number;
  closed: number;
  stalled: number;
}

const SENTINEL_ID = 0x7fff0000;

/**
 * One connection lane: sends each frame followed by an ApiVersions sentinel and waits for the
 * sentinel's answer, the broker closing, or STALL_MS; reconnects after a close or a stall.
 */
async function runLane(address: string, frames: Iterator<Buffer>, counts: LaneCounts, deadline: number): Promise<void> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  const sentinel = request('ApiVersions', 0, SENTINEL_ID, {});
  let socket: net.Socket | null = null;
  let buf: Buffer = Buffer.alloc(0);
  // The waiter belongs to the current socket only: a stalled socket's late close must not
  // settle the next frame's wait.
  let waiter: { socket: net.Socket; settle: (outcome: 'answered' | 'closed') => void } | null = null;
  const open = async (): Promise<net.Socket> => {
    const s = net.connect(port, host);
    s.setNoDelay(true);
    buf = Buffer.alloc(0);
    s.on('data', (c: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, c]) : c;
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
        buf = buf.subarray(4 + frame.length);
        if (frame.readInt32BE(0) === SENTINEL_ID && waiter?.socket === s) waiter.settle('answered');
      }
    });
    s.on('close', () => {
      if (socket === s) socket = null;
      if (waiter?.socket === s) waiter.settle('closed');
    });
    s.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      s.once('connect', resolve);
      s.once('error', reject);
    });
    return s;
  };
  const outcome = (s: net.Socket): Promise<'answered' | 'closed' | 'stalled'> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiter = null;
        resolve('stalled');
      }, STALL_MS);
      waiter = {
        socket: s,
        settle: (o) => {
          clearTimeout(timer);
          waiter = null;
          resolve(o);
        },
      };
    });
  for (let next = frames.next(); !next.done && Date.now() < deadline; next = frames.next()) {
    const frame = next.value;
    const s = socket ?? (socket = await open());
    counts.frames++;
    const selfDelimited = frame.length >= 4 && frame.readInt32BE(0) === frame.length - 4;
    const wait = outcome(s);
    if (selfDelimited) s.write(Buffer.concat([frame, sentinel]));
    else s.end(frame); // the broker reads what it can, then sees the end of the stream
    const o = await wait;
    if (o === 'answered') counts.answered++;
    else {
      if (o === 'closed') counts.closed++;
      else counts.stalled++;
      s.destroy();
      socket = null;
    }
  }
  socket?.destroy();
}

describe('Kafka listener fuzzing', () => {
  it(`survives ${RUNS} mutated request frames (seed ${SEED}) without a crash, an internal failure or a corrupt append`, async () => {
    const base = seeds();
    const plan = fc.sample(fc.tuple(fc.nat({ max: base.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 3 })), { seed: SEED, numRuns: RUNS });
    const frames = (function* () {
      for (const [i, muts] of plan) yield mutate(base[i], muts);
    })();
    const counts: LaneCounts = { frames: 0, answered: 0, closed: 0, stalled: 0 };
    const started = Date.now();
    const deadline = started + TIME_LIMIT_MS;
    await Promise.all(Array.from({ length: CONNECTIONS }, () => runLane(broker.kafka, frames, counts, deadline)));
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(
      `kafka fuzz: ${counts.frames} frames in ${seconds.toFixed(1)} s over ${CONNECTIONS} connections (${Math.round(counts.frames / seconds)}/s): ${counts.answered} followed by an answered sentinel, ${counts.closed} connections closed by the broker, ${counts.stalled} stalled (long polls)\n`,
    );
    if (counts.frames < RUNS) throw new Error(`only ${counts.frames} of ${RUNS} frames within DUROLAB_FUZZ_MS=${TIME_LIMIT_MS} ms`);
    expect(counts.answered).toBeGreaterThan(0);
    expect(counts.closed).toBeGreaterThan(0);
    expect(counts.answered + counts.closed + counts.stalled).toBe(counts.frames);
    // Still serving, and no request failed inside the broker.
    const av = await call(broker.kafka, 'ApiVersions', 3, { ClientSoftwareName: 't', ClientSoftwareVersion: '1' });
    expect(av.ErrorCode).toBe(0);
    const metrics = JSON.parse((await httpRequest(`${broker.url}/v1/metrics`, { timeoutMs: 5000 })).body.toString('utf8')) as { kafka: { closed: Record<string, number>; requests: number } };
    expect(metrics.kafka.closed.internal ?? 0).toBe(0);
    expect(metrics.kafka.requests).toBeGreaterThan(0);
    // Every record served is one that was sent in a valid batch.
    const served = await kcatConsume(broker.kafka, 'fz', 0);
    for (const m of served) expect(VALID_VALUES.has(m.payload ?? '')).toBe(true);
    broker.kill('SIGTERM');
    await broker.exited;
    const dump = runDump({ dir: path.join(dir, 'fz-0') });
    expect(dump.totals.invalidBatches).toBe(0);
    expect(dump.totals.records).toBe(served.length);
  }, TIME_LIMIT_MS + 120_000);
});
