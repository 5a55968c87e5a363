// `durolab audit` against Apache Kafka 4 the test starts (3 KRaft nodes), through the bundled
// CLI: topics configured into four classes (min ISR 1 and page cache only; min ISR 2 with an
// fsync per append; RF 1; unclean election on), the release from metadata.version, ELR from the
// feature levels, and a SASL_PLAINTEXT listener with the StandardAuthorizer where the auditor's
// principal may describe the topic 'secret' but is denied DescribeConfigs on it, a wrong
// password, and a SASL listener asked without credentials.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Admin } from '@platformatic/kafka';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../engine/common/free-port.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { KafkaWire } from '../drivers/kafka/wire.ts';
import { resolveSettings } from '../model/settings.ts';
import { requireKafka } from '../targets/kafka/kafka-requirements.ts';
import { startKafkaCluster, type KafkaCluster } from '../targets/kafka/kafka-target.ts';
import { AUDIT_EXIT } from './cluster-snapshot.ts';
import type { AuditResult } from './audit-command.ts';

const CLI = path.join(repoRoot(), 'bin', 'durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-audit-kafka-'));
const emptyResults = mkdtempSync(path.join(os.tmpdir(), 'durolab-audit-results-'));
const passwordFile = path.join(work, 'auditor.password');
let cluster: KafkaCluster | undefined;
afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
  rmSync(emptyResults, { recursive: true, force: true });
});

const audit = (...args: string[]) => execa(process.execPath, [CLI, 'audit', '--results-dir', emptyResults, ...args], { reject: false, timeout: 60_000, env: { DUROLAB_SASL_PASSWORD: '' } });

