// target: kafka with cluster.network: namespaces, for real: three KRaft JVMs, each in its own
// network namespace (the JVM's /proc/PID/ns/net is its node's) with PLAINTEXT, REPLICATION and
// CONTROLLER listeners at its node's address; acks=all through the kafka driver and read back;
// a partition of one follower from the leader on the REPLICATION port only takes it out of the
// ISR (replica.lag.time.max.ms 3 s) while the harness still reaches it on its client port and
// it stays registered with the quorum; heal brings it back; stop leaves no namespace behind.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaDriver } from '../../drivers/kafka/driver.ts';
import { metadataFromAny } from '../../drivers/kafka/wire.ts';
import { requireLabNetwork } from '../../net/net-test-helpers.ts';
import { resolveSettings } from '../../model/settings.ts';
import { cutReplicationAndHeal, expectBrokersInTheirNamespaces, expectLoadReadBackThenFullIsr, interruptedStartLeavesNothing, onLabCluster } from '../lab-cluster-test-helpers.ts';
import { requireKafka } from './kafka-requirements.ts';
import { startKafkaCluster } from './kafka-target.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-ns-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: kafka in network namespaces', () => {
  it('runs each JVM in its own namespace with a listener per link, and a REPLICATION-only cut shrinks the ISR until heal', async (ctx) => {
    requireLabNetwork(ctx);
    const install = await requireKafka(ctx);
    const topic = 'ns';
    const settings = resolveSettings({ flush: 'never', acks: 'all', 'replica.lag.time.max.ms': 3000 }, 2);
    const cluster = await startKafkaCluster(install, {
      cluster: { brokers: 3, topic, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2, network: 'namespaces' },
      settings,
      workDir: work,
      log: (line) => console.log(line),
    });
    await onLabCluster(cluster, [0, 1, 2], async (net) => {
      expectBrokersInTheirNamespaces(cluster.brokers, net, (b, node) => {
        expect(b.kafka).toBe(`${node.address}:${net.links[b.id]!.ports.client[0]}`);
        const props = readFileSync(path.join(work, `broker-${b.id}`, 'server.properties'), 'utf8');
        expect(props).toContain(`inter.broker.listener.name=REPLICATION`);
        expect(props).toContain(`advertised.listeners=PLAINTEXT://${node.address}:${net.links[b.id]!.ports.client[0]},REPLICATION://${node.address}:${net.links[b.id]!.ports.replication[0]}`);
      });
      const client = kafkaDriver().connect(cluster, { dataOnHost: true });
      const leader = cluster.leaderId(topic, 0)!;
      const follower = await expectLoadReadBackThenFullIsr(client, topic, cluster.brokers, leader);
      const r = await cutReplicationAndHeal({
        labNet: net,
        client,
        topic,
        leader,
        follower,
        label: 'kafka',
        timeoutMs: 45_000,
        whileCut: async () => {
          // Its client listener answers the harness, and it is still a registered broker (its KRaft link is untouched).
          const md = await metadataFromAny([cluster.brokers.find((b) => b.id === follower)!.kafka!], [topic]);
          expect(md.brokers.map((b) => b.id).sort()).toEqual([0, 1, 2]);
        },
      });
      expect([r.shrunk.isr.includes(leader), r.ackedRecords > 0]).toEqual([true, true]);
    });
  }, 300_000);

  it('closes the lab network when a start fails (the JVMs stop first, then their namespaces go)', async (ctx) => {
    requireLabNetwork(ctx);
    const install = await requireKafka(ctx);
    expect(
      await interruptedStartLeavesNothing(() =>
        startKafkaCluster(install, {
          cluster: { brokers: 1, topic: 'ns', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1, network: 'namespaces' },
          settings: resolveSettings({}, 1),
          workDir: path.join(work, 'interrupted'),
          signal: AbortSignal.abort(),
        }),
      ),
    ).toEqual([]);
  }, 120_000);
});
