// Which block device (as named in /proc/diskstats) holds a directory:
// stat().dev -> major:minor -> /sys/dev/block/M:m/uevent DEVNAME, with the filesystem and
// mount point from /proc/self/mountinfo. tmpfs/overlay have no block device: that is a
// normal answer (device null + note), not an error, and the sampler then records vmstat only.

import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface DeviceInfo {
  /** Kernel name as in /proc/diskstats (vda, nvme0n1p2, dm-0), or null when there is no block device. */
  device: string | null;
  /** Whole disk when `device` is a partition. */
  partitionOf?: string;
  /** st_dev of the path as "major:minor". */
  majorMinor: string;
  fsType: string;
  mountPoint: string;
  /** Mount source from mountinfo (/dev/vda, tmpfs, overlay...). */
  source: string;
  /** Why `device` is null, or how it was found when not directly. */
  note?: string;
}

export interface MountEntry {
  majorMinor: string;
  root: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

// Mount points escape space, tab, newline and backslash as 3-digit octal.
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Parses /proc/<pid>/mountinfo text (proc(5) layout: ... optional fields, "-", fstype, source, options). */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split(' ');
    const sep = f.indexOf('-', 6);
    if (f.length < 10 || sep < 0 || sep + 2 >= f.length) {
      throw new Error(`mountinfo: malformed line (expected "id parent M:m root mountpoint opts ... - fstype source opts"): ${JSON.stringify(line)}`);
    }
    out.push({
      majorMinor: f[2],
      root: unescapeMount(f[3]),
      mountPoint: unescapeMount(f[4]),
      fsType: f[sep + 1],
      source: unescapeMount(f[sep + 2]),
    });
  }
  return out;
}

function contains(mountPoint: string, path: string): boolean {
  return mountPoint === '/' || path === mountPoint || path.startsWith(mountPoint + '/');
}

/**
 * The mount a resolved path lives on: the deepest mount point containing it, preferring
 * entries whose device matches st_dev; among equals the last one wins, because a later
 * mount on the same point hides the earlier one (/dev/shm is mounted twice here).
 */
export function mountForPath(entries: MountEntry[], resolvedPath: string, majorMinor: string): MountEntry | undefined {
  const pick = (list: MountEntry[]): MountEntry | undefined => {
    let best: MountEntry | undefined;
    for (const e of list) {
      if (!contains(e.mountPoint, resolvedPath)) continue;
      if (!best || e.mountPoint.length >= best.mountPoint.length) best = e;
    }
    return best;
  };
  return pick(entries.filter((e) => e.majorMinor === majorMinor)) ?? pick(entries);
}

/** Splits a Linux userspace dev_t (glibc encoding) into major and minor. */
export function splitDev(dev: bigint): { major: number; minor: number } {
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  return { major, minor };
}

function ueventField(text: string, key: string): string | undefined {
  const m = new RegExp(`^${key}=(.*)$`, 'm').exec(text);
  return m ? m[1] : undefined;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function blockDeviceOf(majorMinor: string): Promise<{ device: string; partitionOf?: string } | null> {
  const sysPath = `/sys/dev/block/${majorMinor}`;
  const uevent = await readOrNull(`${sysPath}/uevent`);
  if (uevent === null) return null;
  const device = ueventField(uevent, 'DEVNAME');
  if (!device) return null;
  if (ueventField(uevent, 'DEVTYPE') === 'partition') {
    // The partition's sysfs directory sits inside its disk's directory.
    const parent = basename(dirname(await realpath(sysPath)));
    return { device, partitionOf: parent };
  }
  return { device };
}

export async function deviceForPath(path: string): Promise<DeviceInfo> {
  let resolved: string;
  try {
    resolved = await realpath(path);
  } catch (e) {
    throw new Error(`deviceForPath: cannot resolve ${path}: ${(e as Error).message}`);
  }
  const st = await stat(resolved, { bigint: true });
  const { major, minor } = splitDev(st.dev);
  const majorMinor = `${major}:${minor}`;
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const mount = mountForPath(parseMountinfo(mountinfo), resolved, majorMinor);
  const fsType = mount?.fsType ?? 'unknown';
  const mountPoint = mount?.mountPoint ?? '/';
  const source = mount?.source ?? 'unknown';
  const base = { majorMinor, fsType, mountPoint, source };

  const direct = await blockDeviceOf(majorMinor);
  if (direct) return { ...direct, ...base };

  // btrfs and some other filesystems report an anonymous st_dev (major 0); the mount
  // source still names the real device.
  if (source.startsWith('/dev/')) {
    try {
      const devNode = await realpath(source);
      const devStat = await stat(devNode, { bigint: true });
      if (devStat.isBlockDevice()) {
        const r = splitDev(devStat.rdev);
        const viaSource = await blockDeviceOf(`${r.major}:${r.minor}`);
        if (viaSource) {
          return { ...viaSource, ...base, note: `st_dev ${majorMinor} is anonymous; device taken from mount source ${source}` };
        }
      }
    } catch {
      // fall through to "no block device"
    }
  }
  return {
    device: null,
    ...base,
    note: `${resolved} is on ${fsType} at ${mountPoint} (${majorMinor}), which has no block device: disk figures unavailable, vmstat only`,
  };
}

/** The path itself if it exists, else its nearest existing ancestor (a data dir may not exist yet). */
export async function nearestExisting(path: string): Promise<string> {
  let p = path;
  for (;;) {
    try {
      await stat(p);
      return p;
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}
