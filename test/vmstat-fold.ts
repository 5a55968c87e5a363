// The kernel counts vmstat events (nr_dirtied, nr_written, …) per CPU and folds them into
// /proc/vmstat about once a second (vm.stat_interval), so a read right after some writes can
// miss up to a CPU's batch of them (measured: 1,008 of 1,024 dirtied pages until folded; CI
// once read 1,019). Writing /proc/sys/vm/stat_refresh folds them at once; only root may. Tests
// that assert a counter grew by at least what they did call this first. Under CI=true (root)
// a fold that fails fails the test with its reason; elsewhere it returns false and the test
// allows for a batch.
import { writeFileSync } from 'node:fs';
import { inCi, MissingRequirementError } from './requirements.ts';

/** Folds the per-CPU vmstat counts into /proc/vmstat; whether it could (always true under CI=true). */
export function foldVmStats(): boolean {
  try {
    writeFileSync('/proc/sys/vm/stat_refresh', '1');
    return true;
  } catch (e) {
    if (inCi()) throw new MissingRequirementError(`writing /proc/sys/vm/stat_refresh (root) to fold the per-CPU vmstat counts failed: ${(e as Error).message}`);
    return false;
  }
}
