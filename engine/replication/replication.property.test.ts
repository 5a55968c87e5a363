import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBatchHeader, recordsOf } from '../records/index.ts';
import type { Partition } from './partition.ts';
import { batchOf, settle, SimCluster } from './test-cluster.ts';

type Cmd =
  | { k: 'produce'; acks: 'all' | 1; records: number; pick: number }
  | { k: 'fetch'; id: number; truncateOnly: boolean; oneBatch: boolean }
  | { k: 'fetchAll' }
  | { k: 'pause'; id: number }
  | { k: 'resume'; id: number }
  | { k: 'tick'; ms: number }
  | { k: 'crash'; id: number }
  | { k: 'restart'; id: number };

const id = fc.constantFrom(1, 2, 3);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant('produce' as const), acks: fc.constantFrom('all' as const, 1 as const), records: fc.integer({ min: 1, max: 3 }), pick: fc.nat(3) }) },
  { weight: 8, arbitrary: fc.record({ k: fc.constant('fetch' as const), id, truncateOnly: fc.boolean(), oneBatch: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('fetchAll' as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('pause' as const), id }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('resume' as const), id }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('tick' as const), ms: fc.constantFrom(100, 400, 1600) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('crash' as const), id }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('restart' as const), id }) },
);

interface Acked {
  baseOffset: number;
  lastOffset: number;
  values: string[];
}

function batchAt(p: Partition, offset: number): Buffer | null {
  if (offset >= p.logEndOffset) return null;
  const data = p.log.read(offset, 1).data;
  if (data.length === 0) return null;
  const h = readBatchHeader(data, 0);
  return h.baseOffset === offset ? data.subarray(0, 12 + h.length) : null;
}

/**
 * Every acks=all-acknowledged batch is on every ISR member (per the controller) that is
 * running, at its offset, with the values that were sent and byte-identical across members.
 */
function checkAcked(sim: SimCluster, acked: Acked[], members: number[]): void {
  for (const a of acked) {
    let first: Buffer | null = null;
    for (const m of members) {
      const b = batchAt(sim.p(m), a.baseOffset);
      if (!b) throw new Error(`acked batch ${a.baseOffset}..${a.lastOffset} missing on ISR member ${m}`);
      const values = [...recordsOf(b)].map((r) => r.value!.toString());
      expect(values, `values of acked batch at ${a.baseOffset} on broker ${m}`).toEqual(a.values);
      if (first && !first.equals(b)) throw new Error(`acked batch ${a.baseOffset} differs between ISR members`);
      first ??= b;
    }
  }
}

async function run(cmds: Cmd[], minIsr: number): Promise<void> {
  const sim = new SimCluster({ minInsyncReplicas: minIsr, replicaLagTimeMaxMs: 2000, sessionTimeoutMs: 1500 });
  const acked: Acked[] = [];
  const hwSeen = new Map<string, number>();
  let seq = 0;
  try {
    const check = () => {
      const running = sim.controllerIsr.filter((m) => sim.node(m).partition !== null);
      checkAcked(sim, acked, running);
      for (const n of sim.nodes.values()) {
        const p = n.partition;
        if (!p || p.role !== 'leader') continue;
        const key = `${n.id}@${p.leaderEpoch}`;
        const prev = hwSeen.get(key) ?? -1;
        if (p.highWatermark < prev) throw new Error(`HW of leader ${key} went back from ${prev} to ${p.highWatermark}`);
        hwSeen.set(key, p.highWatermark);
      }
    };
    for (const c of cmds) {
      switch (c.k) {
        case 'produce': {
          // A client sends to a broker that believes it leads (possibly a stale one).
          const leaders = [...sim.nodes.values()].filter((n) => sim.up(n.id) && n.partition!.role === 'leader');
          if (leaders.length === 0) break;
          const l = leaders[c.pick % leaders.length].partition!;
          const values = Array.from({ length: c.records }, () => `v${seq++}`);
          const p = l.appendAsLeader(batchOf(...values), { acks: c.acks, timeoutMs: 30_000 });
          if (c.acks === 'all') {
            p.then(
              (r) => acked.push({ baseOffset: r.baseOffset, lastOffset: r.lastOffset, values }),
              () => {},
            );
          } else {
            p.catch(() => {});
          }
          break;
        }
        case 'fetch':
          // maxBytes 1 still returns one whole batch (Kafka's KIP-74 rule), so HW moves batch by batch
          sim.fetch(c.id, c.oneBatch ? 1 : 1 << 20, c.truncateOnly);
          break;
        case 'fetchAll':
          sim.fetchAll();
          break;
        case 'pause':
          sim.pause(c.id);
          break;
        case 'resume':
          sim.resume(c.id);
          break;
        case 'tick':
          await sim.tick(c.ms);
          break;
        case 'crash':
          if (sim.node(c.id).partition) sim.stop(c.id);
          break;
        case 'restart':
          if (!sim.node(c.id).partition) sim.start(c.id);
          break;
      }
      await settle();
      check();
    }
    // Heal: everything back, replicate until every replica is in the ISR with the same log.
    for (const n of sim.nodes.values()) {
      if (!n.partition) sim.start(n.id);
      sim.resume(n.id);
    }
    let healed = false;
    for (let i = 0; i < 200 && !healed; i++) {
      await sim.tick(100);
      sim.fetchAll();
      await settle();
      sim.fetchAll();
      await settle();
      check();
      const ps = [1, 2, 3].map((m) => sim.p(m));
      healed =
        sim.leaderId !== -1 &&
        sim.controllerIsr.length === 3 &&
        ps.every((p) => p.logEndOffset === ps[0].logEndOffset && p.highWatermark === ps[0].highWatermark);
    }
    expect(healed, 'cluster heals: one leader, full ISR, equal LEO and HW').toBe(true);
    checkAcked(sim, acked, [1, 2, 3]);
    const hw = sim.leader().highWatermark;
    const hashes = new Set([1, 2, 3].map((m) => sim.p(m).logHash(hw).hash));
    expect(hashes.size, 'log hashes up to the HW agree').toBe(1);
  } finally {
    sim.close();
  }
}

describe('replication property', () => {
  it('random produce / fetch / pause / crash / failover keep acks=all data on every ISR member and the leader HW monotonic', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 30, maxLength: 100, size: 'max' }), fc.constantFrom(1, 2), async (cmds, minIsr) => {
        await run(cmds, minIsr);
      }),
      { numRuns: Number(process.env.DUROLAB_PROPERTY_RUNS ?? 60) },
    );
  });
});
