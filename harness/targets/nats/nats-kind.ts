// The target registry's row for target `nats`: NATS JetStream (nats-server v2.12.1, `make nats`)
// as N nodes this lab starts, with routes between them and one file-storage stream.
import { diskVariesByCell } from '../../disk/disk-spec.ts';
import { HOST_ROUTE_CAPABILITIES, labNetworkReady, wantsFaultDisk, type TargetKindSpec } from '../target-kind.ts';
import { natsSettingRefusal } from './settings-map.ts';

export const NATS_KIND: TargetKindSpec = {
  summary: 'NATS JetStream (nats-server v2.12.1, `make nats`) as N nodes with routes between them, one file-storage stream of cluster.replicationFactor replicas, on loopback or each in its own network namespace (cluster.network)',
  system: 'nats',
  systemLabel: 'NATS JetStream',
  capabilities: {
    // cut-power: each node's store_dir on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
    // pause-broker-process: SIGSTOP/SIGCONT of nats-server; shape-lab-network: its nodes in the lab network's namespaces (routes carry replication and the meta group);
    // fill-disk: a filler file on its host fault disk. Not record-write-log (no offline recovery check of a NATS store), not elect-preferred-leader.
    faultActions: ['kill-broker-process', 'cut-power', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk'],
    lacksFaultAction: {
      'record-write-log': 'crash states need an offline check of each state, and NATS has no recovery tool apart from the server: booting nats-server on every state is not built yet',
      'elect-preferred-leader': "move-leader asks Kafka's ElectLeaders; JetStream's stream leader step-down is not wired to it",
    },
    ...HOST_ROUTE_CAPABILITIES,
    recoveryTimeoutMs: 60_000,
    drivers: ['nats'],
    // JetStream's own flush is its sync_interval (always: an fsync per write); no base setting beyond the registry's defaults.
    baseSettings: {},
    refuseSetting: natsSettingRefusal,
    refuseCluster: (c) => (c.partitions !== 1 ? `cluster.partitions ${c.partitions}: target nats runs the topic as one JetStream stream, one sequence (partitions: 1)` : null),
  },
  load: async ({ scenario, log }) => {
    await labNetworkReady(scenario);
    return (await import('./nats-target.ts')).natsTarget({
      log: (line) => log(`[nats] ${line}`),
      ...(scenario.vm ? { vm: scenario.vm } : {}),
      faultDisk: wantsFaultDisk(scenario),
      diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
    });
  },
  prerequisiteProblem: async () => (await import('./install.ts')).natsInstallProblem(),
};
