// The one list of target kinds (how brokers are started). Each declares its capabilities here,
// statically, so `durolab scenario check` can refuse what a target cannot do without loading it,
// and a loader that imports its module only when a scenario uses it (the process path never
// pulls in the QEMU code). The runner reads capabilities and never branches on the kind.
import * as z from 'zod';
import { FAULTS, needsLabNetwork, type FaultAction } from '../faults/registry.ts';
import { diskVariesByCell } from '../disk/disk-spec.ts';
import type { Scenario } from '../scenario/types.ts';
import type { Target, TargetCapabilities } from './types.ts';
export type { TargetCapabilities };
import { externalSettingRefusal, kafkaSettingRefusal } from './kafka/settings-map.ts';
import { PARTITION_COSTS, partitionRefusal } from './partition-limits.ts';
import { cellNetwork } from '../scenario/cluster-network.ts';
import { natsSettingRefusal } from './nats/settings-map.ts';
import { externalFaultActions, externalFaultIssues } from './external/external-faults.ts';

import { TARGET_KINDS, type TargetKind } from '../model/kinds.ts';
export { TARGET_KINDS, type TargetKind };

// TargetCapabilities: harness/targets/types.ts (a type the registry's entries fill in).

export interface TargetLoadOptions {
  scenario: Pick<Scenario, 'vm' | 'external'> & Partial<Pick<Scenario, 'matrix' | 'settings' | 'faults' | 'cluster'>>;
  log: (line: string) => void;
}

export interface TargetKindSpec {
  summary: string;
  capabilities: TargetCapabilities;
  load(opts: TargetLoadOptions): Promise<Target>;
}

