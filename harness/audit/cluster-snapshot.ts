// What `durolab audit` reads from a live cluster over the Kafka protocol: ApiVersions (feature
// levels: metadata.version gives the release, eligible.leader.replicas.version ELR), Metadata
// (brokers, partitions, replicas, ISR), DescribeCluster (cluster id, controller) and
// DescribeConfigs of every broker (asked of that broker, as Kafka requires) and of the topics.
// Nothing is written. A failure that leaves the audit without evidence is an AuditError with
// its exit code and what to do about it.
import { KafkaWire, KafkaWireError, type PartitionMetadata, type SaslPlain } from '../drivers/kafka/wire.ts';
import { apiVersions, describeCluster, describeConfigs, type ApiVersionsInfo, type DescribedConfigs } from '../drivers/kafka/wire-admin.ts';
import { API_KEYS } from '../../engine/protocol/messages.ts';
import { releaseOfMetadataVersion } from './metadata-version.ts';

/** Exit codes of `durolab audit` (2 is a usage error, 1 anything unexpected). */
export const AUDIT_EXIT = { unreachable: 3, unknownTopic: 4, denied: 5 } as const;

export class AuditError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'AuditError';
  }
}

export const BROKER_KEYS = [
  'min.insync.replicas',
  'unclean.leader.election.enable',
  'default.replication.factor',
  'log.flush.interval.messages',
  'log.flush.interval.ms',
  'log.flush.scheduler.interval.ms',
  'replica.lag.time.max.ms',
  'log.segment.bytes',
  'durolab.io',
  'durolab.sync',
  'durolab.flush',
];

export const TOPIC_KEYS = ['min.insync.replicas', 'unclean.leader.election.enable', 'flush.messages', 'flush.ms', 'segment.bytes', 'segment.ms', 'retention.ms', 'durolab.io', 'durolab.sync', 'durolab.flush'];

export interface BrokerSnapshot {
  id: number;
  address: string;
  /** Config name -> value; null when the broker did not answer (error says why). */
  configs: Record<string, string | null> | null;
  error: string | null;
}

export interface TopicSnapshot {
  name: string;
  partitions: PartitionMetadata[];
  configs: Record<string, string | null>;
}

export interface ClusterSnapshot {
  bootstrap: string[];
  answeredBy: string;
  clusterId: string | null;
  controllerId: number;
  /** The broker software: durolab's (its configs carry durolab.*) or Apache Kafka's. */
  system: 'durolab' | 'kafka';
  features: Record<string, number>;
  /** "4.4-IV2" from metadata.version, or null when the cluster lists none. */
  metadataVersion: string | null;
  brokers: BrokerSnapshot[];
  topics: TopicSnapshot[];
}

function denied(error: string | null): boolean {
  return error !== null && error.endsWith('_AUTHORIZATION_FAILED');
}

const configsOf = (d: DescribedConfigs): Record<string, string | null> => Object.fromEntries([...d.configs].map(([k, v]) => [k, v.value]));

const SASL_REFUSALS = new Set(['SASL_AUTHENTICATION_FAILED', 'UNSUPPORTED_SASL_MECHANISM', 'ILLEGAL_SASL_STATE']);

async function firstAnswering(bootstrap: string[], timeoutMs: number, sasl: SaslPlain | null): Promise<{ wire: KafkaWire; versions: ApiVersionsInfo }> {
  const errors: string[] = [];
  for (const address of bootstrap) {
    const wire = new KafkaWire(address, timeoutMs, sasl);
    try {
      return { wire, versions: await apiVersions(wire) };
    } catch (err) {
      wire.close();
      if (err instanceof KafkaWireError && SASL_REFUSALS.has(err.errorName)) throw new AuditError(AUDIT_EXIT.denied, err.message);
      errors.push((err as Error).message);
    }
  }
  throw new AuditError(
    AUDIT_EXIT.unreachable,
    `no bootstrap server answered ApiVersions: ${errors.join('; ')}. Check the address and that the listener speaks Kafka over PLAINTEXT or SASL_PLAINTEXT (the audit has no TLS)`,
  );
}

