// The target registry's row for target `process`: durolab's broker as local processes.
import { diskVariesByCell } from '../model/disk-spec.ts';
import { settingDefault } from '../../engine/settings/index.ts';
import { DUROLAB_BROKER_PARTITION_COST } from './partition-limits.ts';
import { KAFKA_STYLE_LOG_FILES } from './log-files.ts';
import { DUROLAB_DATA_FILES } from './durolab-data-files.ts';
import { HOST_ROUTE_CAPABILITIES, hostBenchDisk, labNetworkReady, type TargetKindSpec } from './target-kind.ts';

export const PROCESS_KIND: TargetKindSpec = {
  summary: 'brokers as local processes, on loopback or each in its own network namespace (cluster.network)',
  system: 'durolab',
  install: 'nothing beyond the repository: `make build` (npm ci, the bundled CLI and its native addons)',
  systemLabel: "durolab's broker",
  axisName: 'durolab',
  capabilities: {
    // cut-power: each broker's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
    // record-write-log: that disk's NBD server records every request (crash states, harness/runner/crash-states/trial.ts);
    // elect-preferred-leader: the brokers' Kafka listeners serve AlterPartitionReassignments and ElectLeaders (move-leader);
    // pause-broker-process: SIGSTOP/SIGCONT of the broker child (engine/server/cluster.ts);
    // shape-lab-network: its brokers in the lab network's namespaces, nft and tc there (partition, slow-link); fill-disk: a filler file on its host fault disk fills its filesystem (harness/faults/disk-full.ts).
    faultActions: ['kill-broker-process', 'cut-power', 'record-write-log', 'elect-preferred-leader', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk', 'change-data-files', 'fail-disk-reads'],
    ...HOST_ROUTE_CAPABILITIES,
    logFiles: KAFKA_STYLE_LOG_FILES,
    // fail-disk-reads: its host fault disk's NBD server fails reads of the blocks under chosen files (read-error).
    // change-data-files: its data dirs are host directories (corrupt-file, truncate-file, lost-write; harness/faults/file-faults/).
    dataFiles: DUROLAB_DATA_FILES,
    recoveryTimeoutMs: 30_000,
    drivers: ['http', 'kafka'],
    // durolab's fetch.max.bytes: the most its broker answers in one fetch.
    fetchLimit: settingDefault<number>('fetch.max.bytes'),
    partitionCost: DUROLAB_BROKER_PARTITION_COST,
    baseSettings: {},
  },
  load: async ({ scenario, wants, log }) => {
    await labNetworkReady(wants);
    return (await import('./process-target.ts')).processTarget({
      ...(scenario.vm ? { vm: scenario.vm } : {}),
      faultDisk: wants.faultDisk,
      diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
      log: (line) => log(`[disk] ${line}`),
      netLog: (line) => log(`[net] ${line}`),
    });
  },
  sideBench: {
    driver: 'kafka',
    load: async ({ log, disk }) => (await import('./process-target.ts')).processTarget({ log, ...hostBenchDisk(disk) }),
    describe: (s) => `io=${s.io}`,
    benches: { recovery: true, 'fault-disk': true, peers: true },
  },
};
