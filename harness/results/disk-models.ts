// What the disk under a VM broker does at a power cut: the model every VM run's loss figures
// depend on. One entry per model, in one place; the terminal summary and the report both
// print it. (Disk models served over NBD add their entries here.)
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
  'recorded-write-log-crash-states': {
    id: 'recorded-write-log-crash-states',
    name: 'virtio-blk over a host file with a volatile write cache (cache=writeback), every request recorded (QEMU blklogwrites)',
    atCut:
      'crash states are built from the recorded write log: at each crash point the writes completed before the last FLUSH (and FUA writes) ' +
      "are on the disk, the unflushed ones follow the fault's onCut policy (drop-unflushed: all lost, as a volatile cache losing power); " +
      "the guest's page cache and uncommitted ext4 journal are lost as in a power cut",
  },
} as const satisfies Record<string, DiskModel>;

export type DiskModelId = keyof typeof DISK_MODELS;

/** The VM target's disk today (harness/vm/disk.ts: a sparse file, virtio-blk, cache=writeback). */
export const DEFAULT_VM_DISK_MODEL: DiskModelId = 'virtio-blk-file-writeback';

/** The model a target runs its brokers on: its own `diskModel` when it declares one, the file disk for VMs, none for processes. */
export function diskModelIdFor(target: { kind: 'process' | 'vm'; diskModel?: string }): string | undefined {
  return target.diskModel ?? (target.kind === 'vm' ? DEFAULT_VM_DISK_MODEL : undefined);
}

/** A run's disk model (older VM runs recorded none: they ran on the file disk). */
export function diskModelOf(run: Pick<RunResult, 'target' | 'diskModel'>): DiskModel | null {
  const id = run.diskModel ?? (run.target === 'vm' ? DEFAULT_VM_DISK_MODEL : undefined);
  if (id === undefined) return null;
  return (DISK_MODELS as Record<string, DiskModel>)[id] ?? { id, name: id, atCut: 'not described (unknown disk model id)' };
}

/** One sentence for the terminal and the report; null for runs without a disk model (process target). */
export function diskModelText(run: Pick<RunResult, 'target' | 'diskModel'>): string | null {
  const m = diskModelOf(run);
  return m ? `disk model: ${m.name}: ${m.atCut}. Loss and recovery figures hold for this model only.` : null;
}
