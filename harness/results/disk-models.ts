// What the disk under a VM broker does at a power cut: the model every VM run's loss figures
// depend on. One entry per model, in one place; the terminal summary and the report both
// print it. The NBD disk's ids (harness/model/disk-spec.ts diskModelId) are its onCut policy
// with optional suffixes: nbd-volatile-cache+torn, ...+flush-ignored, ...+eio.
import type { RunResult } from './types.ts';

export interface DiskModel {
  id: string;
  /** Short name: what the guest's disk is. */
  name: string;
  /** What survives a cut and what does not. */
  atCut: string;
}

export const DISK_MODELS = {
  'virtio-blk-file-writeback': {
    id: 'virtio-blk-file-writeback',
    name: 'virtio-blk over a host file, cache=writeback',
    atCut:
      "the guest's page cache and its uncommitted ext4 journal are lost at a cut; the disk keeps every write it received " +
      '(a disk without a volatile write cache: no reordering or loss below the guest)',
  },
  'host-nbd-write-through': {
    id: 'host-nbd-write-through',
    name: "the lab's NBD disk without a volatile cache under an ext4 mounted on the host (the host route: qemu-storage-daemon FUSE export, loop device; target kafka and process)",
    atCut:
      "the host mount's page cache and its uncommitted ext4 journal are lost at a cut; the disk keeps every write it received " +
      '(a disk without a volatile write cache: no reordering or loss below the file system)',
  },
  'nbd-volatile-cache+drop-unflushed': {
    id: 'nbd-volatile-cache+drop-unflushed',
    name: "virtio-blk over the harness's NBD disk with a volatile write cache (vm.disk model volatile-cache, onCut drop-unflushed)",
    atCut:
      "the guest's page cache (on the host route: the host mount's), its uncommitted ext4 journal and every write the disk had not been told to flush (FLUSH or FUA) are lost at a cut; " +
      'flushed writes survive (a drive with a volatile cache that honours flushes)',
  },
  'nbd-volatile-cache+random-subset': {
    id: 'nbd-volatile-cache+random-subset',
    name: "virtio-blk over the harness's NBD disk with a volatile write cache (onCut random-subset)",
    atCut:
      "the guest's page cache and uncommitted journal are lost; of the unflushed writes a seeded random half of their contiguous sector runs reaches the media, " +
      'in no particular order (a cache that writes back out of order); flushed writes survive',
  },
  'nbd-volatile-cache+reorder': {
    id: 'nbd-volatile-cache+reorder',
    name: "virtio-blk over the harness's NBD disk with a volatile write cache (onCut reorder)",
    atCut:
      "the guest's page cache and uncommitted journal are lost; of the unflushed writes a later run survives while the earlier ones are lost " +
      '(a cache that reorders writes); flushed writes survive',
  },
  'nbd-volatile-cache+torn': {
    id: 'nbd-volatile-cache+torn',
    name: "virtio-blk over the harness's NBD disk with a volatile write cache (onCut torn)",
    atCut:
      "the guest's page cache and uncommitted journal are lost; unflushed writes reach the media in order up to one that is torn " +
      '(only its first 512-byte sectors persist), the rest are lost; flushed writes survive',
  },
  'per-cell': {
    id: 'per-cell',
    name: 'varies by cell (vm.disk.* in settings/matrix)',
    atCut: "each cell's disk is named in its settings (vm.disk.model, vm.disk.onCut, vm.disk.flush); see the cell rows",
  },
  'recorded-write-log-crash-states': {
    id: 'recorded-write-log-crash-states',
    name: 'virtio-blk over a host file with a volatile write cache (cache=writeback), every request recorded (QEMU blklogwrites)',
    atCut:
      'crash states are built from the recorded write log: at each crash point the writes completed before the last FLUSH (and FUA writes) ' +
      "are on the disk, the unflushed ones follow the fault's onCut policy (drop-unflushed: all lost, as a volatile cache losing power); " +
      "the guest's page cache and uncommitted ext4 journal are lost as in a power cut",
  },
  'nbd-write-log-crash-states': {
    id: 'nbd-write-log-crash-states',
    name: "virtio-blk over the harness's NBD disk with a volatile write cache, every request recorded in its own write log (exact host-clock stamps)",
    atCut:
      'crash states are built from the recorded write log: at each crash point the writes completed before the last honoured FLUSH was sent ' +
      "(and honoured FUA writes) are on the disk, the unflushed ones follow the fault's onCut policy (drop-unflushed: all lost, as a volatile " +
      "cache losing power); a FLUSH a lying drive did not honour makes nothing durable; the guest's page cache and uncommitted ext4 journal are lost as in a power cut",
  },
  'host-nbd-write-log-crash-states': {
    id: 'host-nbd-write-log-crash-states',
    name: "the host route's fault disk (the harness's NBD disk -> qemu-storage-daemon FUSE export -> loop device -> ext4 on this host), every request recorded in its write log (exact host-clock stamps)",
    atCut:
      'crash states are built from the recorded write log: at each crash point the writes completed before the last honoured FLUSH was sent ' +
      "(and honoured FUA writes) are on the disk, the unflushed ones follow the fault's onCut policy; the broker's page cache on the host " +
      'and the uncommitted ext4 journal are lost as in a power cut; each state is checked by the target\'s own recovery (Apache Kafka: UnifiedLog via recovery-check/)',
  },
} as const satisfies Record<string, DiskModel>;

