// The target registry's row for target `kafka`: Apache Kafka 4 as N KRaft JVMs this lab starts.
import { diskVariesByCell, DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import type { PartitionCost } from '../partition-limits.ts';
import { KAFKA_STYLE_LOG_FILES } from '../log-files.ts';
import { KAFKA_DATA_FILES } from './kafka-data-files.ts';
import { HOST_ROUTE_CAPABILITIES, hostBenchDisk, labNetworkReady, type TargetKindSpec } from '../target-kind.ts';
import { kafkaSettingRefusal } from './settings-map.ts';

/**
 * Apache Kafka 4.4 holds 101 -> 183 descriptors for 1 -> 200 partitions and 2,982 at 10,000 after a
 * load (0.3-0.4 per partition: it maps the index files and closes their descriptors), counted as
 * 1; the JVM raises its soft limit to the hard one (-XX:+MaxFDLimit).
 */
export const KAFKA_PARTITION_COST: PartitionCost = { baseFds: 256, fdsPerReplica: 1, unbufferedExtraFds: 0, limit: 'hard' };

/** The largest fetch a Kafka broker answers by default (fetch.max.bytes, 55 MiB). */
export const KAFKA_FETCH_LIMIT = 57_671_680;

/** Settings a Kafka broker always runs under, whatever the registry's default: its flush is FileChannel.force(true), an fsync. */
export const KAFKA_BASE_SETTINGS = { sync: 'fsync' } as const;

export const KAFKA_KIND: TargetKindSpec = {
  summary: 'Apache Kafka 4 (Maven Central) as N KRaft JVMs, combined broker + controller, on loopback or each in its own network namespace (cluster.network)',
  system: 'kafka',
  install: '`make kafka` (Apache Kafka 4.4.0\'s jars from Maven Central into ~/.cache/durolab, harness/targets/kafka/pom.xml, and its offline recovery checker; JDK 17 and Maven)',
  systemLabel: 'Apache Kafka',
  capabilities: {
    // cut-power: each node's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
    // record-write-log: its NBD server records every request; the states are checked by Kafka's own recovery (recovery-check/);
    // elect-preferred-leader: Kafka's Admin API (move-leader); pause-broker-process: SIGSTOP/SIGCONT of the broker's JVM;
    // shape-lab-network: its nodes in the lab network's namespaces, nft and tc there (partition, slow-link); fill-disk: a filler file on its host fault disk fills its filesystem (harness/faults/disk-full.ts).
    faultActions: ['kill-broker-process', 'cut-power', 'record-write-log', 'elect-preferred-leader', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk', 'change-data-files', 'fail-disk-reads'],
    ...HOST_ROUTE_CAPABILITIES,
    logFiles: KAFKA_STYLE_LOG_FILES,
    // fail-disk-reads: its host fault disk's NBD server fails reads of the blocks under chosen files (read-error).
    // change-data-files: its log dirs are host directories (corrupt-file, truncate-file, lost-write; harness/faults/file-faults/).
    dataFiles: KAFKA_DATA_FILES,
    recoveryTimeoutMs: 60_000,
    drivers: ['kafka'],
    fetchLimit: KAFKA_FETCH_LIMIT,
    partitionCost: KAFKA_PARTITION_COST,
    baseSettings: KAFKA_BASE_SETTINGS,
    refuseSetting: kafkaSettingRefusal,
  },
  load: async ({ scenario, wants, log }) => {
    await labNetworkReady(wants);
    return (await import('./kafka-target.ts')).kafkaTarget({
      log: (line) => log(`[kafka] ${line}`),
      ...(scenario.vm ? { vm: scenario.vm } : {}),
      faultDisk: wants.faultDisk,
      diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
    });
  },
  prerequisiteProblem: async () => (await import('./install.ts')).kafkaPrerequisiteProblem(),
  sideBench: {
    driver: 'kafka',
    load: async ({ log, disk }) => (await import('./kafka-target.ts')).kafkaTarget({ log, ...hostBenchDisk(disk) }),
    describe: () => 'Apache Kafka, buffered',
    benches: {
      recovery: true,
      'fault-disk': true,
      peers: true,
      // One node on the host route's recorded fault disk; its states checked by Kafka's own recovery (the recovery-check JVM).
      'crash-states': { checkedBy: "Kafka's recovery", perMinBar: 200, disk: { diskMiB: 256, spec: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache', onCut: 'drop-unflushed' } }, producer: { retries: 0 } },
    },
  },
};
