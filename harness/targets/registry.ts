// The one list of target kinds (how brokers are started). Each declares its capabilities here,
// statically, so `durolab scenario check` can refuse what a target cannot do without loading it,
// and a loader that imports its module only when a scenario uses it (the process path never
// pulls in the QEMU code). The runner reads capabilities and never branches on the kind.
import * as z from 'zod';
import type { FaultAction } from '../faults/registry.ts';
import type { Scenario } from '../scenario/types.ts';
import type { Target } from './types.ts';

export const TARGET_KINDS = ['process', 'vm'] as const;
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
  /** The scenario's `vm:` block applies to it. */
  vmOptions: boolean;
}

export interface TargetLoadOptions {
  scenario: Pick<Scenario, 'vm'>;
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
      faultActions: ['kill-broker-process'],
      sysctls: 'host',
      recoveryTimeoutMs: 30_000,
      dataOnHost: true,
      guestProbes: false,
      vmOptions: false,
    },
    load: async () => (await import('./process-target.ts')).processTarget(),
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
      vmOptions: true,
    },
    load: async ({ scenario, log }) => (await import('./vm-target.ts')).vmTarget({ vm: scenario.vm, log: (line) => log(`[vm] ${line}`) }),
  },
};

export const DEFAULT_TARGET: TargetKind = 'process';

export const targetKindSchema = z.enum(TARGET_KINDS);

export function capabilitiesOf(kind: TargetKind): TargetCapabilities {
  return TARGETS[kind].capabilities;
}

export function loadTarget(kind: TargetKind, opts: TargetLoadOptions): Promise<Target> {
  return TARGETS[kind].load(opts);
}
