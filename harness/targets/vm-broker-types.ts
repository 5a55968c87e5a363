// What a broker in its own VM (vm-broker.ts) is given and reports: its configuration, the boot
// record kept in run.json, the broker's health answer, the guest's state read at a fault.
import type { Accel, DataDisk, VmImage } from '../vm/index.ts';
import type { NetworkPlan } from './vm-network.ts';

export interface VmBrokerConfig {
  id: number;
  image: VmImage;
  disk: DataDisk;
  plan: NetworkPlan;
  /** Host directory of this broker's data: the disk image (removing it removes the data). */
  dir: string;
  /** Host directory of the serial logs (which hold the broker's log lines) and QEMU argument files. */
  logDir: string;
  accel: 'auto' | Accel;
  memoryMiB: number;
  kvmProbeMs?: number;
  sysctls: Record<string, number>;
  /** ext4 mount options ('' = defaults). */
  mountOptions: string;
  /** `--set k=v` pairs for the broker (without the --set). */
  brokerSets: string[];
  bootTimeoutMs: number;
  /** Broker exec to serving (/v1/health answers and the first heartbeat went through). */
  readyTimeoutMs: number;
  probeIntervalMs: number;
  log: (line: string) => void;
}

export interface BootRecord {
  name: string;
  accel: Accel;
  fallback?: string;
  /** Earlier attempts of this boot whose guest went down before its agent answered (their serial logs are kept). */
  failedAttempts?: string[];
  /** QEMU spawn to the agent answering. */
  spawnToAgentMs: number;
  /** QEMU spawn to the first line of /init (a cold boot). */
  spawnToInitMs?: number;
  /** The guest resumed a saved template (harness/vm/vm-template.ts; its key) instead of booting. */
  resumed?: { template: string };
  /** Why this start booted although it wanted to resume. */
  resumeFallback?: string;
  /** Guest setup: sysctls and the data-disk mount (journal replay after a cut). */
  setupMs?: number;
  /** Broker exec to serving (node start, partitions opened and recovered, first heartbeat). */
  brokerStartMs?: number;
  /** Vm.start call to the broker serving (boot + setup + broker start). */
  toServingMs?: number;
  serialLogPath: string;
  qemuPid: number;
}

/** The broker's GET /v1/health answer (engine/server/broker-http.ts). */
export interface BrokerHealth {
  status: string;
  brokerId: number;
  pid: number;
  url: string;
  uptimeMs: number;
  partitions: { led: string[]; followed: string[]; other: string[] };
  recovery: Array<{ topic: string; partition: number; cleanShutdown: boolean; bytesTruncated: number; batchesTruncated: number; durationMs: number } & Record<string, unknown>>;
  openFailures: unknown[];
  lastHeartbeatMs: number;
}

export interface GuestStateAtFault {
  /** Host Date.now() of the reading. */
  tMs: number;
  nrDirty: number;
  nrWriteback: number;
  /** The broker process was running in the guest at the last reading before the fault. */
  brokerRunning: boolean;
  /** The reading is the one taken right before the fault (false: an older polled sample). */
  fresh: boolean;
}
