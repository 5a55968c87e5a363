// The kernel counts vmstat events (nr_dirtied, nr_written, …) per CPU and folds them into
// /proc/vmstat about once a second (vm.stat_interval), so a read right after some writes can
// miss up to a CPU's batch of them (CI once read 1,019 of 1,024 dirtied pages). Writing
// /proc/sys/vm/stat_refresh folds them at once; only root may. Tests that assert a counter
// grew by at least what they did call this first, and allow for a batch when it returns false.
import { writeFileSync } from 'node:fs';

/** Folds the per-CPU vmstat counts into /proc/vmstat; whether it could. */
export function foldVmStats(): boolean {
  try {
    writeFileSync('/proc/sys/vm/stat_refresh', '1');
    return true;
  } catch {
    return false;
  }
}
