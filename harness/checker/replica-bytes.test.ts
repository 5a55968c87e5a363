// Replica agreement from bytes against a real 3-broker cluster (RF 3, child processes, real
// files): each replica's stored batches are read over GET /v1/admin/replica-log, in answers
// capped by a small fetch.max.bytes (so the driver pages through many), and compared on the
// host. A follower whose segment file is changed on disk is caught at the batch changed: bytes
// flipped inside a batch's records (its CRC no longer matches), and a batch rewritten with a
// valid CRC but other content (which survives the follower's recovery after a kill).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import { crc32c } from '../../engine/records/crc.ts';
import { AckLedger } from '../history/ledger.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { loadDriver } from '../drivers/registry.ts';
import { splitStoredBatches } from '../drivers/record-batches.ts';
import type { ReplicaReadingClient as ClusterClient, StoredBatch } from '../drivers/types.ts';
import { compareReplicaBytes, replicaAgreementOf } from './replica-bytes.ts';
import { checkReplicaAgreement, waitForReplicasCaughtUp } from './replicas.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-replica-bytes-'));
const topic = 'bytes';
// ~0.7 KB batches, 2 KiB answers: a few batches per answer, many answers per replica.
const FETCH_MAX = 2 * 1024;
const MIN_BATCHES = 40;
let cluster: Cluster;
let client: ClusterClient;

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 3,
    dir: work,
    port: 0,
    topics: [{ name: topic, partitions: 1, replicationFactor: 3 }],
    set: ['min.insync.replicas=2', `fetch.max.bytes=${FETCH_MAX}`],
  });
  await cluster.waitForLeaders();
  client = (await loadDriver('http')).connect({ brokers: cluster.brokers, leaderId: (t, p) => cluster.leaderOf(t, p)?.id ?? null }, { dataOnHost: true });
  // Rounds of 1 s until enough batches for many answers: a loaded machine may ack little per second.
  const ledger = new AckLedger({ recordsPerBatch: 8, producerIdBase: 4000, partitions: [0] });
  for (let round = 0; round < 20 && ledger.counts().acked < MIN_BATCHES; round++) {
    await client.produce({
      leaders: new Map([[0, cluster.leaderOf(topic, 0)!.id]]),
      topic,
      acks: 'all',
      timeoutMs: 10_000,
      connections: 4,
      pipelining: 1,
      rate: null,
      warmupSec: 0,
      durationSec: 1,
      ledger,
      factory: new BatchFactory({ recordBytes: 64, recordsPerBatch: 8 }),
    });
  }
  expect(ledger.counts().acked).toBeGreaterThanOrEqual(MIN_BATCHES);
  expect((await waitForReplicasCaughtUp(client, topic, [0], 15_000)).caughtUp).toBe(true);
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The follower's only segment file and its batches as stored. */
function segmentOf(brokerId: number): { file: string; batches: Array<StoredBatch & { position: number }> } {
  const dir = path.join(cluster.broker(brokerId).dataDir, `${topic}-0`);
  const file = path.join(dir, readdirSync(dir).find((f) => f.endsWith('.log'))!);
  const buf = readFileSync(file);
  const split = splitStoredBatches(buf);
  let position = 0;
  return {
    file,
    batches: split.batches.map((b) => {
      const at = position;
      position += b.size;
      return { ...b, position: at };
    }),
  };
}

/** Rewrites bytes of a file in place (same inode, no truncation: the broker's open segment sees them). */
function patch(file: string, position: number, bytes: Buffer): Buffer {
  const fd = openSync(file, 'r+');
  try {
    const before = Buffer.alloc(bytes.length);
    readSync(fd, before, 0, bytes.length, position);
    writeSync(fd, bytes, 0, bytes.length, position);
    return before;
  } finally {
    closeSync(fd);
  }
}