describe('durolab audit on Apache Kafka', () => {
  it('reads four topic classes, the release and ELR; a denied DescribeConfigs, a bad login and a missing topic each exit with their code', async (ctx) => {
    const install = await requireKafka(ctx);
    const sasl = new Map<number, number>();
    for (const id of [0, 1, 2]) sasl.set(id, await freePort());
    cluster = await startKafkaCluster(install, {
      cluster: { brokers: 3, topic: 'payments', partitions: 2, replicationFactor: 3, minInsyncReplicas: 1 },
      settings: resolveSettings({ flush: 'never', acks: 'all' }, 1),
      workDir: work,
      extraBrokerConfigs: (n) => ({
        listeners: `PLAINTEXT://127.0.0.1:${n.port},CONTROLLER://127.0.0.1:${n.controllerPort},CLIENT://127.0.0.1:${sasl.get(n.id)}`,
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${n.port},CLIENT://127.0.0.1:${sasl.get(n.id)}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CLIENT:SASL_PLAINTEXT',
        'listener.name.client.sasl.enabled.mechanisms': 'PLAIN',
        'listener.name.client.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_auditor="auditor-secret";',
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
        // The PLAINTEXT and CONTROLLER listeners' principal (the brokers, the test's admin) may do anything.
        'super.users': 'User:ANONYMOUS',
        'allow.everyone.if.no.acl.found': 'true',
      }),
    });
    const plain = cluster.brokers[0]!.kafka!;
    const saslAddress = `127.0.0.1:${sasl.get(0)}`;
    const w = new KafkaWire(plain);
    try {
      await w.createTopic({ topic: 'ledger', partitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2', 'flush.messages': '1' } });
      await w.createTopic({ topic: 'scratch', partitions: 1, replicationFactor: 1, configs: {} });
      await w.createTopic({ topic: 'secret', partitions: 1, replicationFactor: 3, configs: { 'unclean.leader.election.enable': 'true' } });
    } finally {
      w.close();
    }
    const admin = new Admin({ clientId: 'durolab-audit-test', bootstrapBrokers: [plain] });
    try {
      // ResourceType TOPIC 2, pattern LITERAL 3, operation DESCRIBE 8 / DESCRIBE_CONFIGS 10, permission DENY 2 / ALLOW 3.
      await admin.createAcls({
        creations: [
          { resourceType: 2, resourceName: 'secret', resourcePatternType: 3, principal: 'User:auditor', host: '*', operation: 8, permissionType: 3 },
          { resourceType: 2, resourceName: 'secret', resourcePatternType: 3, principal: 'User:auditor', host: '*', operation: 10, permissionType: 2 },
        ],
      });
    } finally {
      await admin.close();
    }

    const r = await audit('--bootstrap', plain, '--json');
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const a = JSON.parse(r.stdout) as AuditResult;
    expect(a.cluster.system).toBe('kafka');
    expect(a.cluster.metadataVersion).toMatch(/^4\.4-IV\d$/);
    expect(a.cluster.features['eligible.leader.replicas.version']).toBeGreaterThanOrEqual(1);
    expect(a.cluster.brokers.map((b) => b.id)).toEqual([0, 1, 2]);
    expect(a.cluster.brokers.every((b) => b.configs?.['log.flush.interval.messages'] === '9223372036854775807')).toBe(true);
    const byName = Object.fromEntries(a.topics.map((t) => [t.topic, t]));
    expect(Object.keys(byName).sort()).toEqual(['ledger', 'payments', 'scratch', 'secret']);
    const loss = (name: string) => byName[name]!.klass.findings.filter((f) => f.severity === 'loss').map((f) => f.text.split(':')[0]);
    expect(byName.payments!.klass.id).toBe('acks=all RF3 minISR1 flush=never unclean=off');
    expect(loss('payments')).toEqual(['min.insync.replicas 1', 'no flush']);
    expect(byName.ledger!.klass.id).toBe('acks=all RF3 minISR2 flush=per-batch unclean=off');
    expect(loss('ledger')).toEqual([]);
    expect(byName.scratch!.klass.id).toBe('acks=all RF1 minISR1 flush=never unclean=off');
    expect(loss('scratch')).toContain('RF 1');
    expect(byName.secret!.klass.id).toBe('acks=all RF3 minISR1 flush=never unclean=on');
    expect(loss('secret')).toContain('unclean.leader.election.enable=true');
    expect(byName.payments!.klass.findings.some((f) => f.text.startsWith('ELR on'))).toBe(true);

    const text = await audit('--bootstrap', plain, '--topic', 'ledger', '--acks', '1', '--idempotence', 'false');
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/Apache Kafka, metadata\.version 4\.4-IV\d \(its brokers run 4\.4 or later\); 3 broker\(s\) \[0, 1, 2\]/);
    expect(text.stdout).toContain('class: acks=1 RF3 minISR2 flush=per-batch unclean=off');
    expect(text.stdout).toContain('RISK: acks=1');

    writeFileSync(passwordFile, 'auditor-secret\n');
    const viaSasl = await audit('--bootstrap', saslAddress, '--sasl-user', 'auditor', '--sasl-password-file', passwordFile, '--topic', 'ledger');
    expect(viaSasl.stderr).toBe('');
    expect(viaSasl.exitCode).toBe(0);
    const denied = await audit('--bootstrap', saslAddress, '--sasl-user', 'auditor', '--sasl-password-file', passwordFile, '--topic', 'secret');
    expect(denied.exitCode).toBe(AUDIT_EXIT.denied);
    expect(denied.stderr).toMatch(/DescribeConfigs of topic 'secret' on 127\.0\.0\.1:\d+: TOPIC_AUTHORIZATION_FAILED.*the principal needs DescribeConfigs on the topic/);
    writeFileSync(passwordFile, 'wrong\n');
    const badLogin = await audit('--bootstrap', saslAddress, '--sasl-user', 'auditor', '--sasl-password-file', passwordFile);
    expect(badLogin.exitCode).toBe(AUDIT_EXIT.denied);
    expect(badLogin.stderr).toContain("SASL PLAIN as 'auditor': SASL_AUTHENTICATION_FAILED");
    const noLogin = await audit('--bootstrap', saslAddress);
    expect(noLogin.exitCode).toBe(AUDIT_EXIT.unreachable);
    expect(noLogin.stderr).toContain('give --sasl-user');
    const missing = await audit('--bootstrap', plain, '--topic', 'orders');
    expect(missing.exitCode).toBe(AUDIT_EXIT.unknownTopic);
    expect(missing.stderr).toMatch(/topic 'orders' does not exist on the cluster at 127\.0\.0\.1:\d+ \(its topics: ledger, payments, scratch, secret\)/);
  }, 180_000);
});
