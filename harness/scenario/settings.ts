// The settings a scenario may set or vary, under Kafka's names (and sysctl(8)'s for the
// kernel's writeback knobs): the registry's (engine/settings) entries marked `scenario`, seen
// as what to say when a value is bad and how to print it in a cell id and label. Values are
// normalized (sizes in bytes, segment.ms in ms, centisecs as centisecs, acks -1 -> 'all') so
// `where` clauses and cells compare equal whatever spelling the file used.

import {
  SCENARIO_SETTINGS,
  SYSCTL_EXCLUSIVE,
  isSysctl as isSysctlSetting,
  parseFlushPolicy,
  type Acks,
  type SettingValue,
} from '../../engine/settings/index.ts';
import { formatSize, parseSize } from '../../engine/units.ts';
import { CLUSTER_NETWORKS, CLUSTER_NETWORK_EXPECTED, DRIVER_NAMES } from '../model/kinds.ts';
import { isSysctlName } from '../model/settings.ts';
import { isKafkaLibraryName, KAFKA_LIBRARIES, KAFKA_LIBRARY_NAMES } from '../model/kafka-libraries.ts';

export type { Acks, SettingValue };
export { SYSCTL_EXCLUSIVE };

/** An integer setting's parser: a number or a string of digits, from min to max; undefined otherwise. */
function integerBetween(min: number, max: number): (v: unknown) => number | undefined {
  return (v) => {
    const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  };
}

/** A setting as scenario validation, matrices and labels see it; all of it comes from the registry (engine/settings). */
export interface SettingSpec {
  /** What a valid value looks like, for error messages ("expected ..."). */
  expected: string;
  /** Normalized value, or undefined when the input is not valid. */
  parse(value: unknown): SettingValue | undefined;
  /** Exact, compact form for cell ids. */
  display(value: SettingValue): string;
  /** Words for a human label. */
  label(value: SettingValue): string;
  sysctl?: boolean;
  /** A client setting whose value rewrites a host-global kernel knob (as a sysctl does): what it writes, else null. */
  hostWrite?(value: SettingValue): string | null;
}

/**
 * Client-side settings (the load's, not the broker's): matrix axes and `where` names like the
 * engine's, so one run can compare drivers, Kafka client libraries or producer settings cell by
 * cell. A cell's `driver` overrides workload.driver; `library` / `enable.idempotence` /
 * `max.in.flight` override the same keys of workload.producer (driver kafka). Brokers never see them (harness/targets/types.ts
 * passes only the registry's server settings).
 */
/** A client setting as the reference prints it (`durolab settings`): what stands when a cell does not set it, and what it is for. */
export interface ClientSettingSpec extends SettingSpec {
  /** What stands in a cell that does not set it. */
  defaultText: string;
  /** What it changes, in one sentence. */
  help: string;
}

