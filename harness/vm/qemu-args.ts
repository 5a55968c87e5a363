// The QEMU command line of a durolab VM. Fastest boot measured under TCG: qboot firmware,
// `-cpu qemu64,+rdrand` (without RDRAND node's first start blocks ~1.8 s on entropy),
// `quiet`, an uncompressed initramfs. Networking is QEMU user mode with restrict=on always:
// the guest reaches only the hostfwd/guestfwd endpoints, all on the host's loopback.
import { qemuEscape, type DataDisk } from './disk.ts';
import { QEMU_MARKER } from './process-registry.ts';

export type Accel = 'kvm' | 'tcg';

/** Guest memory when a VM's options name none. */
export const DEFAULT_MEMORY_MIB = 1024;

export interface HostForward {
  hostPort: number;
  guestPort: number;
}

export interface GuestForward {
  /** An address on the guest's 10.0.2.0/24 network, e.g. 10.0.2.100. */
  guestIp: string;
  guestPort: number;
  /** Port on the host's 127.0.0.1 the connection is forwarded to. */
  hostPort: number;
}

export interface QemuArgsInput {
  name: string;
  accel: Accel;
  kernel: string;
  initrd: string;
  disk: DataDisk;
  memoryMiB: number;
  serialLogPath: string;
  agentPort: number;
  hostfwd: HostForward[];
  guestfwd: GuestForward[];
  /** Host busybox, which QEMU runs as `busybox nc` for each guestfwd connection. */
  busybox: string;
  /** Firmware (qboot) or undefined for QEMU's default SeaBIOS. */
  bios?: string;
  extraKernelArgs?: string[];
  /** A QMP control socket (used to save a booted guest as a template). */
  qmpSocket?: string;
  /** A saved guest state to resume instead of booting (`-incoming exec:cat <file>`). */
  incomingState?: string;
}

/** Single-quoted for the /bin/sh that QEMU runs an exec: migration URI with. */
export const shellQuote = (v: string): string => `'${v.replaceAll("'", `'\\''`)}'`;

const isPort = (p: number): boolean => Number.isInteger(p) && p > 0 && p < 65536;

function validateForwards(name: string, hostfwd: HostForward[], guestfwd: GuestForward[]): void {
  for (const f of hostfwd) {
    if (!isPort(f.hostPort) || !isPort(f.guestPort)) throw new Error(`VM ${name}: hostfwd ${JSON.stringify(f)} needs ports in 1..65535`);
  }
  for (const f of guestfwd) {
    if (!/^10\.0\.2\.\d{1,3}$/.test(f.guestIp) || ['10.0.2.2', '10.0.2.3', '10.0.2.15'].includes(f.guestIp)) {
      throw new Error(`VM ${name}: guestfwd address ${f.guestIp} must be a free address on 10.0.2.0/24 (not .2 gateway, .3 DNS or .15 the guest), e.g. 10.0.2.100`);
    }
    if (!isPort(f.guestPort) || !isPort(f.hostPort)) throw new Error(`VM ${name}: guestfwd ${JSON.stringify(f)} needs ports in 1..65535`);
  }
}

export function kernelCommandLine(input: Pick<QemuArgsInput, 'name' | 'agentPort' | 'extraKernelArgs'>): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(input.name)) throw new Error(`VM name '${input.name}' must match [A-Za-z0-9_.-]+ (it becomes the guest hostname)`);
  return ['console=ttyS0', 'quiet', 'panic=-1', `durolab.agent_port=${input.agentPort}`, `durolab.name=${input.name}`, ...(input.extraKernelArgs ?? [])].join(' ');
}

export function buildQemuArgs(input: QemuArgsInput): string[] {
  validateForwards(input.name, input.hostfwd, input.guestfwd);
  if (/[,\s]/.test(input.busybox)) throw new Error(`busybox path '${input.busybox}' must not contain commas or spaces (it is part of a guestfwd cmd:)`);
  const netdev = [
    'user',
    'id=n0',
    'restrict=on',
    ...input.hostfwd.map((f) => `hostfwd=tcp:127.0.0.1:${f.hostPort}-:${f.guestPort}`),
    ...input.guestfwd.map((f) => `guestfwd=tcp:${f.guestIp}:${f.guestPort}-cmd:${input.busybox} nc 127.0.0.1 ${f.hostPort}`),
  ].join(',');
  return [
    '-name', `${QEMU_MARKER}:${input.name}`,
    '-accel', input.accel,
    '-cpu', input.accel === 'kvm' ? 'host' : 'qemu64,+rdrand',
    ...(input.bios ? ['-bios', input.bios] : []),
    '-m', String(input.memoryMiB),
    '-smp', '1',
    '-display', 'none',
    '-no-reboot',
    '-nodefaults',
    '-no-user-config',
    '-monitor', 'none',
    ...(input.qmpSocket ? ['-qmp', `unix:${qemuEscape(input.qmpSocket)},server=on,wait=off`] : []),
    '-chardev', `file,id=ser0,path=${qemuEscape(input.serialLogPath)}`,
    '-serial', 'chardev:ser0',
    '-kernel', input.kernel,
    '-initrd', input.initrd,
    '-append', kernelCommandLine(input),
    ...input.disk.qemuDriveArgs(),
    '-netdev', netdev,
    '-device', 'virtio-net-pci,netdev=n0',
    ...(input.incomingState ? ['-incoming', `exec:cat ${shellQuote(input.incomingState)}`] : []),
  ];
}
