// A full disk is a finding, not a silent error: a trial in which a broker's disk filled (its own
// log said ENOSPC, or its filesystem had under 1 % free at the cut) measured a disk that had
// stopped taking writes, not the fault the scenario asks about. Said per broker with the disk's
// size and the bytes written to it, for the trial's suspicions (fault-trial.ts, crash states);
// unless a fault filled it on purpose (fault kind disk-full: harness/faults/disk-full.ts).
import { failureText } from '../results/storage-failure-text.ts';
import type { CutInfo } from '../targets/types.ts';
import type { DiskSpace } from '../targets/host-fault-disks.ts';

/** Free space under this fraction of the filesystem at the cut counts as full. */
export const FULL_DISK_FREE_FRACTION = 0.01;

/** "12.5 MiB" */
export const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

interface DiskAtCutFigures {
  space?: DiskSpace | null;
  counters?: { bytesWritten?: number };
}

/**
 * One line per broker whose disk filled before the cut, or [] when none did. `filledOnPurpose`:
 * brokers a fault of the schedule filled (a kind whose registry row says fillsDisk): their full
 * disk is the fault under test; one of them whose log names no ENOSPC is the finding instead
 * (the fill did not reach the broker's writes).
 */
export function fullDiskFindings(cut: Pick<CutInfo, 'diskAtCut' | 'storageFailures'>, filledOnPurpose: readonly number[] = []): string[] {
  const disks = (cut.diskAtCut ?? {}) as Record<number, DiskAtCutFigures | null>;
  const failures = cut.storageFailures ?? [];
  const ids = [...new Set([...Object.keys(disks).map(Number), ...failures.map((f) => f.brokerId)])].sort((a, b) => a - b);
  const out: string[] = [];
  for (const id of [...new Set(filledOnPurpose)].sort((a, b) => a - b)) {
    if (failures.some((f) => f.brokerId === id && f.errno === 'ENOSPC')) continue;
    out.push(`broker ${id}'s disk was filled on purpose, but its log names no ENOSPC: the fault did not reach its writes (nothing it wrote needed a new block?)`);
  }
  for (const id of ids) {
    if (filledOnPurpose.includes(id)) continue;
    const enospc = failures.find((f) => f.brokerId === id && f.errno === 'ENOSPC');
    const d = disks[id] ?? null;
    const space = d?.space ?? null;
    const nearlyFull = space !== null && space.freeBytes < space.fsBytes * FULL_DISK_FREE_FRACTION;
    if (!enospc && !nearlyFull) continue;
    const written = d?.counters?.bytesWritten;
    const figures = [
      space ? `disk ${space.diskMiB} MiB (filesystem ${mib(space.fsBytes)}, ${((100 * space.freeBytes) / space.fsBytes).toFixed(1)} % free at the cut)` : 'disk size not read at the cut',
      written !== undefined ? `${mib(written)} written to it` : 'bytes written not counted on this route',
    ];
    out.push(`broker ${id}'s disk filled${enospc ? ` (${failureText(enospc)})` : ''}: ${figures.join(', ')}; the trial measured a full disk, not the fault`);
  }
  return out;
}