export const CLIENT_SETTINGS: Readonly<Record<string, ClientSettingSpec>> = {
  /**
   * The harness's own axis: a cell that measures throughput runs without the scenario's fault, a
   * cell that measures loss runs with it, the same settings otherwise. `measure: [throughput,
   * loss]` makes a durability/cost frontier (harness/report/frontier-section.ts).
   */
  measure: {
    defaultText: "none: the cell runs the scenario's fault, if it has one",
    help: "what the cell measures: throughput without the fault, or the loss with it, the same settings otherwise (a durability/cost frontier)",
    expected: "throughput | loss (throughput: the cell runs without the scenario's fault; loss: with it)",
    parse: (v) => (v === 'throughput' || v === 'loss' ? v : undefined),
    display: (v) => String(v),
    label: (v) => (v === 'throughput' ? 'throughput run' : 'loss run'),
  },
  /**
   * Which fault schedule the cell runs: the name of an entry of the scenario's `faultSets:`, so one
   * run compares fault schedules cell by cell (scenarios/corrupt-minority.yaml). A cell that
   * names none runs the scenario's `faults:`.
   */
  faults: {
    defaultText: "none: the cell runs the scenario's faults:",
    help: "which of the scenario's faultSets: the cell's trials run, by name (a matrix axis over fault schedules)",
    expected: 'the name of an entry of faultSets: (lowercase letters, digits, . _ -)',
    parse: (v) => (typeof v === 'string' && /^[a-z0-9][a-z0-9._-]*$/.test(v) ? v : undefined),
    display: (v) => String(v),
    label: (v) => String(v),
  },
  /**
   * The page cache under the workload's consumers: cold drops it (sync, then vm.drop_caches=1)
   * before each consumer group starts, so a group that starts behind reads from the device. On a
   * target whose page cache is the host's it needs --allow-host-sysctl, as the vm.* sysctls do.
   */
  'consumer.cache': {
    defaultText: "warm",
    help: "the page cache under the workload's consumers: cold drops it before each consumer group starts (needs --allow-host-sysctl where the page cache is the host's)",
    expected: 'warm | cold (cold: the page cache is dropped before each consumer group starts)',
    parse: (v) => (v === 'warm' || v === 'cold' ? v : undefined),
    display: (v) => String(v),
    label: (v) => (v === 'cold' ? 'cold cache' : 'warm cache'),
    hostWrite: (v) => (v === 'cold' ? 'vm.drop_caches (consumer.cache: cold)' : null),
  },
  /**
   * A log written before the load (harness/workload/preload.ts): acks=1, 512 KiB batches, outside
   * the ack ledger. What a consumer starting at the log start catches up with, and what recovery
   * scans after a fault.
   */
  preload: {
    defaultText: 'none (nothing written before the load)',
    help: 'a log written into the topic before the load (acks=1, outside the ledger): what a consumer starting at the log start catches up with, and what recovery scans after a fault',
    expected: 'a size from 1MiB to 1TiB (bytes written into the topic before the load, e.g. 1GiB)',
    parse: (v) => {
      const n = parseSize(v);
      return n !== undefined && n >= 2 ** 20 && n <= 2 ** 40 ? n : undefined;
    },
    display: (v) => formatSize(Number(v)),
    label: (v) => `preload ${formatSize(Number(v))}`,
  },
  /**
   * The topic's partition count in this cell, over cluster.partitions: a matrix axis for the cost
   * of many partitions (scenarios/partitions-scale.yaml). `scenario check` refuses a count the
   * machine cannot hold (open files), with the figure it needs.
   */
  partitions: {
    defaultText: "cluster.partitions",
    help: "the topic's partition count in this cell",
    expected: 'an integer from 1 to 10000 (the topic\'s partitions in this cell, over cluster.partitions)',
    parse: integerBetween(1, 10_000),
    display: (v) => String(v),
    label: (v) => `${String(v)} partition${v === 1 ? '' : 's'}`,
  },
  /**
   * The topic's replication factor in this cell, over cluster.replicationFactor: a matrix axis
   * for R1 against R3 in one run (durability-frontier's NATS cells). At most cluster.brokers,
   * and at least min.insync.replicas where that applies (`scenario check` says which cell).
   */
  'replication.factor': {
    defaultText: "cluster.replicationFactor",
    help: "the topic's replication factor in this cell (at most cluster.brokers, at least min.insync.replicas where the target takes it)",
    expected: "an integer from 1 to 64 (the topic's replicas in this cell, over cluster.replicationFactor; at most cluster.brokers)",
    parse: integerBetween(1, 64),
    display: (v) => String(v),
    label: (v) => `RF ${String(v)}`,
  },
  /**
   * The cluster's network in this cell, over cluster.network (harness/model/cluster-network.ts): a matrix axis
   * for the cost of a namespace per broker against loopback, in one run.
   */
  network: {
    defaultText: "cluster.network (loopback)",
    help: "the cluster's network in this cell: loopback, or each broker in its own network namespace",
    expected: `${CLUSTER_NETWORK_EXPECTED}, over cluster.network in this cell`,
    parse: (v) => ((CLUSTER_NETWORKS as readonly unknown[]).includes(v) ? (v as string) : undefined),
    display: (v) => String(v),
    label: (v) => (v === 'namespaces' ? 'namespaces' : 'loopback'),
  },
  driver: {
    defaultText: 'workload.driver (http)',
    help: 'the client driver that produces and reads back in this cell (its target must accept it)',
    expected: `${DRIVER_NAMES.join(' | ')} (the client driver of the cell)`,
    parse: (v) => ((DRIVER_NAMES as readonly unknown[]).includes(v) ? (v as string) : undefined),
    display: (v) => String(v),
    label: (v) => `driver ${String(v)}`,
  },
  library: {
    defaultText: "workload.producer.library (the kafka driver's default library)",
    help: "the Kafka client library the kafka driver produces through",
    expected: `${KAFKA_LIBRARY_NAMES.join(' | ')} (the kafka driver's client library: harness/drivers/kafka/libraries.ts)`,
    parse: (v) => (isKafkaLibraryName(v) ? v : undefined),
    display: (v) => String(v),
    label: (v) => (isKafkaLibraryName(v) ? KAFKA_LIBRARIES[v].label : String(v)),
  },
  'enable.idempotence': {
    defaultText: "workload.producer.enable.idempotence",
    help: "the Kafka producer's enable.idempotence (driver kafka)",
    expected: 'true | false (the Kafka producer\'s enable.idempotence, driver kafka)',
    parse: (v) => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined),
    display: (v) => String(v),
    label: (v) => (v === true ? 'idempotent' : 'not idempotent'),
  },
  'max.in.flight': {
    defaultText: 'workload.producer.max.in.flight (default workload.pipelining)',
    help: 'produce requests in flight per producer connection (driver kafka)',
    expected: 'an integer from 1 to 256 (produce requests in flight per producer connection, driver kafka)',
    parse: integerBetween(1, 256),
    display: (v) => String(v),
    label: (v) => `max.in.flight ${String(v)}`,
  },
};

export const SETTINGS: Readonly<Record<string, SettingSpec>> = {
  ...Object.fromEntries(
    SCENARIO_SETTINGS.map((s) => [
      s.name,
      { expected: s.type.expected, parse: s.type.parse, display: s.type.display, label: (v: SettingValue) => s.type.label(v, s.label), sysctl: isSysctlSetting(s) },
    ]),
  ),
  ...CLIENT_SETTINGS,
};

/** Whether a setting belongs to the client (driver, producer) rather than the broker. */
export function isClientSetting(name: string): boolean {
  return name in CLIENT_SETTINGS;
}

export const SETTING_NAMES: readonly string[] = Object.keys(SETTINGS);

/** Whether a setting is a kernel sysctl: one answer, harness/model/settings.ts's (resolveSettings collects them by it). */
export const isSysctl = isSysctlName;

/**
 * The host-global kernel knob a setting value writes (a sysctl's own name, or what a client
 * setting like consumer.cache: cold writes), null for none: such values need root, and
 * --allow-host-sysctl on a target whose page cache is the host's.
 */
export function hostGlobalWrite(name: string, value: SettingValue): string | null {
  if (isSysctl(name)) return name;
  return SETTINGS[name]?.hostWrite?.(value) ?? null;
}

/** The flush grammar's parser (the registry's). */
export const flushPolicy = parseFlushPolicy;
