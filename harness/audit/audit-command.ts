// `durolab audit --bootstrap HOST:PORT`: a live cluster's topics, each with its durability class
// (what an acknowledgement means under its settings and the producer's), the risks those settings
// leave, and what the lab measured for the same settings, with the runs that show it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { ACKS, type Acks } from '../../engine/settings/values.ts';
import { listRuns } from '../report/load-runs.ts';
import { defaultDirs, requireResultsDir } from '../report/repo-paths.ts';
import type { RunResult } from '../results/types.ts';
import { listScenarios, loadScenario } from '../scenario/loader.ts';
import type { Scenario } from '../model/scenario.ts';
import type { SaslPlain } from '../drivers/kafka/wire.ts';
import { AuditError, readCluster, type ClusterSnapshot, type TopicSnapshot } from './cluster-snapshot.ts';
import { classify, flushPolicyOf, flushText, type DurabilityClass, type ProducerFacts, type TopicFacts } from './durability-class.ts';
import { findEvidence, scenariosToRun, type Evidence } from './lab-evidence.ts';
import { evidenceText } from './audit-text.ts';

const HELP = `usage: durolab audit --bootstrap HOST:PORT[,HOST:PORT...] [options]

Reads a live Kafka cluster (Apache Kafka, or durolab's broker) over the Kafka protocol and
prints, per topic, its durability class: what an acknowledged record is guaranteed under the
topic's settings and the producer's, the risks those settings leave (RF, min.insync.replicas,
unclean.leader.election.enable, flush.messages / flush.ms, ELR, the ISR right now), and what the
lab measured for the same settings: acknowledged records lost per fault, with the runs (under
--results-dir, or on a published site) that show it. Read-only: Metadata, ApiVersions,
DescribeCluster and DescribeConfigs; PLAINTEXT or SASL_PLAINTEXT (PLAIN) listeners, no TLS.

Producer settings cannot be read from a cluster; give them as your producers use them:
  --acks 0|1|all        default: all (the Java client's default since Kafka 3.0)
  --idempotence true|false   default: true (likewise)

  --bootstrap LIST      bootstrap servers, host:port[,host:port...] (required)
  --topic NAME          audit this topic only (repeatable); default: every non-internal topic
  --results-dir DIR     runs to cite (default: <repo>/results)
  --site URL            link runs on a published site (durolab publish) instead of local files
  --sasl-user NAME      authenticate with SASL/PLAIN (a SASL_PLAINTEXT listener) as NAME; the
                        password from --sasl-password-file F or the DUROLAB_SASL_PASSWORD
                        environment variable (never a flag: flags show in ps)
  --sasl-password-file F
  --timeout-ms N        per request (default 10000)
  --json                the audit as JSON
  -h, --help            this text

Exit codes: 0 audited; 2 bad usage; 3 no broker reachable (or not a Kafka listener);
4 a --topic that does not exist; 5 the cluster denies Describe/DescribeConfigs or the SASL
login; 1 anything else.
`;

export interface TopicAudit {
  topic: string;
  partitions: number;
  replicationFactor: number;
  configs: Record<string, string | null>;
  klass: DurabilityClass;
  measured: Evidence[];
  /** Shipped scenarios that would measure this class, when nothing under results/ did. */
  toRun: Array<{ scenario: string; differs: string[] }>;
}

export interface AuditResult {
  cluster: {
    bootstrap: string[];
    answeredBy: string;
    clusterId: string | null;
    controllerId: number;
    system: ClusterSnapshot['system'];
    metadataVersion: string | null;
    features: Record<string, number>;
    brokers: ClusterSnapshot['brokers'];
    findings: string[];
  };
  producer: ProducerFacts;
  topics: TopicAudit[];
}

