// The controller's HTTP face, with real HTTP and a real Controller ticking on its interval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerState, HeartbeatAnswer, PartitionAssignment } from '../replication/index.ts';
import { startControllerServer, type ControllerServer } from './controller-server.ts';
import { request } from './http-client.ts';
import { waitFor } from './test-support.ts';

let s: ControllerServer;

beforeAll(async () => {
  s = await startControllerServer({ port: 0, sessionTimeoutMs: 1500, tickMs: 50 });
});
afterAll(async () => {
  await s?.close();
});

async function call(method: string, route: string, body?: unknown, type = 'application/json') {
  const a = await request(`${s.url}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': type },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    timeoutMs: 5000,
  });
  return { status: a.status, json: JSON.parse(a.body.toString('utf8')) as Record<string, unknown> };
}

describe('controller HTTP server', () => {
  it('registers brokers by heartbeat, creates topics and answers heartbeats with assignments', async () => {
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const id of [1, 2, 3]) expect((await call('POST', '/v1/controller/heartbeat', { brokerId: id, url: `http://b${id}` })).status).toBe(200);
    const t = await call('POST', '/v1/controller/topics', { name: 'orders', partitions: 3, replicationFactor: 3 });
    expect(t.status).toBe(200);
    expect((t.json.partitions as PartitionAssignment[]).map((p) => p.leader)).toEqual([1, 2, 3]);
    const again = await call('POST', '/v1/controller/topics', { name: 'orders', partitions: 1 });
    expect(again).toMatchObject({ status: 409, json: { error: 'TOPIC_ALREADY_EXISTS' } });
    const tooMany = await call('POST', '/v1/controller/topics', { name: 'x', partitions: 1, replicationFactor: 4 });
    expect(tooMany).toMatchObject({ status: 400, json: { error: 'INVALID_REPLICATION_FACTOR' } });
    const hb = (await call('POST', '/v1/controller/heartbeat', { brokerId: 2, url: 'http://b2' })).json as unknown as HeartbeatAnswer;
    expect(hb.assignments).toHaveLength(3);
    expect(hb.brokers.map((b) => b.id)).toEqual([1, 2, 3]);
  });

  it('fences AlterPartition requests from a stale leader epoch and accepts the current one', async () => {
    const p0 = s.controller.assignment('orders', 0)!;
    const stale = await call('POST', '/v1/controller/alter-partition', { topic: 'orders', partition: 0, brokerId: p0.leader, leaderEpoch: p0.leaderEpoch + 5, partitionEpoch: p0.partitionEpoch, isr: [p0.leader] });
    expect(stale).toMatchObject({ status: 409, json: { error: 'FENCED_LEADER_EPOCH' } });
    const notLeader = await call('POST', '/v1/controller/alter-partition', { topic: 'orders', partition: 0, brokerId: 3, leaderEpoch: p0.leaderEpoch, partitionEpoch: p0.partitionEpoch, isr: [3] });
    expect(notLeader).toMatchObject({ status: 421, json: { error: 'NOT_LEADER_OR_FOLLOWER', leader: p0.leader } });
    const ok = await call('POST', '/v1/controller/alter-partition', { topic: 'orders', partition: 0, brokerId: p0.leader, leaderEpoch: p0.leaderEpoch, partitionEpoch: p0.partitionEpoch, isr: [1, 2] });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ isr: [1, 2], partitionEpoch: p0.partitionEpoch + 1 });
  });

  it('rejects malformed requests with errors that name the field, the media type or the route', async () => {
    expect(await call('POST', '/v1/controller/heartbeat', '{nope')).toMatchObject({ status: 400, json: { error: 'INVALID_REQUEST' } });
    const missing = await call('POST', '/v1/controller/heartbeat', { brokerId: 'one', url: 'x' });
    expect(missing).toMatchObject({ status: 400, json: { error: 'INVALID_REQUEST', field: 'brokerId' } });
    const incarnation = await call('POST', '/v1/controller/heartbeat', { brokerId: 1, url: 'http://b1', incarnation: 7 });
    expect(incarnation).toMatchObject({ status: 400, json: { error: 'INVALID_REQUEST', field: 'incarnation' } });
    const type = await call('POST', '/v1/controller/heartbeat', 'brokerId=1', 'application/x-www-form-urlencoded');
    expect(type).toMatchObject({ status: 415, json: { error: 'UNSUPPORTED_MEDIA_TYPE', accepted: ['application/json'] } });
    const route = await call('GET', '/v1/controller/nothing');
    expect(route.status).toBe(400);
    expect(String(route.json.message)).toContain('/v1/controller/state');
  });

  it('ticks: a broker that stops heartbeating is fenced and its partitions get a new leader with a higher epoch', async () => {
    const before = s.controller.assignment('orders', 1)!;
    expect(before.leader).toBe(2);
    // Brokers 1 and 3 keep heartbeating, 2 falls silent.
    const keep = setInterval(() => {
      void call('POST', '/v1/controller/heartbeat', { brokerId: 1, url: 'http://b1' });
      void call('POST', '/v1/controller/heartbeat', { brokerId: 3, url: 'http://b3' });
    }, 100);
    try {
      const after = await waitFor('a new leader for orders-1', async () => {
        const st = (await call('GET', '/v1/controller/state')).json as unknown as ControllerState;
        const p = st.partitions.find((x) => x.topic === 'orders' && x.partition === 1)!;
        return p.leader !== 2 ? { p, st } : null;
      }, 8000);
      expect(after.p.leaderEpoch).toBe(before.leaderEpoch + 1);
      expect(after.p.isr).not.toContain(2);
      expect(after.st.brokers.find((b) => b.id === 2)?.alive).toBe(false);
      expect(after.st.events.some((e) => e.kind === 'fenced' && e.brokerId === 2)).toBe(true);
    } finally {
      clearInterval(keep);
    }
  });
});
