// CPU time of host processes from /proc/<pid>/stat (proc(5)): utime + stime, fields 14 and 15
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