function topicFacts(snap: ClusterSnapshot, t: TopicSnapshot): TopicFacts {
  const need = (name: string): string => {
    const v = t.configs[name];
    if (v === undefined || v === null) throw new AuditError(1, `topic '${t.name}': DescribeConfigs gave no ${name} (got: ${Object.keys(t.configs).join(', ') || 'nothing'})`);
    return v;
  };
  const flush = flushPolicyOf(need('flush.messages'), need('flush.ms'));
  if (!flush) throw new AuditError(1, `topic '${t.name}': flush.messages=${t.configs['flush.messages']} flush.ms=${t.configs['flush.ms']} are not whole numbers`);
  const lag = snap.brokers.map((b) => b.configs?.['replica.lag.time.max.ms']).find((v) => v !== undefined && v !== null);
  const elr = snap.features['eligible.leader.replicas.version'];
  return {
    topic: t.name,
    replicationFactor: Math.max(0, ...t.partitions.map((p) => p.replicas.length)),
    partitions: t.partitions.length,
    minInsyncReplicas: Number(need('min.insync.replicas')),
    uncleanLeaderElection: need('unclean.leader.election.enable') === 'true',
    flush,
    underReplicated: t.partitions.filter((p) => p.isr.length < p.replicas.length).map((p) => ({ partition: p.partition, isr: p.isr, replicas: p.replicas })),
    offline: t.partitions.filter((p) => p.leader < 0).map((p) => p.partition),
    eligibleLeaderReplicas: elr === undefined ? null : elr >= 1,
    replicaLagTimeMaxMs: lag === undefined || lag === null ? null : Number(lag),
  };
}

function clusterFindings(snap: ClusterSnapshot): string[] {
  const out: string[] = [];
  for (const b of snap.brokers) if (b.error) out.push(`broker ${b.id} (${b.address}): its configs could not be read: ${b.error}`);
  const keys = new Set(snap.brokers.flatMap((b) => Object.keys(b.configs ?? {})));
  for (const k of keys) {
    const values = new Set(snap.brokers.filter((b) => b.configs).map((b) => String(b.configs![k])));
    if (values.size > 1) out.push(`brokers disagree on ${k}: ${snap.brokers.filter((b) => b.configs).map((b) => `${b.id}=${b.configs![k]}`).join(', ')}`);
  }
  return out;
}

export async function audit(opts: {
  bootstrap: string[];
  topics: string[] | null;
  producer: ProducerFacts;
  resultsDir: string;
  scenariosDir?: string;
  timeoutMs?: number;
  sasl?: SaslPlain | null;
}): Promise<AuditResult> {
  const snap = await readCluster({ bootstrap: opts.bootstrap, topics: opts.topics, timeoutMs: opts.timeoutMs, sasl: opts.sasl });
  const runs = (await listRuns(opts.resultsDir)).filter((e) => e.run).map((e) => ({ run: e.run as RunResult, file: path.relative(opts.resultsDir, e.file) }));
  let scenarios: Scenario[] | null = null;
  const shipped = (): Scenario[] => {
    if (scenarios) return scenarios;
    scenarios = [];
    for (const s of listScenarios(opts.scenariosDir)) {
      try {
        scenarios.push(loadScenario(s.file));
      } catch {
        // a scenario that does not compile is `durolab scenario check`'s to report
      }
    }
    return scenarios;
  };
  const topics = snap.topics.map((t): TopicAudit => {
    const facts = topicFacts(snap, t);
    const klass = classify(facts, opts.producer);
    const key = { acks: opts.producer.acks, replicationFactor: facts.replicationFactor, minInsyncReplicas: facts.minInsyncReplicas, flush: facts.flush, unclean: facts.uncleanLeaderElection };
    // The cluster's own kind of broker first.
    const measured = findEvidence(key, runs).sort((a, b) => Number(a.system !== snap.system) - Number(b.system !== snap.system));
    const toRun = measured.some((e) => e.lost !== null) ? [] : scenariosToRun(key, shipped()).map((s) => ({ scenario: s.scenario, differs: s.differs }));
    return { topic: t.name, partitions: facts.partitions, replicationFactor: facts.replicationFactor, configs: t.configs, klass, measured, toRun };
  });
  return {
    cluster: {
      bootstrap: snap.bootstrap,
      answeredBy: snap.answeredBy,
      clusterId: snap.clusterId,
      controllerId: snap.controllerId,
      system: snap.system,
      metadataVersion: snap.metadataVersion,
      features: snap.features,
      brokers: snap.brokers,
      findings: clusterFindings(snap),
    },
    producer: opts.producer,
    topics,
  };
}

