// Checks of a scenario's `vm:` block against the run's targets. A QEMU target (vmOptions) takes
// all of it; a host-route target (capabilities.faultDisk 'host': its brokers on the lab's fault
// disk mounted on this host) takes only the disk's part (disk, diskMiB, mountOptions), so a
// guest-only key on a run without a QEMU target is refused rather than ignored.
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import { TARGET_KINDS, capabilitiesOf, type TargetKind } from '../targets/registry.ts';

/** The vm: keys a host-route fault disk reads. */
export const HOST_DISK_VM_KEYS = ['disk', 'diskMiB', 'mountOptions'] as const;

/** kinds: the run's targets, or null when the target is misspelt (reported elsewhere). */
export function checkVmBlock(src: SourceFile, vm: unknown, kinds: TargetKind[] | null): ScenarioIssue[] {
  if (vm === undefined || kinds === null) return [];
  const guests = kinds.filter((k) => capabilitiesOf(k).vmOptions);
  const hostDisks = kinds.filter((k) => capabilitiesOf(k).faultDisk === 'host');
  if (guests.length === 0 && hostDisks.length === 0) {
    const able = TARGET_KINDS.filter((t) => capabilitiesOf(t).faultDisk !== null).join(' | ');
    return [src.issue(['vm'], `no vm: block on target: ${kinds.join(', ')} (its brokers have no fault disk; set target: ${able})`, 'a vm: block', { key: true })];
  }
  if (guests.length > 0 || typeof vm !== 'object' || vm === null) return [];
  return Object.keys(vm)
    .filter((k) => !(HOST_DISK_VM_KEYS as readonly string[]).includes(k))
    .map((k) =>
      src.issue(
        ['vm', k],
        `only ${HOST_DISK_VM_KEYS.join(', ')} in vm: on target: ${hostDisks.join(', ')} (its brokers run on this host, on the fault disk; ${k} is for QEMU guests, target: vm)`,
        `'${k}'`,
        { key: true },
      ),
    );
}