export const TARGETS: Record<TargetKind, TargetKindSpec> = {
  process: {
    summary: 'brokers as local processes, on loopback or each in its own network namespace (cluster.network)',
    capabilities: {
      // cut-power: each broker's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
      // record-write-log: that disk's NBD server records every request (crash states, harness/disk/crash-states/trial.ts);
      // elect-preferred-leader: the brokers' Kafka listeners serve AlterPartitionReassignments and ElectLeaders (move-leader);
      // pause-broker-process: SIGSTOP/SIGCONT of the broker child (engine/server/cluster.ts);
      // shape-lab-network: its brokers in the lab network's namespaces, nft and tc there (partition, slow-link); fill-disk: a filler file on its host fault disk fills its filesystem (harness/faults/disk-full.ts).
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log', 'elect-preferred-leader', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk'],
      sysctls: 'host',
      recoveryTimeoutMs: 30_000,
      dataOnHost: true,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: 'host',
      // Closed-loop bound on the host route (NBD -> FUSE -> loop -> ext4): the most measured on this 2-core machine is
      // 96.8 MB/s (durolab's broker, peer-crash-states flush=never, 1 KiB records); 13.5 MB/s on a 64 MiB disk. 1.25x the most.
      closedLoopDiskMBps: 120,
      drivers: ['http', 'kafka'],
      refuseCluster: (c) => partitionRefusal(PARTITION_COSTS.process, c),
    },
    load: async ({ scenario, log }) => {
      await labNetworkReady(scenario);
      return (await import('./process-target.ts')).processTarget({
        ...(scenario.vm ? { vm: scenario.vm } : {}),
        faultDisk: wantsFaultDisk(scenario),
        diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
        log: (line) => log(`[disk] ${line}`),
        netLog: (line) => log(`[net] ${line}`),
      });
    },
  },
  vm: {
    summary: 'each broker in its own QEMU VM with its own ext4 disk',
    capabilities: {
      // record-write-log: QEMU's blklogwrites (or the NBD disk) records every request to the data disk.
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log'],
      lacksFaultAction: {
        'fill-disk': "its brokers' disks are ext4 inside QEMU guests, mounted by the guest: a filler would have to be written by the guest agent, which has no such command (targets process and kafka fill their host fault disk)",
      },
      sysctls: 'guest',
      recoveryTimeoutMs: 120_000,
      dataOnHost: false,
      guestProbes: true,
      watchFigures: false,
      vmOptions: true,
      faultDisk: 'guest',
      // Closed-loop bound of a guest's virtio disk over the harness's NBD server: half the host route's (one
      // guest vCPU runs the broker and its page-cache writeback); an assumed bound, not measured here.
      closedLoopDiskMBps: 40,
      drivers: ['http'],
      refuseLabNetwork: 'its brokers are QEMU guests on user-mode networking, reached through host forwards; the lab network puts host processes in namespaces',
    },
    load: async ({ scenario, log }) => {
      const { vmTarget, diskVariesByCell } = await import('./vm-target.ts');
      return vmTarget({ vm: scenario.vm, diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}), log: (line) => log(`[vm] ${line}`) });
    },
  },
  kafka: {
    summary: 'Apache Kafka 4 (Maven Central) as N KRaft JVMs, combined broker + controller, on loopback or each in its own network namespace (cluster.network)',
    capabilities: {
      // cut-power: each node's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
      // record-write-log: its NBD server records every request; the states are checked by Kafka's own recovery (recovery-check/);
      // elect-preferred-leader: Kafka's Admin API (move-leader); pause-broker-process: SIGSTOP/SIGCONT of the broker's JVM;
      // shape-lab-network: its nodes in the lab network's namespaces, nft and tc there (partition, slow-link); fill-disk: a filler file on its host fault disk fills its filesystem (harness/faults/disk-full.ts).
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log', 'elect-preferred-leader', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk'],
      sysctls: 'host',
      recoveryTimeoutMs: 60_000,
      dataOnHost: true,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: 'host',
      // Closed-loop bound on the host route (NBD -> FUSE -> loop -> ext4): the most measured on this 2-core machine is
      // 96.8 MB/s (durolab's broker, peer-crash-states flush=never, 1 KiB records); 13.5 MB/s on a 64 MiB disk. 1.25x the most.
      closedLoopDiskMBps: 120,
      drivers: ['kafka'],
      refuseSetting: kafkaSettingRefusal,
      refuseCluster: (c) => partitionRefusal(PARTITION_COSTS.kafka, c),
    },
    load: async ({ scenario, log }) => {
      await labNetworkReady(scenario);
      return (await import('./kafka/kafka-target.ts')).kafkaTarget({
        log: (line) => log(`[kafka] ${line}`),
        ...(scenario.vm ? { vm: scenario.vm } : {}),
        faultDisk: wantsFaultDisk(scenario),
        diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
      });
    },
  },
  external: {
    summary: "a Kafka cluster the lab did not start (external.bootstrap), faults through the scenario's command templates (kill/restart, pause/resume, partition/heal, powerCut)",
    capabilities: {
      // Per kind: the templates it runs, or the Admin API (move-leader): external/external-faults.ts.
      faultActions: externalFaultActions(),
      // Its hosts are not this one: vm.* settings are refused (refuseSetting), never written here.
      sysctls: 'guest',
      recoveryTimeoutMs: 120_000,
      dataOnHost: false,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: null,
      drivers: ['kafka'],
      refuseSetting: externalSettingRefusal,
      refuseFault: (fault, { external }) => externalFaultIssues(fault, external),
      refuseLabNetwork: 'its brokers run on hosts the lab did not start (their network is theirs; network faults there go through command templates)',
    },
    load: async ({ scenario, log }) => (await import('./external/external-target.ts')).externalTarget(scenario.external, (line) => log(`[external] ${line}`)),
  },
  nats: {
    summary: 'NATS JetStream (nats-server v2.12.1, `make nats`) as N nodes with routes between them, one file-storage stream of cluster.replicationFactor replicas, on loopback or each in its own network namespace (cluster.network)',
    capabilities: {
      // cut-power: each node's store_dir on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
      // pause-broker-process: SIGSTOP/SIGCONT of nats-server; shape-lab-network: its nodes in the lab network's namespaces (routes carry replication and the meta group);
      // fill-disk: a filler file on its host fault disk. Not record-write-log (no offline recovery check of a NATS store), not elect-preferred-leader.
      faultActions: ['kill-broker-process', 'cut-power', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk'],
      lacksFaultAction: {
        'record-write-log': 'crash states need an offline check of each state, and NATS has no recovery tool apart from the server: booting nats-server on every state is not built yet',
        'elect-preferred-leader': "move-leader asks Kafka's ElectLeaders; JetStream's stream leader step-down is not wired to it",
      },
      sysctls: 'host',
      recoveryTimeoutMs: 60_000,
      dataOnHost: true,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: 'host',
      // The host route's bound (targets process and kafka): not measured with nats-server.
      closedLoopDiskMBps: 120,
      drivers: ['nats'],
      refuseSetting: natsSettingRefusal,
      refuseCluster: (c) => (c.partitions !== 1 ? `cluster.partitions ${c.partitions}: target nats runs the topic as one JetStream stream, one sequence (partitions: 1)` : null),
    },
    load: async ({ scenario, log }) => {
      await labNetworkReady(scenario);
      return (await import('./nats/nats-target.ts')).natsTarget({
        log: (line) => log(`[nats] ${line}`),
        ...(scenario.vm ? { vm: scenario.vm } : {}),
        faultDisk: wantsFaultDisk(scenario),
        diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
      });
    },
  },
};