function linkOf(e: Evidence, resultsDir: string, site: string | undefined): string {
  if (site) return `${site.replace(/\/+$/, '')}/runs/${e.scenario}/${e.runId}/index.html`;
  const report = path.join(path.dirname(resultsDir), 'reports', e.scenario, e.runId, 'index.html');
  return existsSync(report) ? report : path.join(resultsDir, e.runFile);
}

/** What the audited cluster is, per system its answers showed (cluster-snapshot.ts). */
const AUDITED_SYSTEM_TEXT: Record<ClusterSnapshot['system'], (c: Pick<ClusterSnapshot, 'metadataVersion'>) => string> = {
  durolab: () => "durolab's broker",
  kafka: (c) => `Apache Kafka${c.metadataVersion ? `, metadata.version ${c.metadataVersion} (its brokers run ${c.metadataVersion.split('-')[0]} or later)` : ' (no metadata.version listed)'}`,
};

export function auditText(a: AuditResult, resultsDir: string, site?: string): string {
  const c = a.cluster;
  const lines: string[] = [];
  const what = AUDITED_SYSTEM_TEXT[c.system](c);
  lines.push(`cluster ${c.clusterId ?? '(no id)'} at ${c.answeredBy}: ${what}; ${c.brokers.length} broker(s) [${c.brokers.map((b) => b.id).join(', ')}], controller ${c.controllerId}`);
  const elr = c.features['eligible.leader.replicas.version'];
  if (elr !== undefined) lines.push(`  features: ${Object.entries(c.features).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  for (const f of c.findings) lines.push(`  ! ${f}`);
  lines.push(`producer: acks=${a.producer.acks}, idempotence ${a.producer.idempotence ? 'on' : 'off'}${a.producer.given ? '' : ' (assumed: give --acks and --idempotence)'}`);
  if (a.topics.length === 0) lines.push('', 'no topics to audit (the cluster has none but internal ones)');
  for (const t of a.topics) {
    lines.push('');
    const cfg = (k: string) => t.configs[k] ?? 'unset';
    lines.push(`topic ${t.topic}: ${t.partitions} partition(s), RF ${t.replicationFactor}, min.insync.replicas ${cfg('min.insync.replicas')}, unclean.leader.election.enable ${cfg('unclean.leader.election.enable')}, ${flushText(flushPolicyOf(t.configs['flush.messages'] ?? null, t.configs['flush.ms'] ?? null) ?? { kind: 'never' })}`);
    if (t.configs['durolab.io']) lines.push(`  durolab write path: io ${cfg('durolab.io')}, sync ${cfg('durolab.sync')}, flush ${cfg('durolab.flush')}`);
    lines.push(`  class: ${t.klass.id}`);
    lines.push(`  ${t.klass.guarantee}`);
    for (const f of t.klass.findings) lines.push(`  ${f.severity === 'loss' ? 'RISK' : f.severity === 'availability' ? 'AVAIL' : 'note'}: ${f.text}`);
    const faults = t.measured.filter((e) => e.lost !== null);
    const perf = t.measured.filter((e) => e.lost === null);
    if (faults.length === 0) {
      lines.push('  measured: no fault run under the results dir has these settings yet');
      for (const s of t.toRun.slice(0, 4)) lines.push(`    make bench SCENARIO=${s.scenario}${s.differs.length ? ` (${s.differs.join(', ')})` : ''}`);
      if (t.toRun.length === 0) lines.push('    and no shipped scenario has a fault cell with them: a scenario file with these settings and a power-cut fault would (scenarios/*.yaml)');
    } else {
      lines.push('  measured (acknowledged records lost):');
      for (const e of faults.slice(0, 8)) lines.push(`    ${evidenceText(e)}\n      ${linkOf(e, resultsDir, site)}`);
      if (faults.length > 8) lines.push(`    ... and ${faults.length - 8} more cells (--json lists them)`);
    }
    for (const e of perf.slice(0, 3)) lines.push(`  throughput: ${evidenceText(e)}\n      ${linkOf(e, resultsDir, site)}`);
  }
  return lines.join('\n');
}

function parseAcks(v: string | undefined): Acks {
  if (v === undefined) return 'all';
  const a = v === 'all' || v === '-1' ? 'all' : Number(v);
  if (!ACKS.includes(a as Acks)) throw new UsageError(`--acks ${JSON.stringify(v)}: expected 0, 1 or all`);
  return a as Acks;
}

function parseBool(flag: string, v: string | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new UsageError(`${flag} ${JSON.stringify(v)}: expected true or false`);
}

class UsageError extends Error {}

function saslOf(user: string | undefined, passwordFile: string | undefined): SaslPlain | null {
  if (user === undefined) {
    if (passwordFile !== undefined) throw new UsageError('--sasl-password-file needs --sasl-user');
    return null;
  }
  if (user === '') throw new UsageError('--sasl-user: expected a user name');
  let password: string | undefined;
  if (passwordFile !== undefined) {
    try {
      password = readFileSync(passwordFile, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new UsageError(`--sasl-password-file ${passwordFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  } else password = process.env.DUROLAB_SASL_PASSWORD;
  if (password === undefined) throw new UsageError('--sasl-user: no password: give --sasl-password-file F or set DUROLAB_SASL_PASSWORD');
  return { user, password };
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandFlags(
      'audit',
      argv,
      {
        bootstrap: { type: 'string' },
        topic: { type: 'string', multiple: true },
        acks: { type: 'string' },
        idempotence: { type: 'string' },
        'results-dir': { type: 'string' },
        site: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'sasl-user': { type: 'string' },
        'sasl-password-file': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      HELP,
    );
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  if (parsed === null) return 0;
  const v = parsed.values;
  let producer: ProducerFacts;
  let bootstrap: string[];
  let timeoutMs = 10_000;
  let sasl: SaslPlain | null = null;
  try {
    if (!v.bootstrap) throw new UsageError('durolab audit: --bootstrap HOST:PORT is required (see durolab audit --help)');
    bootstrap = v.bootstrap.split(',').map((s) => s.trim()).filter(Boolean);
    for (const b of bootstrap) {
      const i = b.lastIndexOf(':');
      const port = Number(b.slice(i + 1));
      if (i <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--bootstrap: '${b}' is not host:port`);
    }
    producer = { acks: parseAcks(v.acks), idempotence: parseBool('--idempotence', v.idempotence, true), given: v.acks !== undefined && v.idempotence !== undefined };
    if (v['timeout-ms'] !== undefined) {
      timeoutMs = Number(v['timeout-ms']);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000) throw new UsageError(`--timeout-ms ${JSON.stringify(v['timeout-ms'])}: expected an integer in [100, 600000]`);
    }
    sasl = saslOf(v['sasl-user'], v['sasl-password-file']);
    requireResultsDir(v['results-dir']);
  } catch (err) {
    console.error(err instanceof UsageError ? err.message : `durolab audit: ${(err as Error).message}`);
    return 2;
  }
  const { resultsDir } = defaultDirs({ resultsDir: v['results-dir'] });
  try {
    const result = await audit({ bootstrap, topics: v.topic ?? null, producer, resultsDir, timeoutMs, sasl });
    console.log(v.json ? JSON.stringify(result, null, 2) : auditText(result, resultsDir, v.site));
    return 0;
  } catch (err) {
    if (err instanceof AuditError) {
      console.error(`durolab audit: ${err.message}`);
      return err.exitCode;
    }
    throw err;
  }
}
