// Fault kind read-error: the disk under the victims' files fails their reads (CORDS's model).
// On the host fault disk the NBD server answers EIO (or, with `mode: wrong-bytes`, hands back
// every byte flipped while the stored ones stay) for reads of the blocks that back the matching
// files: each file is fsynced, its extents read (FIEMAP through filefrag), those byte ranges of
// the disk armed, and the file's page cache dropped so the broker's next read reaches the disk
// (O_DIRECT reads reach it anyway, which FUSE-based fault tools cannot fail). `blocks:` narrows it
// to that many 4 KiB blocks of each file at seeded places. With `duration` the ranges are disarmed
// then; without, they stay bad through recovery and the check (a bad sector stays bad) and are
// disarmed when the trial ends, Ctrl-C included. The record names every range and the reads that hit it.
import type { FileFaultRecord, ReadErrorRecord } from '../../results/types.ts';
import type { CutInfo, FaultableCluster } from '../../targets/types.ts';
import { matchDataFiles, describeSelector, type DataFile, type FilesSelector } from '../../targets/data-files.ts';
import { dropFileCache, fileExtents, type FileExtent } from '../../disk/file-extents.ts';
import { seededRandom } from '../../common/seeded-random.ts';
import type { FaultContext } from '../fault-context.ts';
import { DEFAULT_FILES } from './file-fault.ts';

export const READ_ERROR_MODES = ['eio', 'wrong-bytes'] as const;
const BLOCK = 4096;

interface ReadErrorFields {
  files: FilesSelector;
  mode: (typeof READ_ERROR_MODES)[number];
  blocks?: number;
}

function fieldsOf(ctx: FaultContext): ReadErrorFields {
  const f = (ctx.fault ?? {}) as Partial<ReadErrorFields>;
  return { files: f.files ?? DEFAULT_FILES, mode: f.mode ?? 'eio', ...(f.blocks !== undefined ? { blocks: f.blocks } : {}) };
}

/** The device ranges of a file's blocks: all of them, or `blocks` 4 KiB blocks at seeded places. */
export function rangesOf(extents: readonly FileExtent[], size: number, blocks: number | undefined, draw: () => number): Array<{ fileOffset: number; from: number; to: number }> {
  const all = extents.flatMap((e) => {
    const out: Array<{ fileOffset: number; from: number; to: number }> = [];
    for (let o = 0; o < e.length && e.fileOffset + o < size; o += BLOCK) out.push({ fileOffset: e.fileOffset + o, from: e.deviceOffset + o, to: e.deviceOffset + o + BLOCK });
    return out;
  });
  if (blocks === undefined || blocks >= all.length) return merge(all);
  const picked = new Set<number>();
  while (picked.size < blocks) picked.add(Math.floor(draw() * all.length));
  return merge([...picked].sort((a, b) => a - b).map((i) => all[i]!));
}

/** Adjacent blocks as one range. */
function merge(blocks: Array<{ fileOffset: number; from: number; to: number }>): Array<{ fileOffset: number; from: number; to: number }> {
  const out: typeof blocks = [];
  for (const b of blocks) {
    const last = out.at(-1);
    if (last && last.to === b.from && last.fileOffset + (last.to - last.from) === b.fileOffset) last.to = b.to;
    else out.push({ ...b });
  }
  return out;
}

/** Phase start: each victim's matching files' blocks armed to fail, their page caches dropped. */
export async function armReadErrors(cluster: FaultableCluster, ids: number[], ctx: FaultContext): Promise<CutInfo> {
  if (!cluster.setReadErrors || !cluster.faultDiskRoot) throw new Error('fault read-error: this cluster cannot fail its disks\' reads (its target does not offer fail-disk-reads)');
  if (!ctx.dataFiles) throw new Error("fault read-error: this cluster's brokers have no data files the lab can reach");
  const fields = fieldsOf(ctx);
  const seed = ctx.seed ?? 0;
  const draw = seededRandom(seed);
  const atMs = Date.now();
  const matched = new Map<number, DataFile[]>();
  const readErrors: ReadErrorRecord[] = [];
  for (const id of ids) {
    const root = cluster.faultDiskRoot(id);
    const b = cluster.brokers.find((x) => x.id === id)!;
    if (root === null) throw new Error(`fault read-error of broker ${id}: it runs on a plain directory of this host's disk, not on a fault disk; the scenario's faults put the brokers on the fault disk at start`);
    const files = matchDataFiles(b.dataDir, fields.files, ctx.dataFiles, ctx.topic);
    matched.set(id, files);
    const ranges: Array<{ from: number; to: number; mode: ReadErrorFields['mode'] }> = [];
    for (const f of files) {
      for (const r of rangesOf(await fileExtents(f.path), f.size, fields.blocks, draw)) {
        ranges.push({ from: r.from, to: r.to, mode: fields.mode });
        readErrors.push({ broker: id, file: f.rel, fileOffset: r.fileOffset, deviceFrom: r.from, deviceTo: r.to, mode: fields.mode });
      }
    }
    await cluster.setReadErrors(id, ranges);
    for (const f of files) await dropFileCache(f.path);
  }
  const armed = new Set(readErrors.map((r) => r.broker));
  const rec: FileFaultRecord = {
    files: describeSelector(fields.files),
    phase: 'running',
    seed,
    changes: [],
    readErrors,
    matched: Object.fromEntries([...matched].map(([id, files]) => [String(id), files.map((f) => f.rel)])),
    unchanged: ids.filter((id) => !armed.has(id)),
  };
  let released = false;
  ctx.held.heal = async () => {
    if (released) return;
    released = true;
    // The reads that hit each range (unless the check read them already), then every range disarmed (quiet about a disk already gone).
    if (!rec.readHits) await recordReadHits(cluster, rec);
    for (const id of ids) await cluster.setReadErrors!(id, []).catch(() => undefined);
  };
  return { brokerIds: ids, atMs, fileFault: rec };
}

/** The reads that hit each victim's failing ranges so far, into the record (a victim whose disk is gone is left out). */
export async function recordReadHits(cluster: FaultableCluster, rec: FileFaultRecord): Promise<void> {
  const hits: Record<string, number> = {};
  for (const id of new Set((rec.readErrors ?? []).map((r) => r.broker))) {
    const h = await cluster.readErrorHits?.(id).catch(() => null);
    if (h) hits[String(id)] = h.reduce((a, x) => a + x.hits, 0);
  }
  rec.readHits = hits;
}
