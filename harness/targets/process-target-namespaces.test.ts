// target: process with cluster.network: namespaces, for real: three brokers, each in its own
// network namespace (its pid's /proc/PID/ns/net is its node's), acks=all through the http and
// the kafka driver at the node addresses and read back; a partition of one follower from the
// leader on the replication port only takes it out of the ISR (replica.lag.time.max.ms 2 s)
// while the harness still reaches it on its client ports, and heal brings it back; stop leaves
// no namespace behind.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAfterFault } from '../checker/after-fault.ts';
import { loadDriver } from '../drivers/registry.ts';
import { requireLabNetwork } from '../net/net-test-helpers.ts';
import { cellSettings, compileScenario } from '../scenario/index.ts';
import { processTarget } from './process-target.ts';
import { cutReplicationAndHeal, netnsInodeOfName, netnsInodeOfPid, interruptedStartLeavesNothing, namespacesLeft, produceFor, waitForIsr } from './lab-cluster-test-helpers.ts';
import type { FaultableCluster } from './types.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-process-ns-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: process in network namespaces', () => {
  it('runs each broker in its own namespace, serves both drivers there, and a replication-only cut shrinks the ISR until heal', async (ctx) => {
    requireLabNetwork(ctx);
    const topic = 'ns';
    const scenario = compileScenario(
      `question: q
cluster: { brokers: 3, topic: ${topic}, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2, network: namespaces }
settings: { acks: all, flush: never, replica.lag.time.max.ms: 2000 }
`,
      'inline.yaml',
      { defaultName: 'inline' },
    );
    const cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]!), workDir: work })) as FaultableCluster;
    const net = cluster.labNetwork!()!;
    const names = net.lab.nodes.map((n) => n.netns);
    try {
      expect(net.controller.endpoints).toEqual(['harness']);
      for (const b of cluster.brokers) {
        const node = net.lab.nodes[net.links[b.id]!.node]!;
        // The broker process itself (not a wrapper) is in its node's namespace; the harness is not.
        expect(netnsInodeOfPid(b.pid!)).toBe(netnsInodeOfName(node.netns));
        expect(netnsInodeOfPid(b.pid!)).not.toBe(netnsInodeOfPid(process.pid));
        expect(new URL(b.url).hostname).toBe(node.address);
        expect(b.kafka).toBe(`${node.address}:${net.links[b.id]!.ports.client[1]}`);
      }
      const leader = cluster.leaderId(topic, 0)!;
      for (const [name, base] of [['http', 7000], ['kafka', 8000]] as const) {
        const client = (await loadDriver(name)).connect(cluster, { dataOnHost: true });
        const { ledger, result } = produceFor(client, topic, leader, 2, base);
        await result;
        const check = await checkAfterFault({ source: client, topic, ledger, cutMs: Date.now() });
        expect(check.report.acked, `${name} driver: acknowledged`).toBeGreaterThan(100);
        expect(check.report.ackedLost, `${name} driver: read back`).toBe(0);
        expect(check.report.duplicates).toBe(0);
      }

      const client = (await loadDriver('http')).connect(cluster, { dataOnHost: true });
      const follower = cluster.brokers.map((b) => b.id).find((id) => id !== leader)!;
      expect((await waitForIsr(client, topic, (isr) => isr.length === 3, 'all three')).isr).toContain(follower);
      const r = await cutReplicationAndHeal({
        labNet: net,
        client,
        topic,
        leader,
        follower,
        label: 'durolab',
        whileCut: async () => {
          // Its clients' links and its controller link are untouched: it answers the harness and stays registered.
          const health = await fetch(`${cluster.urlOf(follower)}/v1/health`, { signal: AbortSignal.timeout(3000) });
          expect(health.ok).toBe(true);
          expect((await client.brokerMetrics()).down).toEqual([]);
        },
      });
      expect([r.shrunk.isr.includes(leader), r.ackedRecords > 0]).toEqual([true, true]);
    } finally {
      await cluster.stop();
    }
    expect(await namespacesLeft(names)).toEqual([]);
  }, 180_000);

  it('closes the lab network when a start is interrupted (the Ctrl-C path: the brokers stop, then their namespaces go)', async (ctx) => {
    requireLabNetwork(ctx);
    const scenario = compileScenario('question: q\ncluster: { brokers: 2, network: namespaces }\n', 'inline.yaml', { defaultName: 'inline' });
    const aborted = AbortSignal.abort();
    expect(
      await interruptedStartLeavesNothing(() =>
        processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]!), workDir: path.join(work, 'interrupted'), signal: aborted }),
      ),
    ).toEqual([]);
  }, 60_000);
});
