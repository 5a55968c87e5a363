// `durolab audit` against a durolab cluster the test starts (3 broker processes, min ISR 1,
// one topic RF 3 and one RF 1), through the bundled CLI: the classes its DescribeConfigs
// answers give, the JSON, and the exit codes of a missing topic and of an address nobody
// listens on.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../engine/server/cluster.ts';
import { freePort } from '../../engine/common/free-port.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { AUDIT_EXIT } from './cluster-snapshot.ts';
import type { AuditResult } from './audit-command.ts';

const CLI = path.join(repoRoot(), 'bin', 'durolab.mjs');
const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-audit-'));
const emptyResults = mkdtempSync(path.join(os.tmpdir(), 'durolab-audit-results-'));
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 3,
    dir,
    port: 0,
    topics: [
      { name: 'orders', partitions: 2, replicationFactor: 3 },
      { name: 'scratch', partitions: 1, replicationFactor: 1 },
    ],
    set: ['min.insync.replicas=1', 'flush=messages:500'],
  });
  await cluster.waitForLeaders();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(emptyResults, { recursive: true, force: true });
});

const audit = (...args: string[]) => execa(process.execPath, [CLI, 'audit', '--results-dir', emptyResults, ...args], { reject: false, timeout: 60_000 });

describe('durolab audit on durolab', () => {
  it("reads every topic and names each one's durability class from the brokers' own configs", async () => {
    const r = await audit('--bootstrap', cluster.brokers[1]!.kafka!, '--acks', 'all', '--idempotence', 'true', '--json');
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const a = JSON.parse(r.stdout) as AuditResult;
    expect(a.cluster.system).toBe('durolab');
    expect(a.cluster.clusterId).toBe('durolab');
    expect(a.cluster.brokers.map((b) => b.id)).toEqual([1, 2, 3]);
    expect(a.cluster.brokers.every((b) => b.configs?.['durolab.flush'] === 'messages:500')).toBe(true);
    expect(a.cluster.findings).toEqual([]);
    const byName = Object.fromEntries(a.topics.map((t) => [t.topic, t]));
    expect(Object.keys(byName).sort()).toEqual(['orders', 'scratch']);
    expect(byName.orders!.klass.id).toBe('acks=all RF3 minISR1 flush=messages:500 unclean=off');
    expect(byName.orders!.configs).toMatchObject({ 'min.insync.replicas': '1', 'flush.messages': '500', 'flush.ms': '9223372036854775807', 'durolab.io': 'buffered' });
    const orderRisks = byName.orders!.klass.findings.filter((f) => f.severity === 'loss').map((f) => f.text);
    expect(orderRisks.some((t) => t.startsWith('min.insync.replicas 1: acks=all is acks=1'))).toBe(true);
    expect(orderRisks.some((t) => t.startsWith('flush.messages=500'))).toBe(true);
    expect(byName.scratch!.klass.id).toBe('acks=all RF1 minISR1 flush=messages:500 unclean=off');
    expect(byName.scratch!.klass.findings.some((f) => f.text.startsWith('RF 1'))).toBe(true);
    // Nothing measured in an empty results dir: the audit says so and names shipped scenarios that would.
    expect(byName.orders!.measured).toEqual([]);
    expect(byName.orders!.toRun.length).toBeGreaterThan(0);
  });

  it('prints the class, its risks and what to run in text', async () => {
    const r = await audit('--bootstrap', cluster.brokers[0]!.kafka!, '--topic', 'orders');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^cluster durolab at 127\.0\.0\.1:\d+: durolab's broker; 3 broker\(s\) \[1, 2, 3\]/);
    expect(r.stdout).toContain('topic orders: 2 partition(s), RF 3, min.insync.replicas 1');
    expect(r.stdout).toContain('durolab write path: io buffered, sync fdatasync, flush messages:500');
    expect(r.stdout).toContain('RISK: min.insync.replicas 1');
    expect(r.stdout).toContain('producer settings not given');
    expect(r.stdout).toMatch(/measured: no fault run under the results dir has these settings yet\n {4}make bench SCENARIO=/);
    expect(r.stdout).not.toContain('topic scratch');
  });

  it('a topic that does not exist and an address nobody answers get their message and exit code', async () => {
    const missing = await audit('--bootstrap', cluster.brokers[0]!.kafka!, '--topic', 'payments');
    expect(missing.exitCode).toBe(AUDIT_EXIT.unknownTopic);
    expect(missing.stderr).toMatch(/topic 'payments' does not exist on the cluster at 127\.0\.0\.1:\d+ \(its topics: orders, scratch\)/);
    const port = await freePort();
    const nobody = await audit('--bootstrap', `127.0.0.1:${port}`);
    expect(nobody.exitCode).toBe(AUDIT_EXIT.unreachable);
    expect(nobody.stderr).toContain(`no bootstrap server answered ApiVersions: kafka wire: connect 127.0.0.1:${port}: connect ECONNREFUSED`);
    const usage = await audit('--bootstrap', 'no-port', '--acks', '2');
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("--bootstrap: 'no-port' is not host:port");
    const acks = await audit('--bootstrap', '127.0.0.1:9092', '--acks', '2');
    expect(acks.stderr).toContain('--acks "2": expected 0, 1 or all');
  });
});
