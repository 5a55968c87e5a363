// What a VM is given and what it reports (harness/vm/vm.ts runs it): the start options, the boot
// report kept in run.json, the guest agent's process and probe answers, the power cut's report.
import type { DataDisk } from './disk.ts';
import type { VmImage } from './image.ts';
import type { Accel, GuestForward, HostForward } from './qemu-args.ts';

export interface VmOptions {
  name: string;
  image: VmImage;
  disk: DataDisk;
  memoryMiB?: number;
  /** Default: $DUROLAB_VM_ACCEL or 'auto' (KVM when usable and not seen hanging, else TCG). */
  accel?: 'auto' | Accel;
  /** Host 127.0.0.1 ports forwarded into the guest; hostPort 0 picks a free port. */
  hostfwd: HostForward[];
  /** Guest connections to guestIp:guestPort go to the host's 127.0.0.1:hostPort. */
  guestfwd?: GuestForward[];
  /** Holds the serial log; created if missing. */
  workDir: string;
  /** Spawn to agent answering; default 60 s. */
  bootTimeoutMs?: number;
  /** Guest port of the agent; forwarded (a free host port is picked unless hostfwd names one). */
  agentPort: number;
  /** Under auto: how long a KVM guest may stay silent before it counts as hung (default 5 s). */
  kvmProbeMs?: number;
  /** Appended to the kernel command line. */
  kernelArgs?: string[];
  /**
   * Under TCG, resume the saved booted guest of this VM's shape (vm-template.ts) when one was
   * made, instead of booting; default true unless $DUROLAB_VM_RESUME is 0.
   */
  resume?: boolean;
}

export interface BootReport {
  accel: Accel;
  /** Why an earlier accelerator was abandoned, e.g. "kvm: no guest output within 5000 ms". */
  fallback?: string;
  /** Host ms from QEMU spawn to the first line of /init. */
  spawnToInitMs?: number;
  /** Host ms from QEMU spawn to the agent's first answer. */
  spawnToAgentMs: number;
  /** Including abandoned attempts. */
  totalMs: number;
  /** Set when the guest was resumed from a saved template (its key) rather than booted. */
  resumed?: { template: string };
  /** Why a resume was wanted but the guest booted instead. */
  resumeFallback?: string;
}

export interface GuestProcess {
  pid: number;
  argv: string[];
  logPath: string;
  running: boolean;
  startedUptimeMs: number;
  exitedUptimeMs?: number;
  exitCode?: number | null;
  signal?: string | null;
}

export interface ProbeResult {
  vmstat: string;
  diskstats: string;
  /** Host Date.now() when the answer arrived. */
  tMs: number;
  guestUptimeMs: number;
  processes: GuestProcess[];
}

export interface PowerCutReport {
  /** Host Date.now() just before SIGKILL. */
  cutAtMs: number;
  /** Host ms from SIGKILL to QEMU's exit. */
  killToExitMs: number;
  /** Last status seen of each process started with exec(): was it still running before the cut? */
  processes: Array<{ pid: number; lastSeenRunningAtMs?: number; exitedSeen: boolean; exitCode?: number | null }>;
}

export interface SetupResult {
  /** Values read back from /proc/sys after writing. */
  sysctls: Record<string, number>;
  /** The data disk's /proc/mounts line. */
  mount?: string;
}
