// What one row of the target registry (harness/targets/registry.ts) declares: the system it starts,
// its capabilities, how it loads, and how the side bench commands run it. Each row lives beside
// its target's code (process-kind.ts, vm-kind.ts, kafka/kafka-kind.ts, external/external-kind.ts);
// the registry lists them. The helpers the rows share to load (the lab network ready, a side
// bench's disk) live here once; what a scenario wants of them is decided above and handed down.
import type { DiskSpec } from '../model/disk-spec.ts';
import type { Scenario } from '../model/scenario.ts';
import type { DriverName } from '../model/kinds.ts';
import type { Target, TargetCapabilities } from './types.ts';

/**
 * What the scenario wants of a host-route target, decided above the targets (harness/faults/
 * scenario-wants.ts reads the fault registry) and handed to its loader.
 */
export interface TargetWants {
  /** Brokers on the host route's fault disk: a fault cuts power, records a write log or fills the disk, or the scenario names a disk. */
  faultDisk: boolean;
  /** Some cell starts its nodes in the lab network (cluster.network: namespaces), or a fault acts on it. */
  labNetwork: boolean;
}

export interface TargetLoadOptions {
  scenario: Pick<Scenario, 'vm' | 'external'> & Partial<Pick<Scenario, 'matrix' | 'settings' | 'faults' | 'faultSets' | 'cluster'>>;
  wants: TargetWants;
  log: (line: string) => void;
}

/** The side bench commands that run a system outside a scenario (harness/targets/side-bench.ts). */
export const SIDE_BENCHES = ['recovery', 'fault-disk', 'crash-states', 'peers'] as const;
export type SideBenchName = (typeof SIDE_BENCHES)[number];

/** A side bench's broker data: a plain directory, or the host route's fault disk (or the guest's) with this spec. */
export interface SideBenchDisk {
  diskMiB: number;
  spec: DiskSpec;
}

/**
 * How the side bench commands run a target's system: one broker, loaded through `driver`, its
 * settings the bench's own over `capabilities.baseSettings` (a bench value the target refuses is
 * left out, and said). Each bench the target takes part in has its entry.
 */
export interface SideBenchSpec {
  /** The driver the bench's load and checks go through. */
  driver: DriverName;
  /** A target on a plain directory, or on a fault disk (`disk`; recorded for crash states). */
  load(o: { log: (line: string) => void; disk?: SideBenchDisk }): Promise<Target>;
  /** What ran, in a line (e.g. "Apache Kafka, buffered" or "io=buffered"). */
  describe(settings: { io: string }): string;
  /** The benches it takes part in. crash-states: its recovery's name and its states/min bar, the disk its trial records, its producer block. */
  benches: {
    recovery?: true;
    'fault-disk'?: true;
    peers?: true;
    'crash-states'?: { checkedBy: string; perMinBar: number; disk?: SideBenchDisk; producer?: Readonly<Record<string, unknown>> };
  };
}

export interface TargetKindSpec {
  summary: string;
  /** The system under test as reports, claims and audits name it (durolab, kafka); targets that start the same system share it. */
  system: string;
  /** The system's name in a sentence ("durolab's broker", "Apache Kafka"). */
  systemLabel: string;
  /** How a machine gets what it runs (the command), for docs/systems.md. */
  install: string;
  /** Another name a matrix's target axis may give this target (process: durolab, the built-in broker's own name). */
  axisName?: string;
  capabilities: TargetCapabilities;
  load(opts: TargetLoadOptions): Promise<Target>;
  /** How the side bench commands run its system on it; absent: they do not. */
  sideBench?: SideBenchSpec;
  /** Why this machine cannot start it (a missing tool or install, naming the command that gets it), or null; absent: nothing beyond Node. */
  prerequisiteProblem?: () => Promise<string | null>;
  /**
   * Why the main test suite cannot start it on a clean checkout (QEMU guests: the VM suite's; a
   * cluster the lab did not start); the conformance test (harness/targets/conformance.test.ts)
   * prints it and skips the target. Absent: it runs there.
   */
  notInMainSuite?: string;
}

/**
 * What every target whose brokers are processes of this host, each on the host route's fault
 * disk when a scenario asks for one, shares (process, kafka): host sysctls, data dirs and probes
 * on this host, figures watched during a fault trial.
 */
export const HOST_ROUTE_CAPABILITIES = {
  sysctls: 'host',
  dataOnHost: true,
  guestProbes: false,
  watchFigures: true,
  vmOptions: false,
  faultDisk: 'host',
  // Closed-loop bound on the host route (NBD -> FUSE -> loop -> ext4): the most measured on this 2-core machine is
  // 96.8 MB/s (durolab's broker, peer-crash-states flush=never, 1 KiB records); 13.5 MB/s on a 64 MiB disk. 1.25x the most.
  closedLoopDiskMBps: 120,
  hostProcesses: true,
} as const satisfies Partial<TargetCapabilities>;

/** Fails the load, before any cell, when the scenario wants the lab network and this machine cannot make one (root, ip, nft). */
export async function labNetworkReady(wants: TargetWants): Promise<void> {
  if (!wants.labNetwork) return;
  const why = (await import('../net/net-tools.ts')).labNetworkPrerequisiteProblem();
  if (why) throw new Error(`cluster.network: namespaces: ${why}`);
}

/** The host-route options of a target on a side bench's disk (process, kafka): the fault disk with its spec, or a plain directory. */
export function hostBenchDisk(disk: SideBenchDisk | undefined): { faultDisk?: boolean; vm?: { diskMiB: number; disk: DiskSpec } } {
  return disk ? { faultDisk: true, vm: { diskMiB: disk.diskMiB, disk: disk.spec } } : {};
}
