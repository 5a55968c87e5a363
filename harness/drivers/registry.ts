// The one list of client drivers (how the harness talks to the system under test), selected by
// a scenario's `workload.driver`. Each loads lazily: validating a scenario never pulls in a
// client library.
import * as z from 'zod';
import type { ClientDriver } from './types.ts';

import { DRIVER_NAMES, type DriverName } from '../model/kinds.ts';
export { DRIVER_NAMES, type DriverName };

export interface DriverSpec {
  summary: string;
  load(): Promise<ClientDriver>;
}

export const DRIVERS: Record<DriverName, DriverSpec> = {
  http: {
    summary: "durolab's /v1 HTTP API: autocannon produce of RecordBatch bodies, fetch, log-hash, metrics",
    load: async () => (await import('./http/driver.ts')).httpDriver(),
  },
  kafka: {
    summary: 'the Kafka protocol: produce through a Kafka client library (librdkafka or @platformatic/kafka, below) with delivery reports per send, Fetch for the checker, Metadata / ListOffsets for replicas',
    load: async () => (await import('./kafka/driver.ts')).kafkaDriver(),
  },
  nats: {
    summary: 'NATS JetStream through @nats-io/jetstream: one publish per record, its PubAck the acknowledgement and its stream sequence the offset (Nats-Msg-Id per record), an ordered consumer for the checker, per-server stream states from the monitoring /jsz',
    load: async () => (await import('./nats/driver.ts')).natsDriver(),
  },
};

export const DEFAULT_DRIVER: DriverName = 'http';

export const driverNameSchema = z.enum(DRIVER_NAMES);

export function loadDriver(name: DriverName): Promise<ClientDriver> {
  return DRIVERS[name].load();
}
