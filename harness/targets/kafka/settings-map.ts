// The one registry's settings (engine/settings) in Apache Kafka's terms: which broker and topic
// configs a cell's resolved settings become, and which settings Kafka has no equivalent for
// (a cell setting them is refused at `durolab scenario check`, with the reason; nothing is
// silently ignored). Small and free of JVM code: the scenario validator reads it through the
// target registry's capabilities.
import type { SettingValue } from '../../../engine/settings/index.ts';
import type { ResolvedSettings } from '../../model/settings.ts';

/** Kafka 4's LogConfig: segment.bytes at least 1 MiB. */
export const KAFKA_MIN_SEGMENT_BYTES = 1024 * 1024;

/**
 * Why Kafka cannot do what this setting value asks, or null when it maps. Only values a scenario
 * sets are judged (the registry's defaults for durolab's own knobs are not a request).
 */
export function kafkaSettingRefusal(name: string, value: SettingValue): string | null {
  if (name === 'io' && value !== 'buffered') {
    return `io: ${String(value)} has no Apache Kafka equivalent (Kafka always writes through the page cache with FileChannel.write; it has no O_DIRECT or O_DSYNC mode); use io: buffered or leave it out`;
  }
  if (name === 'sync' && value !== 'fsync') {
    return `sync: ${String(value)} has no Apache Kafka equivalent (Kafka's flush is FileChannel.force(true), an fsync of the segment, plus an msync of its indexes); use sync: fsync or leave it out`;
  }
  if (name === 'log.fsync.error' && value !== 'fail-stop') {
    return `log.fsync.error: ${String(value)} has no Apache Kafka equivalent (Kafka has no setting for a failed flush: its LogDirFailureChannel takes the log dir offline); use fail-stop or leave it out`;
  }
  if (name === 'fetch.transfer' && value !== 'sendfile') {
    return `fetch.transfer: ${String(value)} has no Apache Kafka equivalent (a plaintext listener always sends fetched records with FileChannel.transferTo, i.e. sendfile; only TLS copies them); use fetch.transfer: sendfile or leave it out`;
  }
  if (name === 'segment.bytes' && typeof value === 'number' && value < KAFKA_MIN_SEGMENT_BYTES) {
    return `segment.bytes: ${value} is below Apache Kafka 4's minimum of 1048576 (1 MiB): CreateTopics refuses it`;
  }
  return null;
}

/** target: external: Kafka's refusals, plus what needs the brokers' own configs or hosts, which the lab does not own. */
export function externalSettingRefusal(name: string, value: SettingValue): string | null {
  const kafka = kafkaSettingRefusal(name, value);
  if (kafka) return kafka;
  if (name === 'replica.lag.time.max.ms') return `${name} is a broker config of the external cluster (server.properties); the lab sets topic configs only there`;
  if (name === 'eligible.leader.replicas') return `${name} is the external cluster's eligible.leader.replicas.version feature (kafka-features.sh), which the lab does not change`;
  if (name.startsWith('vm.disk.')) return `${name} models the lab's fault disk, which a cluster the lab did not start does not run on`;
  if (name.startsWith('vm.')) return `${name} is a sysctl of the external cluster's hosts, which the lab does not change`;
  return null;
}

/** Broker configs (server.properties) a cell's settings set; the topic's own configs are in kafkaTopicConfigs. */
export function kafkaBrokerConfigs(s: ResolvedSettings): Record<string, string> {
  return {
    'message.max.bytes': String(s.maxBatchBytes),
    'replica.lag.time.max.ms': String(s.replicaLagTimeMaxMs),
    'min.insync.replicas': String(s.minInsyncReplicas),
    'unclean.leader.election.enable': String(s.uncleanLeaderElectionEnable),
    // Kafka checks flush.ms from a scheduler whose period defaults to Long.MAX_VALUE (never):
    // for ms:T it runs every T/10 ms (at least 1 ms), so a log is flushed within 1.1 T.
    ...(s.flush.kind === 'ms' ? { 'log.flush.scheduler.interval.ms': String(Math.max(1, Math.floor(s.flush.every / 10))) } : {}),
  };
}

/** The topic's configs at CreateTopics: Kafka's topic-level names for the cell's settings. */
export function kafkaTopicConfigs(s: ResolvedSettings): Record<string, string> {
  const flush: Record<string, string> =
    s.flush.kind === 'per-batch'
      ? // Kafka flushes once unflushed messages reach flush.messages, checked after each append:
        // 1 flushes after every produced batch.
        { 'flush.messages': '1' }
      : s.flush.kind === 'messages'
        ? { 'flush.messages': String(s.flush.every) }
        : s.flush.kind === 'ms'
          ? { 'flush.ms': String(s.flush.every) }
          : {}; // never: Kafka's defaults (Long.MAX_VALUE), the kernel's writeback decides
  return {
    ...flush,
    'segment.bytes': String(s.segmentBytes),
    'segment.ms': String(s.segmentMs),
    'segment.index.bytes': String(s.segmentIndexBytes),
    'index.interval.bytes': String(s.indexIntervalBytes),
    // The topic-level name of message.max.bytes.
    'max.message.bytes': String(s.maxBatchBytes),
    'min.insync.replicas': String(s.minInsyncReplicas),
    'unclean.leader.election.enable': String(s.uncleanLeaderElectionEnable),
  };
}

/**
 * Feature levels `kafka-storage format --feature` sets for a new cluster: eligible.leader.replicas
 * is Kafka's eligible.leader.replicas.version (1 = KIP-966's ELR and unclean-shutdown handling,
 * Kafka 4.4's default for a new cluster; 0 = off, as Kafka 4.0 formatted).
 */
export function kafkaFeatureLevels(s: Pick<ResolvedSettings, 'eligibleLeaderReplicas'>): Record<string, number> {
  return { 'eligible.leader.replicas.version': s.eligibleLeaderReplicas ? 1 : 0 };
}

/** Kafka's producer acks for the registry's acks. */
export function kafkaAcks(s: Pick<ResolvedSettings, 'acks'>): 0 | 1 | -1 {
  return s.acks === 'all' ? -1 : s.acks === 0 ? 0 : 1;
}
