// The one list of target kinds (how brokers are started). Each declares its capabilities here,
// statically, so `durolab scenario check` can refuse what a target cannot do without loading it,
// and a loader that imports its module only when a scenario uses it (the process path never
// pulls in the QEMU code). The runner reads capabilities and never branches on the kind.
import * as z from 'zod';
import { FAULTS, type FaultAction } from '../faults/registry.ts';
import { diskVariesByCell } from '../disk/disk-spec.ts';
import type { Scenario } from '../scenario/types.ts';
import type { Target } from './types.ts';
import type { SettingValue } from '../../engine/settings/index.ts';
import type { DriverName } from '../drivers/registry.ts';
import { externalSettingRefusal, kafkaSettingRefusal } from './kafka/settings-map.ts';

export const TARGET_KINDS = ['process', 'vm', 'kafka', 'external'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export interface TargetCapabilities {
  /** What its clusters can do to a broker (see harness/faults/registry.ts for the kinds each enables). */
  faultActions: readonly FaultAction[];
  /**
   * Where vm.* sysctls of a cell go: `host` = the host's global sysctls (only with
   * --allow-host-sysctl, as root, restored afterwards); `guest` = inside each broker's VM.
   */
  sysctls: 'host' | 'guest';
  /** Leaders elected and replicas caught up after a fault's restart, at most this long. */
  recoveryTimeoutMs: number;
  /** Broker data dirs are host directories (host probes watch their device; segment files are counted). */
  dataOnHost: boolean;
  /** Probes come from inside each broker's guest (its page cache is the one a power cut loses). */
  guestProbes: boolean;
  /**
   * A fault trial also reads the broker figures during the load, as a fallback for a late read
   * at the fault's moment (harness/runner/broker-figures.ts). False where a read costs the
   * broker noticeable time: a TCG guest's broker spends 0.13-0.33 s of its event loop on one.
   */
  watchFigures: boolean;
  /** The scenario's `vm:` block applies to it (QEMU guests: accelerator, memory, disk). */
  vmOptions: boolean;
  /**
   * Where the lab's fault disk (the `vm.disk:` models: volatile cache, onCut, flush, EIO,
   * latency, write log) sits under its brokers: `guest` = each VM's virtio disk; `host` = the
   * host route (harness/disk/host-disk.ts: NBD -> qemu-storage-daemon FUSE -> loop -> ext4),
   * where only vm.disk, vm.diskMiB and vm.mountOptions apply; null = none.
   */
  faultDisk: 'guest' | 'host' | null;
  /** The client drivers that can talk to its brokers (`workload.driver`). */
  drivers: readonly DriverName[];
  /**
   * Why a setting value a scenario sets cannot be honoured on this target (no equivalent), or
   * null: `scenario check` refuses such a cell with the reason. Absent: every setting applies.
   */
  refuseSetting?: (name: string, value: SettingValue) => string | null;
  /** Faults need the scenario to say how to deliver them (target external: external.kill and external.restart). */
  faultsNeedCommands?: boolean;
}

export interface TargetLoadOptions {
  scenario: Pick<Scenario, 'vm' | 'external'> & Partial<Pick<Scenario, 'matrix' | 'settings' | 'faults'>>;
  log: (line: string) => void;
}

export interface TargetKindSpec {
  summary: string;
  capabilities: TargetCapabilities;
  load(opts: TargetLoadOptions): Promise<Target>;
}

export const TARGETS: Record<TargetKind, TargetKindSpec> = {
  process: {
    summary: 'brokers as local processes on loopback',
    capabilities: {
      // cut-power: each broker's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
      // record-write-log: that disk's NBD server records every request (crash states, harness/disk/crash-states/host-trial.ts).
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log'],
      sysctls: 'host',
      recoveryTimeoutMs: 30_000,
      dataOnHost: true,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: 'host',
      drivers: ['http', 'kafka'],
    },
    load: async ({ scenario, log }) =>
      (await import('./process-target.ts')).processTarget({
        ...(scenario.vm ? { vm: scenario.vm } : {}),
        faultDisk: wantsFaultDisk(scenario),
        diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
        log: (line) => log(`[disk] ${line}`),
      }),
  },
  vm: {
    summary: 'each broker in its own QEMU VM with its own ext4 disk',
    capabilities: {
      // record-write-log: QEMU's blklogwrites (or the NBD disk) records every request to the data disk.
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log'],
      sysctls: 'guest',
      recoveryTimeoutMs: 120_000,
      dataOnHost: false,
      guestProbes: true,
      watchFigures: false,
      vmOptions: true,
      faultDisk: 'guest',
      drivers: ['http'],
    },
    load: async ({ scenario, log }) => {
      const { vmTarget, diskVariesByCell } = await import('./vm-target.ts');
      return vmTarget({ vm: scenario.vm, diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}), log: (line) => log(`[vm] ${line}`) });
    },
  },
  kafka: {
    summary: 'Apache Kafka 4 (Maven Central) as N KRaft JVMs on loopback, combined broker + controller',
    capabilities: {
      // cut-power: each node's data on the host route's fault disk (a scenario that cuts power or names a disk model gets it);
      // record-write-log: its NBD server records every request; the states are checked by Kafka's own recovery (recovery-check/).
      faultActions: ['kill-broker-process', 'cut-power', 'record-write-log'],
      sysctls: 'host',
      recoveryTimeoutMs: 60_000,
      dataOnHost: true,
      guestProbes: false,
      watchFigures: true,
      vmOptions: false,
      faultDisk: 'host',
      drivers: ['kafka'],
      refuseSetting: kafkaSettingRefusal,
    },
    load: async ({ scenario, log }) =>
      (await import('./kafka/kafka-target.ts')).kafkaTarget({
        log: (line) => log(`[kafka] ${line}`),
        ...(scenario.vm ? { vm: scenario.vm } : {}),
        faultDisk: wantsFaultDisk(scenario),
        diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}),
      }),
  },
  external: {
    summary: "a Kafka cluster the lab did not start (external.bootstrap), faults through the scenario's kill/restart commands",
    capabilities: {
      faultActions: ['kill-broker-process'],
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
      faultsNeedCommands: true,
    },
    load: async ({ scenario }) => (await import('./external/external-target.ts')).externalTarget(scenario.external),
  },
};

export const DEFAULT_TARGET: TargetKind = 'process';

/** A host-route target puts its brokers on the fault disk when a fault cuts power or the scenario names a disk. */
export function wantsFaultDisk(scenario: TargetLoadOptions['scenario']): boolean {
  const cuts = (scenario.faults ?? []).some((f) => FAULTS[f.kind].needs !== 'kill-broker-process');
  return cuts || scenario.vm?.disk !== undefined || diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {});
}

export const targetKindSchema = z.enum(TARGET_KINDS);

export function capabilitiesOf(kind: TargetKind): TargetCapabilities {
  return TARGETS[kind].capabilities;
}

export function loadTarget(kind: TargetKind, opts: TargetLoadOptions): Promise<Target> {
  return TARGETS[kind].load(opts);
}