export type DiskModelId = keyof typeof DISK_MODELS;

/** The VM target's disk today (harness/vm/disk.ts: a sparse file, virtio-blk, cache=writeback). */
export const DEFAULT_VM_DISK_MODEL: DiskModelId = 'virtio-blk-file-writeback';

/**
 * The disk model id of a host-route target's run (harness/targets/host-fault-disks.ts): the NBD
 * ids for a volatile cache (the broker's page cache is the host mount's there), write-through for model file.
 */
export function hostDiskModelId(nbdId: string, variesByCell: boolean): string {
  if (variesByCell) return 'per-cell';
  return nbdId === DEFAULT_VM_DISK_MODEL ? 'host-nbd-write-through' : nbdId;
}

/**
 * A run's disk model. Older VM runs recorded none: they ran on their target's default, the file
 * disk, which `targetDefault` names (harness/targets/run-targets.ts reads it off the registry).
 */
export function diskModelOf(run: Pick<RunResult, 'diskModel'>, targetDefault: string | undefined): DiskModel | null {
  const id = run.diskModel ?? targetDefault;
  if (id === undefined) return null;
  const known = (DISK_MODELS as Record<string, DiskModel>)[id];
  if (known) return known;
  // NBD variants: the onCut model plus a lying drive and/or injected errors.
  const [head, policy, ...extra] = id.split('+');
  const base = (DISK_MODELS as Record<string, DiskModel>)[`${head}+${policy}`];
  if (!base || extra.some((e) => e !== 'flush-ignored' && e !== 'eio')) return { id, name: id, atCut: 'not described (unknown disk model id)' };
  const lies = extra.includes('flush-ignored');
  return {
    id,
    name: `${base.name}${lies ? ', flush ignored (a lying drive)' : ''}${extra.includes('eio') ? ', with injected EIO' : ''}`,
    atCut: lies
      ? `${base.atCut.replace(/; flushed writes survive.*$/, '')}; FLUSH and FUA are acknowledged but persist nothing, so every write since the disk was created is unflushed at a cut`
      : base.atCut,
  };
}

/** One sentence for the terminal and the report; null for runs without a disk model (process target). */
export function diskModelText(run: Pick<RunResult, 'diskModel'>, targetDefault: string | undefined): string | null {
  const m = diskModelOf(run, targetDefault);
  return m ? `disk model: ${m.name}: ${m.atCut}. Loss and recovery figures hold for this model only.` : null;
}