export const DEFAULT_TARGET: TargetKind = 'process';

/** What a fault kind needs that only a fault disk gives: its power cut, its write log, its filesystem to fill. */
const FAULT_DISK_ACTIONS: readonly FaultAction[] = ['cut-power', 'record-write-log', 'fill-disk'];

/** A host-route target puts its brokers on the fault disk when a fault cuts power, records or fills it, or the scenario names a disk. */
export function wantsFaultDisk(scenario: TargetLoadOptions['scenario']): boolean {
  // A kill or a planned leader move needs no fault disk: plain data dirs (a power cut, a write log and a full disk do).
  const cuts = (scenario.faults ?? []).some((f) => FAULT_DISK_ACTIONS.includes(FAULTS[f.kind].needs));
  return cuts || scenario.vm?.disk !== undefined || diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {});
}

/**
 * Some cell of the scenario starts its nodes in the lab network (`cluster.network: namespaces`,
 * or a `network` setting or axis value), or a fault of the scenario acts on it (partition,
 * slow-link: the scenario's validation then sets cluster.network to namespaces).
 */
export function wantsLabNetwork(scenario: TargetLoadOptions['scenario']): boolean {
  if ((scenario.faults ?? []).some((f) => needsLabNetwork(f.kind))) return true;
  const base = cellNetwork(scenario.cluster ?? {}, scenario.settings ?? {});
  return base === 'namespaces' || (scenario.matrix ?? []).some((c) => cellNetwork(scenario.cluster ?? {}, { ...scenario.settings, ...c.params }) === 'namespaces');
}

/** Fails the load, before any cell, when the scenario wants the lab network and this machine cannot make one (root, ip, nft). */
async function labNetworkReady(scenario: TargetLoadOptions['scenario']): Promise<void> {
  if (!wantsLabNetwork(scenario)) return;
  const why = (await import('../net/net-tools.ts')).labNetworkPrerequisiteProblem();
  if (why) throw new Error(`cluster.network: namespaces: ${why}`);
}

export const targetKindSchema = z.enum(TARGET_KINDS);

export function capabilitiesOf(kind: TargetKind): TargetCapabilities {
  return TARGETS[kind].capabilities;
}

export function loadTarget(kind: TargetKind, opts: TargetLoadOptions): Promise<Target> {
  return TARGETS[kind].load(opts);
}