describe('replica agreement from bytes', () => {
  it('finds untouched replicas identical batch by batch up to the leader HW, paging through fetch.max.bytes answers', async () => {
    const leader = cluster.leaderOf(topic, 0)!.id;
    const hw = (await client.replicaDigest(leader, topic, 0, 0))!.hw;
    const stored = (await client.readReplicaLog(leader, topic, 0, hw))!;
    expect(stored.bytes).toBeGreaterThan(8 * FETCH_MAX);
    expect(stored.sha256).toBe((await client.replicaDigest(leader, topic, 0, hw))!.hash);
    const parts = await compareReplicaBytes(client, topic, [0]);
    const r = replicaAgreementOf(parts);
    expect(r).toMatchObject({ replicas: 2, compared: 2 * stored.batches.length, agreeUpTo: hw, diverged: 0, short: 0 });
    expect(r.firstDivergentOffset).toBeUndefined();

    // A follower answers for its own copy; a 1 GiB ask gets at most fetch.max.bytes of whole batches.
    const follower = cluster.brokers.find((b) => b.id !== leader)!;
    const res = await fetch(`${follower.url}/v1/admin/replica-log?topic=${topic}&partition=0&maxBytes=${1 << 30}`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get('x-role')).toBe('follower');
    expect(body.length).toBeGreaterThan(0);
    expect(body.length).toBeLessThanOrEqual(FETCH_MAX);
    const split = splitStoredBatches(body);
    expect(split.consumed).toBe(body.length);
    expect(Number(res.headers.get('x-next-offset'))).toBe(split.batches.at(-1)!.lastOffset + 1);
  }, 30_000);

  it('points at a batch whose record bytes were flipped on one follower (re-read, no restart)', async () => {
    const leader = cluster.leaderOf(topic, 0)!.id;
    const follower = cluster.brokers.find((b) => b.id !== leader)!.id;
    const seg = segmentOf(follower);
    const target = seg.batches[Math.floor(seg.batches.length / 2)]!;
    // Two bytes near the end of the batch: inside its last record's value.
    const at = target.position + target.size - 4;
    const original = patch(seg.file, at, Buffer.from([0xde, 0xad]));
    try {
      const r = replicaAgreementOf(await compareReplicaBytes(client, topic, [0]));
      expect(r.firstDivergentOffset).toBe(target.baseOffset);
      expect(r.agreeUpTo).toBe(target.baseOffset);
      expect(r.diverged).toBe(1);
      expect(r.partitions![0].divergent).toEqual([expect.objectContaining({ brokerId: follower, offset: target.baseOffset })]);
      expect(r.partitions![0].divergent[0].why).toMatch(/bytes give/);
    } finally {
      patch(seg.file, at, original);
    }
    expect(replicaAgreementOf(await compareReplicaBytes(client, topic, [0])).diverged).toBe(0);
  }, 30_000);

  it('points at a batch rewritten with a valid CRC and other content, also after the follower recovers from a kill', async () => {
    const leader = cluster.leaderOf(topic, 0)!.id;
    const follower = cluster.brokers.filter((b) => b.id !== leader)[1]!.id;
    const seg = segmentOf(follower);
    const target = seg.batches[Math.floor(seg.batches.length / 3)]!;
    const buf = readFileSync(seg.file).subarray(target.position, target.position + target.size);
    const changed = Buffer.from(buf);
    changed[changed.length - 3] ^= 0xff;
    changed.writeUInt32BE(crc32c(changed.subarray(21)), 17);
    patch(seg.file, target.position, changed);

    const before = replicaAgreementOf(await compareReplicaBytes(client, topic, [0]));
    expect(before.firstDivergentOffset).toBe(target.baseOffset);
    expect(before.partitions![0].divergent.map((d) => d.brokerId)).toEqual([follower]);
    expect(before.partitions![0].divergent[0].why).not.toMatch(/bytes give/);

    // A kill and restart: recovery validates CRCs, finds this batch valid and keeps it.
    await cluster.killBroker(follower, 'SIGKILL');
    await cluster.restartBroker(follower);
    await cluster.waitForLeaders();
    expect((await waitForReplicasCaughtUp(client, topic, [0], 15_000)).caughtUp).toBe(true);
    const after = replicaAgreementOf(await compareReplicaBytes(client, topic, [0]));
    expect(after.firstDivergentOffset).toBe(target.baseOffset);
    expect(after.diverged).toBe(1);
    // The brokers' own log hashes, the cross-check, disagree too.
    const hashes = await checkReplicaAgreement(client, topic, [0]);
    expect(hashes[0].agree).toBe(false);
  }, 60_000);
});
