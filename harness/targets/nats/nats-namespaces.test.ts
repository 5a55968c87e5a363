// target: nats with cluster.network: namespaces, for real: three nats-server processes, each in
// its own lab node's network namespace with its client, route and monitoring listeners at the
// node's address; a ledger load through driver nats read back with nothing lost; a cut of one
// follower from the leader on the route port only makes it fall behind (not current) while the
// harness still reaches it; heal brings it back; stop leaves no namespace behind.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { natsDriver } from '../../drivers/nats/driver.ts';
import { requireLabNetwork } from '../../net/net-test-helpers.ts';
import { resolveSettings } from '../../model/settings.ts';
import { requireNats } from '../../../test/requirements.ts';
import { cutReplicationAndHeal, expectBrokersInTheirNamespaces, expectLoadReadBackThenFullIsr, onLabCluster } from '../lab-cluster-test-helpers.ts';
import { startNatsCluster } from './nats-target.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-ns-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: nats in network namespaces', () => {
  it('runs each nats-server in its own namespace, and a route-only cut takes a follower out of the current replicas until heal', async (ctx) => {
    requireLabNetwork(ctx);
    const install = await requireNats(ctx);
    const topic = 'ns';
    const cluster = await startNatsCluster(install, {
      cluster: { brokers: 3, topic, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2, network: 'namespaces' },
      settings: resolveSettings({ flush: 'never' }, 2),
      workDir: work,
      log: (line) => console.log(line),
    });
    await onLabCluster(cluster, [0, 1, 2], async (net) => {
      expectBrokersInTheirNamespaces(cluster.brokers, net, (b, node) => {
        expect(b.url).toBe(`nats://${node.address}:${net.links[b.id]!.ports.client[0]}`);
        expect(readFileSync(path.join(work, `broker-${b.id}`, 'nats-server.conf'), 'utf8')).toContain(`nats-route://${node.address}:${net.links[b.id]!.ports.replication[0]}`);
      });
      const client = natsDriver().connect(cluster, { dataOnHost: true });
      const leader = cluster.leaderId(topic, 0)!;
      const follower = await expectLoadReadBackThenFullIsr(client, topic, cluster.brokers, leader);
      const r = await cutReplicationAndHeal({ labNet: net, client, topic, leader, follower, label: 'nats', timeoutMs: 30_000, whileCut: async () => {
        // Its monitoring listener still answers the harness (the cut is on the route port only).
        const varz = (await (await fetch(`${cluster.brokers.find((b) => b.id === follower)!.monitor}/varz`)).json()) as { server_name: string };
        expect(varz.server_name).toBe(`n${follower}`);
      } });
      expect([r.shrunk.isr.includes(leader), r.ackedRecords > 0]).toEqual([true, true]);
    });
  }, 120_000);
});
