// What host processes use, from /proc (proc(5)). CPU time from /proc/<pid>/stat: utime + stime, fields 14 and 15
// counted after the ")" that ends the command name (which may hold spaces), in clock ticks of
// 1/100 s (USER_HZ, 100 on every Linux ABI). Every thread of the process counts (a JVM's GC and
// network threads, libuv's worker threads doing sendfile).

const USER_HZ = 100;

/** utime + stime in ms from a /proc/<pid>/stat line; throws naming what is wrong. */
export function parseProcStatCpuMs(stat: string, where: string): number {
  const close = stat.lastIndexOf(')');
  const fields = close < 0 ? [] : stat.slice(close + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) throw new Error(`${where}: not a /proc/<pid>/stat line (no utime/stime in fields 14-15): ${stat.slice(0, 120)}`);
  return ((utime + stime) * 1000) / USER_HZ;
}

/** The summed CPU ms of the processes, or null when one of them is gone or unreadable. */
export async function processesCpuMs(pids: readonly number[], readFile: (file: string) => Promise<string>): Promise<number | null> {
  let total = 0;
  for (const pid of pids) {
    try {
      total += parseProcStatCpuMs(await readFile(`/proc/${pid}/stat`), `/proc/${pid}/stat`);
    } catch {
      return null;
    }
  }
  return total;
}

/** A process's open descriptors (entries of /proc/<pid>/fd) and resident memory (VmRSS of /proc/<pid>/status). */
export interface ProcessFootprint {
  pid: number;
  fds: number;
  rssBytes: number;
}

/** VmRSS in bytes from /proc/<pid>/status text; throws naming the file when it has none. */
export function parseVmRss(status: string, where: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m) throw new Error(`${where}: no VmRSS line`);
  return Number(m[1]) * 1024;
}

/** The footprint of a live process, null when it is gone. */
export async function processFootprint(pid: number, fs: { readdir(dir: string): Promise<string[]>; readFile(file: string, enc: 'utf8'): Promise<string> }): Promise<ProcessFootprint | null> {
  try {
    const fds = (await fs.readdir(`/proc/${pid}/fd`)).length;
    const rssBytes = parseVmRss(await fs.readFile(`/proc/${pid}/status`, 'utf8'), `/proc/${pid}/status`);
    return { pid, fds, rssBytes };
  } catch {
    return null;
  }
}
