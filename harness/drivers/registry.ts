// The one list of client drivers (how the harness talks to the system under test), selected by
// a scenario's `workload.driver` (or a `driver` setting/axis). Each declares what it can do,
// statically, so `scenario check` refuses a scenario that needs what its driver lacks and the
// checker says NOT EVALUATED for a figure it cannot give; each loads lazily: validating a
// scenario never pulls in a client library.
import * as z from 'zod';
import type { ClientDriver, ReplicaReadingDriver } from './types.ts';
import { idempotentInFlightLimit } from '../model/kafka-producer.ts';
import { isKafkaLibraryName } from '../model/kafka-libraries.ts';

import { DRIVER_NAMES, type DriverName } from '../model/kinds.ts';
export { DRIVER_NAMES, type DriverName };

/**
 * What a driver's ClusterClient and ClientDriver offer (harness/drivers/types.ts); the optional
 * methods there are present exactly when these say so (harness/drivers/registry.test.ts checks).
 */
export interface DriverCapabilities {
  /** Consumers of the workload that tail a partition (workload.consumers, membership: assigned; ClusterClient.tail). */
  tail: boolean;
  /** Consumer-group members (workload.consumers, membership: group; ClusterClient.groupMember). */
  groupConsume: boolean;
  /** Each replica's HW, LEO and digest of its stored bytes (replica agreement after a fault, waits for followers; ClusterClient.replicaDigest). */
  replicaDigest: boolean;
  /** A replica's stored batches read as bytes, and stored bytes decoded as ledger batches (replica bytes, crash states, recount; readReplicaLog, servedFromStored). */
  storedBatches: boolean;
  /** The in-sync replicas of a partition (ISR sampling, leader victims in sync; ClusterClient.inSyncReplicas). */
  isr: boolean;
  /** Each partition's high watermark read just before a fault (ClusterClient.highWatermarks); false: its produce answers carry it, or nothing does. */
  highWatermarks: boolean;
  /** Settings (scenario settings or axes) only this driver reads. */
  settings: readonly string[];
  /** It reads a `workload.producer:` block (its client's producer configs). */
  producerBlock: boolean;
  /** The most sends in flight its idempotent producer keeps with a client library (absent: no such limit). */
  idempotentInFlightLimit?: (library: unknown) => { max: number; library: string; why: string };
}

export interface DriverSpec<D extends ClientDriver = ClientDriver> {
  summary: string;
  capabilities: DriverCapabilities;
  load(): Promise<D>;
}

/** Each driver's spec, typed by what its load gives (a driver without replica reads types its client without them). */
interface DriverSpecs extends Record<DriverName, DriverSpec> {
  http: DriverSpec<ReplicaReadingDriver>;
  kafka: DriverSpec<ReplicaReadingDriver>;
}

export const DRIVERS: DriverSpecs = {
  http: {
    summary: "durolab's /v1 HTTP API: autocannon produce of RecordBatch bodies, fetch, log-hash, metrics",
    capabilities: { tail: false, groupConsume: false, replicaDigest: true, storedBatches: true, isr: true, highWatermarks: false, settings: [], producerBlock: false },
    load: async () => (await import('./http/driver.ts')).httpDriver(),
  },
  kafka: {
    summary: 'the Kafka protocol: produce through a Kafka client library (librdkafka or @platformatic/kafka, below) with delivery reports per send, Fetch for the checker, Metadata / ListOffsets for replicas',
    capabilities: {
      tail: true,
      groupConsume: true,
      replicaDigest: true,
      storedBatches: true,
      isr: true,
      highWatermarks: true,
      settings: ['enable.idempotence', 'max.in.flight', 'library'],
      producerBlock: true,
      idempotentInFlightLimit: (library) => idempotentInFlightLimit(isKafkaLibraryName(library) ? library : undefined),
    },
    load: async () => (await import('./kafka/driver.ts')).kafkaDriver(),
  },
  nats: {
    summary: 'NATS JetStream through @nats-io/jetstream: one publish per record, its PubAck the acknowledgement and its stream sequence the offset (Nats-Msg-Id per record), an ordered consumer for the checker, per-server stream states from the monitoring /jsz',
    // storedBatches false: no servedFromStored (a JetStream store is message blocks, not RecordBatches), so no offline crash-state check
    // or recount (target nats boots every crash state instead: capabilities.crashStateCheck 'boot');
    // its readReplicaLog still gives each replica's messages for the replica-bytes comparison. isr: the stream leader and the replicas JetStream calls current.
    capabilities: { tail: false, groupConsume: false, replicaDigest: true, storedBatches: false, isr: true, highWatermarks: true, settings: [], producerBlock: false },
    load: async () => (await import('./nats/driver.ts')).natsDriver(),
  },
};

export const DEFAULT_DRIVER: DriverName = 'http';

export const driverNameSchema = z.enum(DRIVER_NAMES);

export function isDriverName(name: unknown): name is DriverName {
  return typeof name === 'string' && (DRIVER_NAMES as readonly string[]).includes(name);
}

export function driverCapabilities(name: DriverName): DriverCapabilities {
  return DRIVERS[name].capabilities;
}

export function loadDriver<N extends DriverName>(name: N): ReturnType<DriverSpecs[N]['load']> {
  return DRIVERS[name].load() as ReturnType<DriverSpecs[N]['load']>;
}

/** The drivers that read a driver-only setting (e.g. library: kafka), for error messages. */
export function driversReading(setting: string): DriverName[] {
  return DRIVER_NAMES.filter((d) => DRIVERS[d].capabilities.settings.includes(setting));
}
