// The run's environment, recorded once per run. systeminformation gives the host facts;
// the few it lacks that matter for durability (the device's write cache mode) come from sysfs.
// Every fact degrades to "unknown" with a note rather than failing the run.

import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import si from 'systeminformation';
import { describeCrc32c } from '../records/crc.ts';
import { describeWritePath } from '../storage/native-append.ts';
import { deviceForPath, nearestExisting, type DeviceInfo } from './device.ts';

/** The machine a run measured on, as run.json and the reports record it. */
export interface Environment {
  /** Which CRC-32C implementation ran (engine/records/crc.ts: the ISA-L addon or the @node-rs/crc32 fallback and why). */
  crc32c?: string;
  /** Which write(2) path the engine's appends took (engine/storage/file-write.ts: the N-API pwrite addon or the fs.writeSync fallback and why), and whether leader appends check, stamp and write in one native call (native-append.ts). */
  pwrite?: string;
  hostname: string;
  cpu: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  os: string;
  node: string;
  dataDir: string;
  filesystem: string;
  device: string;
  /**
   * Whether this machine hands freed memory back to its hypervisor (virtio-balloon free page
   * reporting): there, memory the guest has not used lately costs a host fault per page when
   * touched again (~15-25 µs per 4 KiB on this lab's VM), which a growing page cache pays on
   * every write. Absent in records made before it was collected.
   */
  memoryReturn?: string;
  note?: string;
}

const PER_CALL_TIMEOUT_MS = 1500;

async function timed<T>(what: string, p: Promise<T>, notes: string[]): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      notes.push(`${what} timed out after ${PER_CALL_TIMEOUT_MS} ms`);
      resolve(null);
    }, PER_CALL_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([
      p.catch((e: unknown) => {
        notes.push(`${what} failed: ${(e as Error).message}`);
        return null;
      }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function sysfs(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

async function describeDevice(info: DeviceInfo, blocks: si.Systeminformation.BlockDevicesData[] | null): Promise<string> {
  if (info.device === null) return `none (${info.fsType} has no block device)`;
  const disk = info.partitionOf ?? info.device;
  const parts: string[] = [];
  const bd = blocks?.find((b) => b.name === info.device);
  if (bd && bd.size > 0) parts.push(`${gib(bd.size)} ${bd.type}`);
  const model = blocks?.find((b) => b.name === disk)?.model?.trim();
  if (model) parts.push(`model ${JSON.stringify(model)}`);
  const cache = await sysfs(`/sys/block/${disk}/queue/write_cache`);
  if (cache) parts.push(`write cache: ${cache}`);
  const rotational = await sysfs(`/sys/block/${disk}/queue/rotational`);
  if (rotational !== null) parts.push(`rotational=${rotational}`);
  const sched = (await sysfs(`/sys/block/${disk}/queue/scheduler`))?.match(/\[([^\]]+)\]/)?.[1];
  if (sched) parts.push(`scheduler ${sched}`);
  const name = info.partitionOf ? `${info.device} (partition of ${info.partitionOf})` : info.device;
  return parts.length > 0 ? `${name}: ${parts.join(', ')}` : name;
}

/** VIRTIO_BALLOON_F_REPORTING: the balloon reports free pages to the host, which may discard them. */
const BALLOON_F_REPORTING = 5;

/** The memoryReturn fact from sysfs: the balloon devices' negotiated features (a string of 0/1 per feature bit). */
export async function describeMemoryReturn(sysRoot = '/sys'): Promise<string> {
  const driver = `${sysRoot}/bus/virtio/drivers/virtio_balloon`;
  let devices: string[];
  try {
    devices = (await readdir(driver)).filter((n) => n.startsWith('virtio'));
  } catch {
    return 'no virtio balloon: freed memory stays with this machine';
  }
  for (const d of devices) {
    const features = await sysfs(`${driver}/${d}/features`);
    if (features?.[BALLOON_F_REPORTING] === '1') {
      const order = await sysfs(`${sysRoot}/module/page_reporting/parameters/page_reporting_order`);
      const size = order !== null && /^\d+$/.test(order) ? `, blocks of ${(2 ** Number(order) * 4) / 1024} MiB and up` : '';
      return `virtio-balloon free page reporting (${d}${size}): freed memory goes back to the host, and touching it again costs a host fault per page`;
    }
  }
  return 'virtio balloon without free page reporting: freed memory stays with this machine';
}

export async function collectEnvironment(dataDir: string): Promise<Environment> {
  const notes: string[] = [];
  const existing = await nearestExisting(dataDir);
  if (existing !== dataDir) notes.push(`${dataDir} does not exist yet; filesystem facts are those of ${existing}`);

  const [cpu, mem, osInfo, fsSizes, blocks, devInfo, memoryReturn] = await Promise.all([
    timed('systeminformation cpu()', si.cpu(), notes),
    timed('systeminformation mem()', si.mem(), notes),
    timed('systeminformation osInfo()', si.osInfo(), notes),
    timed('systeminformation fsSize()', si.fsSize(), notes),
    timed('systeminformation blockDevices()', si.blockDevices(), notes),
    timed('deviceForPath', deviceForPath(existing), notes),
    timed('free page reporting', describeMemoryReturn(), notes),
  ]);

  let cpuText = 'unknown';
  if (cpu) {
    cpuText = [cpu.manufacturer, cpu.brand].filter((s) => s && s.trim() !== '').join(' ') || 'unknown';
    if (cpu.speed > 0) cpuText += ` @ ${cpu.speed} GHz`;
    if (/\bhypervisor\b/.test(cpu.flags)) cpuText += ' (virtual machine)';
  } else {
    const c = os.cpus()[0];
    if (c) cpuText = c.model;
  }

  let filesystem = 'unknown';
  let device = 'unknown';
  if (devInfo) {
    filesystem = `${devInfo.fsType} at ${devInfo.mountPoint} (source ${devInfo.source})`;
    const fs = fsSizes?.find((f) => f.mount === devInfo.mountPoint);
    if (fs && fs.size > 0) filesystem += `, ${gib(fs.size)}, ${fs.use.toFixed(1)} % used`;
    device = await describeDevice(devInfo, blocks);
    if (devInfo.note) notes.push(devInfo.note);
  }

  const env: Environment = {
    hostname: osInfo?.hostname || os.hostname(),
    cpu: cpuText,
    cores: cpu?.cores || os.availableParallelism(),
    memoryBytes: mem?.total || os.totalmem(),
    kernel: osInfo?.kernel || os.release(),
    os: osInfo ? `${osInfo.distro} ${osInfo.release}${osInfo.codename ? ` (${osInfo.codename})` : ''} ${osInfo.arch}`.trim() : `${os.type()} ${os.arch()}`,
    // NODE_OPTIONS carries bin/durolab.mjs's young-generation size: part of how the figures were made.
    node: process.env.NODE_OPTIONS ? `${process.version} (NODE_OPTIONS ${process.env.NODE_OPTIONS})` : process.version,
    dataDir,
    filesystem,
    device,
    ...(memoryReturn !== null ? { memoryReturn } : {}),
    crc32c: describeCrc32c(),
    pwrite: describeWritePath(),
  };
  if (notes.length > 0) env.note = notes.join('; ');
  return env;
}