export async function readCluster(opts: { bootstrap: string[]; topics: string[] | null; timeoutMs?: number; sasl?: SaslPlain | null }): Promise<ClusterSnapshot> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sasl = opts.sasl ?? null;
  const { wire, versions } = await firstAnswering(opts.bootstrap, timeoutMs, sasl);
  try {
    const needs = [API_KEYS.Metadata, API_KEYS.DescribeConfigs];
    const missing = needs.filter((k) => !versions.apis.has(k));
    if (missing.length > 0) throw new AuditError(AUDIT_EXIT.unreachable, `${wire.address} does not serve API key(s) ${missing.join(', ')} (Metadata 3, DescribeConfigs 32): not a Kafka broker the audit can read`);

    const md = await wire.metadata(opts.topics);
    for (const t of opts.topics ?? []) {
      const e = md.topicErrors[t];
      if (e === 'UNKNOWN_TOPIC_OR_PARTITION') {
        const all = await wire.metadata(null).catch(() => null);
        const names = all ? [...new Set(all.partitions.map((p) => p.topic))].filter((n) => !n.startsWith('__')).sort() : [];
        throw new AuditError(AUDIT_EXIT.unknownTopic, `topic '${t}' does not exist on the cluster at ${wire.address}${names.length ? ` (its topics: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', ...' : ''})` : ' (it has no topics)'}`);
      }
      if (e && denied(e)) throw new AuditError(AUDIT_EXIT.denied, `Metadata of topic '${t}' on ${wire.address}: ${e}: the principal needs Describe on the topic`);
      if (e) throw new AuditError(1, `Metadata of topic '${t}' on ${wire.address}: ${e}`);
    }

    let clusterId: string | null = null;
    let controllerId = md.controllerId;
    if (versions.apis.has(API_KEYS.DescribeCluster)) {
      try {
        const d = await describeCluster(wire);
        clusterId = d.clusterId;
        controllerId = d.controllerId;
      } catch (err) {
        if (err instanceof KafkaWireError && denied(err.errorName)) throw new AuditError(AUDIT_EXIT.denied, `${err.message}: the principal needs Describe on the cluster`);
        throw err;
      }
    }

    const brokers: BrokerSnapshot[] = [];
    for (const b of md.brokers) {
      const address = `${b.host}:${b.port}`;
      const bw = address === wire.address ? wire : new KafkaWire(address, timeoutMs, sasl);
      try {
        const [d] = await describeConfigs(bw, [{ kind: 'broker', name: String(b.id), keys: BROKER_KEYS }]);
        if (d && denied(d.error)) {
          throw new AuditError(AUDIT_EXIT.denied, `DescribeConfigs of broker ${b.id} on ${address}: ${d.error}${d.errorMessage ? ` (${d.errorMessage})` : ''}: the principal needs DescribeConfigs on the cluster`);
        }
        brokers.push({ id: b.id, address, configs: d && !d.error ? configsOf(d) : null, error: d?.error ? `${d.error}${d.errorMessage ? `: ${d.errorMessage}` : ''}` : d ? null : 'empty answer' });
      } catch (err) {
        if (err instanceof AuditError) throw err;
        brokers.push({ id: b.id, address, configs: null, error: (err as Error).message });
      } finally {
        if (bw !== wire) bw.close();
      }
    }

    const names = opts.topics ?? [...new Set(md.partitions.map((p) => p.topic))].filter((n) => !n.startsWith('__')).sort();
    const described = names.length ? await describeConfigs(wire, names.map((name) => ({ kind: 'topic' as const, name, keys: TOPIC_KEYS }))) : [];
    const topics: TopicSnapshot[] = [];
    for (const name of names) {
      const d = described.find((x) => x.name === name);
      if (!d) throw new AuditError(1, `DescribeConfigs on ${wire.address}: no answer for topic '${name}'`);
      if (denied(d.error)) throw new AuditError(AUDIT_EXIT.denied, `DescribeConfigs of topic '${name}' on ${wire.address}: ${d.error}${d.errorMessage ? ` (${d.errorMessage})` : ''}: the principal needs DescribeConfigs on the topic`);
      if (d.error === 'UNKNOWN_TOPIC_OR_PARTITION') throw new AuditError(AUDIT_EXIT.unknownTopic, `topic '${name}' does not exist on the cluster at ${wire.address} (DescribeConfigs)`);
      if (d.error) throw new AuditError(1, `DescribeConfigs of topic '${name}' on ${wire.address}: ${d.error}${d.errorMessage ? `: ${d.errorMessage}` : ''}`);
      topics.push({ name, partitions: md.partitions.filter((p) => p.topic === name).sort((a, b) => a.partition - b.partition), configs: configsOf(d) });
    }

    const durolab = brokers.some((b) => b.configs && 'durolab.io' in b.configs) || topics.some((t) => 'durolab.io' in t.configs);
    const mv = versions.finalizedFeatures['metadata.version'];
    return {
      bootstrap: opts.bootstrap,
      answeredBy: wire.address,
      clusterId,
      controllerId,
      system: durolab ? 'durolab' : 'kafka',
      features: versions.finalizedFeatures,
      metadataVersion: mv === undefined ? null : releaseOfMetadataVersion(mv),
      brokers,
      topics,
    };
  } catch (err) {
    if (err instanceof KafkaWireError && err.errorName === 'NETWORK_EXCEPTION') {
      // A SASL listener answers ApiVersions unauthenticated, then closes the connection at the next request.
      const hint = sasl ? '' : ' (it answered ApiVersions: a listener that closes the connection at the next request wants SASL: give --sasl-user)';
      throw new AuditError(AUDIT_EXIT.unreachable, `${err.message}${hint}`);
    }
    throw err;
  } finally {
    wire.close();
  }
}
