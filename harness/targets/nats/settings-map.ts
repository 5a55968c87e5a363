// The one registry's settings (engine/settings) in NATS JetStream's terms: what a cell's flush
// becomes in each server's `jetstream { sync_interval }`, what the stream is created with, and
// which settings have no NATS meaning (refused at `durolab scenario check` with the reason;
// nothing is silently ignored). Small and free of client code: the scenario validator reads it
// through the target registry's capabilities.
import { tryParseFlushPolicy, type FlushPolicy } from '../../../engine/settings/values.ts';
import type { SettingValue } from '../../../engine/settings/index.ts';
import type { ResolvedSettings } from '../../model/settings.ts';

/** nats-server's default sync_interval (2 minutes), what flush: never leaves in place. */
export const NATS_DEFAULT_SYNC_INTERVAL_MS = 120_000;

/** Settings a scenario may set on target: nats, and what each becomes (the rest are refused below). */
const WHY_NOT: Record<string, string> = {
  'segment.bytes': "JetStream's file store writes message blocks whose size the server picks (the stream config has no block size)",
  'segment.ms': 'JetStream rolls its message blocks by size, never by age',
  'segment.index.bytes': "JetStream's file store keeps no Kafka-style offset index",
  'index.interval.bytes': "JetStream's file store keeps no Kafka-style sparse index",
  'replica.lag.time.max.ms': 'JetStream replicates a stream through Raft (a majority acknowledges); it has no ISR whose members could lag out',
  'min.insync.replicas': "a JetStream stream's PubAck waits for a Raft majority of its replicas, fixed by num_replicas",
  'unclean.leader.election.enable': 'JetStream elects stream leaders through Raft, which never elects a replica behind the quorum',
  'eligible.leader.replicas': "KIP-966's eligible leader replicas are Kafka's; JetStream elects stream leaders through Raft",
  'fetch.transfer': 'nats-server delivers messages from its own buffers; it has no sendfile path to choose',
};

/**
 * Why NATS JetStream cannot do what this setting value asks, or null when it maps. Only values a
 * scenario sets are judged (the registry's defaults for durolab's own knobs are not a request).
 */
export function natsSettingRefusal(name: string, value: SettingValue): string | null {
  if (name === 'flush') {
    const p = tryParseFlushPolicy(value);
    if (p?.kind === 'messages') {
      return `flush: ${String(value)} has no NATS JetStream equivalent (sync_interval is a time or \`always\`, never a message count); use never (the 2 min default), ms:T (sync_interval T) or per-batch (sync_interval: always)`;
    }
    return null;
  }
  if (name === 'io' && value !== 'buffered') {
    return `io: ${String(value)} has no NATS JetStream equivalent (nats-server writes its message blocks through the page cache; it has no O_DIRECT or O_DSYNC mode); use io: buffered or leave it out`;
  }
  if (name === 'sync' && value !== 'fsync') {
    return `sync: ${String(value)} has no NATS JetStream equivalent (nats-server syncs a block with Go's File.Sync, an fsync); use sync: fsync or leave it out`;
  }
  if (name === 'log.fsync.error' && value !== 'fail-stop') {
    return `log.fsync.error: ${String(value)} has no NATS JetStream equivalent (nats-server has no setting for a failed fsync); use fail-stop or leave it out`;
  }
  if (name === 'acks' && value !== 'all') {
    return `acks: ${String(value)} has no NATS JetStream equivalent in driver nats (a JetStream publish is acknowledged by a PubAck once a Raft majority of the stream's replicas stored it); use acks: all or leave it out`;
  }
  const why = WHY_NOT[name];
  return why ? `${name} has no NATS JetStream equivalent: ${why}; leave it out on target: nats` : null;
}

/** sync_interval of each server's jetstream block for a cell's flush: null = nats-server's default (2 min, unset). */
export function natsSyncInterval(flush: FlushPolicy): string | null {
  switch (flush.kind) {
    case 'never':
      return null;
    case 'per-batch':
      // Every write is followed by a sync before the server goes on (and before its PubAck).
      return 'always';
    case 'ms':
      return `${flush.every}ms`;
    case 'messages':
      throw new Error(`flush: messages:${flush.every} has no NATS JetStream equivalent (refused at scenario check: natsSettingRefusal)`);
  }
}

/** The stream's limits from a cell's settings: message.max.bytes is the stream's max_msg_size. */
export function natsStreamLimits(s: Pick<ResolvedSettings, 'maxBatchBytes'>): { max_msg_size: number } {
  return { max_msg_size: s.maxBatchBytes };
}

