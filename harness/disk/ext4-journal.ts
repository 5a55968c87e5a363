// Where an ext4 image keeps its journal (inode 8), in 512-byte sectors: the NBD disk's
// `data-write` error rule counts only writes outside it, so an injected EIO lands on file data
// (the case of the fsync-failure studies) rather than on the journal, whose failure aborts the
// whole file system. Read once on the host with debugfs, before the guest boots.
import { execa } from 'execa';
import { requireExecutable } from '../vm/prerequisites.ts';
import { SECTOR_BYTES } from './write-log.ts';

/** Sector ranges [from, to] (inclusive) of the journal's extents. */
export async function journalSectorRanges(image: string): Promise<Array<[number, number]>> {
  const debugfs = requireExecutable('debugfs');
  const stats = await execa(debugfs, ['-R', 'stats', image], { reject: false });
  const bs = /Block size:\s+(\d+)/.exec(stats.stdout);
  if (stats.exitCode !== 0 || !bs) throw new Error(`debugfs -R stats ${image} failed or printed no block size (exit ${stats.exitCode}): ${stats.stderr.trim().slice(0, 300)}`);
  const blockSize = Number(bs[1]);
  const stat = await execa(debugfs, ['-R', 'stat <8>', image], { reject: false });
  const extents = [...stat.stdout.matchAll(/\((\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?/g)];
  if (stat.exitCode !== 0 || extents.length === 0) throw new Error(`debugfs -R 'stat <8>' ${image} listed no journal extents (exit ${stat.exitCode}): ${stat.stderr.trim().slice(0, 300)}`);
  const perBlock = blockSize / SECTOR_BYTES;
  return extents.map((m) => {
    const first = Number(m[3]);
    const last = m[4] !== undefined ? Number(m[4]) : first;
    return [first * perBlock, (last + 1) * perBlock - 1] as [number, number];
  });
}
