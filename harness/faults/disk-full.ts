// Fault kind disk-full: each victim's host fault disk (harness/targets/host-fault-disks.ts) fills
// under the running load. A filler file on the disk's root, beside the broker's data dir (never
// in it), takes every byte the brokers could still write: fallocate reserves the bulk without
// writing it (fast even for GiBs), zeros written until ENOSPC take what it left (the extent
// tree's own blocks); where fallocate is refused or missing, zeros do it all. The broker's next
// append, flush or checkpoint that needs a new block then fails with ENOSPC, as on a real disk
// that filled: Kafka's LogDirFailureChannel takes its log dir offline (the only one: the broker
// halts), durolab's log goes offline until its broker restarts. The heal (`duration` later)
// deletes the filler; the hit brokers are restarted before the check (they do not come back on
// their own). The harness runs as the brokers' uid: as root both may use ext4's reserved blocks,
// so the filler takes those too.
import { existsSync } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { FilledDisk } from '../results/types.ts';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';
import { fileSystemSpace } from '../targets/host-fault-disks.ts';
import { findExecutable } from '../vm/prerequisites.ts';

/** The filler's name on the disk's root (the broker's data dir is another directory there). */
export const FILLER_NAME = 'durolab-disk-full.filler';

/**
 * What fallocate leaves for the zeros to take: statfs counts free what ext4 keeps for its own
 * metadata (s_resv_clusters: 2 % of the device's blocks, at most 4096 clusters, 16 MiB with 4 KiB
 * blocks), which no write takes, root's included; and the filler's extent tree needs a few blocks.
 */
function fallocateMargin(fsBytes: number): number {
  return Math.ceil(fsBytes * 0.02) + 4 * 2 ** 20;
}
const ZERO_CHUNKS = [2 ** 20, 4096, 512] as const;

export interface FillOptions {
  /** Write zeros even where fallocate works (the fallback's own test). */
  zerosOnly?: boolean;
}

/** Fills the filesystem holding `root` with `root`/FILLER_NAME until the brokers can write nothing more to it. */
export async function fillFileSystem(root: string, o: FillOptions = {}): Promise<FilledDisk> {
  const filler = path.join(root, FILLER_NAME);
  const t0 = Date.now();
  const before = fileSystemSpace(root);
  const bulk = before.freeBytes - fallocateMargin(before.fsBytes);
  let fallocateRefused: string | undefined;
  if (o.zerosOnly) fallocateRefused = 'zeros asked for (FillOptions.zerosOnly)';
  else if (bulk <= 0) fallocateRefused = `${before.freeBytes} bytes free: zeros take them`;
  else fallocateRefused = (await fallocate(filler, bulk)) ?? undefined;
  await writeZerosUntilFull(filler);
  const after = fileSystemSpace(root);
  // Allocated bytes (st_blocks are 512 bytes each), not the apparent size.
  const size = (await stat(filler)).blocks * 512;
  return {
    filler,
    fsBytes: before.fsBytes,
    freeBeforeBytes: before.freeBytes,
    freeAfterBytes: after.freeBytes,
    fillerBytes: size,
    atMs: t0,
    method: fallocateRefused ? 'zeros' : 'fallocate',
    ...(fallocateRefused ? { fallocateRefused } : {}),
    fillMs: Date.now() - t0,
  };
}

/**
 * `fallocate -l bytes file` (util-linux); null when it reserved them, or ran out of space first (ENOSPC: a
 * broker took some meanwhile; ext4 keeps what a failed fallocate allocated, the zeros take the rest), else
 * why fallocate cannot do it (no executable, a filesystem that refuses it).
 */
async function fallocate(file: string, bytes: number): Promise<string | null> {
  const bin = findExecutable('fallocate');
  if (!bin) return 'no fallocate executable (util-linux) on this host';
  const r = await execa(bin, ['-l', String(bytes), file], { reject: false, timeout: 60_000 });
  const said = (r.stderr || r.stdout || `exit ${r.exitCode}`).trim();
  return r.exitCode === 0 || /No space left on device/.test(said) ? null : `fallocate -l ${bytes}: ${said}`;
}

/** Appends zeros to `file`, in smaller and smaller writes, until the filesystem refuses even 512 bytes (ENOSPC). */
async function writeZerosUntilFull(file: string): Promise<void> {
  const fh = await open(file, 'a');
  try {
    for (const chunk of ZERO_CHUNKS) {
      const zeros = Buffer.alloc(chunk);
      for (;;) {
        try {
          const { bytesWritten } = await fh.write(zeros);
          if (bytesWritten < chunk) break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    await fh.close();
  }
}

/** The heal of one disk: the filler deleted, the space it held given back. Quiet when it is already gone. */
export async function removeFiller(d: FilledDisk): Promise<NonNullable<FilledDisk['healed']>> {
  const atMs = Date.now();
  await rm(d.filler, { force: true });
  const root = path.dirname(d.filler);
  // A disk no longer mounted (its broker's cluster stopped first) reads as the directory under it.
  const freeBytes = existsSync(root) ? fileSystemSpace(root).freeBytes : 0;
  return { atMs, fillerGone: !existsSync(d.filler), freeBytes };
}

/** The root of a victim's fault disk, or a clear error why it has none. */
function diskRootOf(cluster: FaultableCluster, id: number): string {
  if (!cluster.faultDiskRoot) throw new Error('fault disk-full: this cluster cannot fill a disk (its target does not offer fill-disk)');
  const root = cluster.faultDiskRoot(id);
  if (root === null) {
    throw new Error(`fault disk-full of broker ${id}: it runs on a plain directory of this host's disk, not on a fault disk; the scenario's faults put the brokers on the fault disk at start`);
  }
  return root;
}

/** Phase start: every victim's disk filled at once; CutInfo.atMs is the moment the fill began. */
export async function fillDisks(cluster: FaultableCluster, ids: number[]): Promise<CutInfo> {
  const roots = ids.map((id) => [id, diskRootOf(cluster, id)] as const);
  const atMs = Date.now();
  const filled = await Promise.all(roots.map(async ([id, root]) => [id, await fillFileSystem(root)] as const));
  return { brokerIds: ids, atMs, filledDisks: Object.fromEntries(filled) };
}

/** Phase heal: every filler the start made is deleted (its disk's record gets `healed`). */
export async function freeDisks(cut: CutInfo): Promise<void> {
  const disks = Object.values(cut.filledDisks ?? {});
  const healed = await Promise.all(disks.map((d) => removeFiller(d)));
  disks.forEach((d, i) => (d.healed = healed[i]));
  const left = disks.filter((d) => !d.healed!.fillerGone).map((d) => d.filler);
  if (left.length) throw new Error(`fault disk-full: the filler is still there after its removal: ${left.join(', ')}`);
}
