// Evidence a power cut leaves on the lab's fault disks, kept so anyone can re-count a trial's
// loss from the bytes (`durolab recount`): per broker the image exactly as the cut left it
// (copied sparse after the disk applied its onCut policy, before a restart touches it) and,
// after a clean stop of the recovered cluster, the final image. Layout under a trial's
// directory: broker-<id>/cut.img, broker-<id>/final.img and disks.json (DisksManifest).
// Copies never fill the results disk: each is refused, with the figures, when the free space
// left after it would fall under a reserve; a refused copy marks the evidence incomplete.
import { existsSync, mkdirSync, renameSync, rmSync, statSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { sparseCopy } from '../vm/disk.ts';

/** Free space to leave on the results disk after any image copy. */
export const EVIDENCE_RESERVE_BYTES = 1024 ** 3;

/** One kept image. */
export interface KeptImage {
  /** Relative to the trial's directory (broker-1/cut.img). */
  file: string;
  /** Bytes the sparse copy occupies (what it cost the results disk). */
  allocatedBytes: number;
}

/** What a trial kept of one broker's disk. */
export interface BrokerDiskEvidence {
  brokerId: number;
  /** The target kind that ran the broker (its log format and layout). */
  target: string;
  fileSystem: 'ext4';
  /** Where the broker's data sits inside the image (Kafka's log.dirs, durolab's data dir), from the file system's root. */
  dataDirOnDisk: string;
  /** The disk model id (harness/results/disk-models.ts). */
  diskModel: string;
  sizeMiB: number;
  /** ext4 mount options the trial used ('' = the kernel's defaults). */
  mountOptions: string;
  /** The cut, in ms on the ledger's clock (Date.now()); absent: this broker's disk was not cut. */
  cutAtMs?: number;
  cut?: KeptImage;
  final?: KeptImage;
  /** How the brokers stopped before the final image: clean (their own shutdown) or killed. */
  finalStop?: 'clean' | 'killed';
}

export interface DisksManifest {
  /** The matrix cell and its trial (run.json's cells[].id, trials[].index). */
  cell: string;
  trial: number;
  /** The topic the load wrote (its partition directories are <topic>-<partition>). */
  topic: string;
  /** The client driver that wrote it: its reader finds each record's ledger identity. */
  driver: string;
  /** Why the images were kept: --keep-data, a suspect trial, a failed check. */
  keptBecause: string[];
  /** Set when an image could not be kept (the results disk was full, a copy failed): the trial's result stands, its evidence does not. */
  incomplete?: string[];
  brokers: BrokerDiskEvidence[];
}

export const cutImageName = (brokerId: number): string => path.join(`broker-${brokerId}`, 'cut.img');
export const finalImageName = (brokerId: number): string => path.join(`broker-${brokerId}`, 'final.img');

/** Bytes a file occupies on its disk (sparse files: only their data). */
export function allocatedBytes(file: string): number {
  return statSync(file).blocks * 512;
}

/** Why `bytes` more cannot go under `dir` without leaving less than the reserve, or null when they fit. */
export function noRoomFor(dir: string, bytes: number, what: string, reserve = EVIDENCE_RESERVE_BYTES): string | null {
  const st = statfsSync(existingParent(dir));
  const free = st.bavail * st.bsize;
  if (free - bytes >= reserve) return null;
  const gib = (n: number) => `${(n / 1024 ** 3).toFixed(2)} GiB`;
  return `${what}: ${gib(bytes)} needed under ${dir}, ${gib(free)} free, and ${gib(reserve)} must stay free: not kept`;
}

function existingParent(dir: string): string {
  let d = path.resolve(dir);
  while (!existsSync(d)) d = path.dirname(d);
  return d;
}

/** Copies `image` sparse to `trialDir/file` when the results disk has room; the copy or the reason it was not made. */
export async function keepImageCopy(image: string, trialDir: string, file: string, reserve = EVIDENCE_RESERVE_BYTES): Promise<KeptImage | { problem: string }> {
  const dest = path.join(trialDir, file);
  const why = noRoomFor(trialDir, allocatedBytes(image), `copy of ${image} to ${dest}`, reserve);
  if (why) return { problem: why };
  mkdirSync(path.dirname(dest), { recursive: true });
  try {
    await sparseCopy(image, dest);
  } catch (err) {
    rmSync(dest, { force: true });
    return { problem: `copy of ${image} to ${dest} failed: ${(err as Error).message}` };
  }
  return { file, allocatedBytes: allocatedBytes(dest) };
}

/** Moves `image` to `trialDir/file` (same file system: a rename; else a sparse copy, then the original goes). */
export async function keepImageMove(image: string, trialDir: string, file: string): Promise<KeptImage | { problem: string }> {
  const dest = path.join(trialDir, file);
  mkdirSync(path.dirname(dest), { recursive: true });
  try {
    renameSync(image, dest);
    return { file, allocatedBytes: allocatedBytes(dest) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') return { problem: `move of ${image} to ${dest} failed: ${(err as Error).message}` };
  }
  const copied = await keepImageCopy(image, trialDir, file);
  rmSync(image, { force: true });
  return copied;
}

/** Removes the images a trial copied but does not keep (an unremarkable trial without --keep-data). */
export function dropImages(trialDir: string, brokers: readonly BrokerDiskEvidence[]): void {
  for (const b of brokers) for (const img of [b.cut, b.final]) if (img) rmSync(path.join(trialDir, img.file), { force: true });
}
