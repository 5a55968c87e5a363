// The target registry's row for target `nats`: NATS JetStream (nats-server v2.12.1, `make nats`)
// as N nodes this lab starts, with routes between them and one file-storage stream.
import { diskVariesByCell } from '../../model/disk-spec.ts';
import { DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import { HOST_ROUTE_CAPABILITIES, hostBenchDisk, labNetworkReady, type TargetKindSpec } from '../target-kind.ts';
import { natsSettingRefusal } from './settings-map.ts';
import { NATS_DATA_FILES } from './nats-data-files.ts';

export const NATS_KIND: TargetKindSpec = {
  summary: 'NATS JetStream (nats-server v2.12.1, `make nats`) as N nodes with routes between them, one file-storage stream of cluster.replicationFactor replicas, on loopback or each in its own network namespace (cluster.network)',
  system: 'nats',
  install: '`make nats` (`go install github.com/nats-io/nats-server/v2@v2.12.1` into ~/.cache/durolab; Go 1.24 or later)',
  systemLabel: 'NATS JetStream',
  capabilities: {
    // cut-power: each node's store_dir on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
    // pause-broker-process: SIGSTOP/SIGCONT of nats-server; shape-lab-network: its nodes in the lab network's namespaces (routes carry replication and the meta group);
    // fill-disk: a filler file on its host fault disk; record-write-log: that disk's NBD server records every request (crash states,
    // harness/runner/crash-states/trial.ts), each state checked by booting nats-server on it (crashStateCheck). Not elect-preferred-leader.
    faultActions: ['kill-broker-process', 'cut-power', 'record-write-log', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk', 'change-data-files', 'fail-disk-reads'],
    // NATS has no offline recovery tool apart from the server: every crash state is booted (one nats-server on the state's
    // image recovers its stream as a real start does) and read back through driver nats; no stored-batch decoding is needed.
    crashStateCheck: 'boot',
    lacksFaultAction: {
      'elect-preferred-leader': "move-leader asks Kafka's ElectLeaders; JetStream's stream leader step-down is not wired to it",
    },
    ...HOST_ROUTE_CAPABILITIES,
    recoveryTimeoutMs: 60_000,
    drivers: ['nats'],
    // JetStream's file store: message blocks <n>.blk in jetstream/<account>/streams/<stream>/msgs/, no index file per block
    // (the Raft groups under jetstream/$SYS/_js_/ keep blocks of the same name: not the stream's).
    // fail-disk-reads: its host fault disk's NBD server fails reads of the blocks under chosen files (read-error).
    // change-data-files: its store dirs are host directories (corrupt-file, truncate-file, lost-write; harness/faults/file-faults/).
    dataFiles: NATS_DATA_FILES,
    logFiles: { segment: /^\d+\.blk$/, dir: /^jetstream\/[^/]+\/streams\/[^/]+\/msgs$/, maxDepth: 5 },
    // JetStream's own flush is its sync_interval (always: an fsync per write); no base setting beyond the registry's defaults.
    baseSettings: {},
    refuseSetting: natsSettingRefusal,
    refuseCluster: (c) => (c.partitions !== 1 ? `cluster.partitions ${c.partitions}: target nats runs the topic as one JetStream stream, one sequence (partitions: 1)` : null),
  },
  load: async ({ scenario, wants, log }) => {
    await labNetworkReady(wants);
    return (await import('./nats-target.ts')).natsTarget({
      log: (line) => log(`[nats] ${line}`),
      ...(scenario.vm ? { vm: scenario.vm } : {}),
      faultDisk: wants.faultDisk,
      diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
    });
  },
  prerequisiteProblem: async () => (await import('./install.ts')).natsInstallProblem(),
  sideBench: {
    driver: 'nats',
    load: async ({ log, disk }) => (await import('./nats-target.ts')).natsTarget({ log, ...hostBenchDisk(disk) }),
    describe: () => 'NATS JetStream, acks all (PubAck)',
    benches: {
      // One node on the host route's recorded fault disk; every state booted (nats-server on its image, read back through
      // driver nats). The bar: 31-75 states/min measured with 2 booted at a time (harness/targets/nats/nats-crash-states.test.ts,
      // 8 states per cell of a 2 s load, flush never and per-batch, the low end at a load average of 7 on the 2 cores; 67/min in
      // bench-crash-states), against Kafka's offline checker's bar of 200/min.
      'crash-states': { checkedBy: 'nats-server booted on every state', perMinBar: 25, disk: { diskMiB: 256, spec: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache', onCut: 'drop-unflushed' } } },
    },
  },
};
