// Fault kinds corrupt-file, truncate-file and lost-write: a disk that hands back wrong bytes,
// loses the end of a file, or acknowledged writes it never stored, on the victims' own data
// files (the target's named sets or a glob, harness/targets/data-files.ts). With `phase:
// stopped` (the default) each victim is stopped first (`stop: kill`, the default, or `clean`),
// its files are changed, and recovery restarts it before the check; with `phase: running` the
// bytes change under the running broker, through the file (its next read sees them), and it is
// restarted before the check all the same. A lost write saves chunks at its start and puts them
// back at its heal, `duration` later (Jepsen's snapshot-file-chunks). Every change is recorded
// exactly (CutInfo.fileFault); a victim on which nothing matched is named as unchanged, and the
// trial is then not judged (harness/runner/fault-trial.ts): a fault that did not fire is no pass.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import type { FileChange, FileChangeState, FileFaultRecord } from '../../results/types.ts';
import type { CutInfo, FaultableCluster } from '../../targets/types.ts';
import { matchDataFiles, describeSelector, type DataFile, type DataFileSets, type FilesSelector } from '../../targets/data-files.ts';
import { seededRandom } from '../../common/seeded-random.ts';
import type { FaultContext } from '../fault-context.ts';
import { flipBits, restoreChunk, saveChunks, sha256, truncateEnd, type SavedChunk } from './file-edits.ts';

export const FILE_FAULT_PHASES = ['stopped', 'running'] as const;
export const FILE_FAULT_STOPS = ['kill', 'clean'] as const;

/** A file fault's entry as parsed (its kind's fields, harness/faults/registry.ts), with their defaults. */
export interface FileFaultFields {
  files: FilesSelector;
  phase: (typeof FILE_FAULT_PHASES)[number];
  stop: (typeof FILE_FAULT_STOPS)[number];
  chunks: number;
  chunkBytes: number;
  bytes?: number;
  fraction?: number;
}

export const DEFAULT_FILES: FilesSelector = { set: 'newest-segment' };

export function fileFaultFields(ctx: FaultContext, defaultChunkBytes: number): FileFaultFields {
  const f = (ctx.fault ?? {}) as Partial<FileFaultFields>;
  return {
    files: f.files ?? DEFAULT_FILES,
    phase: f.phase ?? 'stopped',
    stop: f.stop ?? 'kill',
    chunks: f.chunks ?? 1,
    chunkBytes: f.chunkBytes ?? defaultChunkBytes,
    ...(f.bytes !== undefined ? { bytes: f.bytes } : {}),
    ...(f.fraction !== undefined ? { fraction: f.fraction } : {}),
  };
}

/** The target's data files, or why this cluster cannot change them. */
function dataFilesOf(ctx: FaultContext): DataFileSets {
  if (!ctx.dataFiles) throw new Error("file fault: this cluster's brokers have no data files the lab can reach (its target does not offer change-data-files)");
  return ctx.dataFiles;
}

function dataDirOf(cluster: FaultableCluster, id: number): string {
  const b = cluster.brokers.find((x) => x.id === id);
  if (!b) throw new Error(`file fault: no broker ${id} (brokers ${cluster.brokers.map((x) => x.id).join(', ')})`);
  return b.dataDir;
}

/** Each victim's matching files now. */
function matchAll(cluster: FaultableCluster, ids: number[], fields: FileFaultFields, ctx: FaultContext): Map<number, DataFile[]> {
  const sets = dataFilesOf(ctx);
  return new Map(ids.map((id) => [id, matchDataFiles(dataDirOf(cluster, id), fields.files, sets, ctx.topic)]));
}

/** Phase stopped: the victims stopped as `stop` says (before their files change); phase running: nothing. */
async function stopFirst(cluster: FaultableCluster, ids: number[], fields: FileFaultFields): Promise<CutInfo | null> {
  if (fields.phase === 'running') return null;
  if (fields.stop === 'kill') return cluster.processKill(ids);
  if (!cluster.stopCleanly) throw new Error('file fault with stop: clean: this cluster cannot stop a broker cleanly');
  return cluster.stopCleanly(ids);
}

function record(fields: FileFaultFields, seed: number, matched: Map<number, DataFile[]>, changes: FileChange[]): FileFaultRecord {
  const changed = new Set(changes.map((c) => c.broker));
  return {
    files: describeSelector(fields.files),
    phase: fields.phase,
    ...(fields.phase === 'stopped' ? { stop: fields.stop } : {}),
    seed,
    changes,
    matched: Object.fromEntries([...matched].map(([id, files]) => [String(id), files.map((f) => f.rel)])),
    unchanged: [...matched.keys()].filter((id) => !changed.has(id)),
  };
}

/** corrupt-file and truncate-file: stop (phase stopped), change every matching file of every victim, record it. */
export async function deliverFileEdit(cluster: FaultableCluster, ids: number[], ctx: FaultContext, edit: 'bit-flip' | 'truncate'): Promise<CutInfo> {
  const fields = fileFaultFields(ctx, 64);
  const seed = ctx.seed ?? 0;
  const draw = seededRandom(seed);
  dataFilesOf(ctx);
  const stopped = await stopFirst(cluster, ids, fields);
  const atMs = stopped?.atMs ?? Date.now();
  const matched = matchAll(cluster, ids, fields, ctx);
  const changes: FileChange[] = [];
  for (const [id, files] of matched) {
    for (const f of files) {
      changes.push(...(edit === 'bit-flip' ? flipBits(id, f, { chunks: fields.chunks, chunkBytes: fields.chunkBytes, draw }) : truncateEnd(id, f, fields)));
    }
  }
  return { ...(stopped ?? {}), brokerIds: ids, atMs, fileFault: record(fields, seed, matched, changes) };
}

/** lost-write's start: the chunks saved (the broker keeps running); `held` keeps them for the heal. */
export async function saveForLostWrite(cluster: FaultableCluster, ids: number[], ctx: FaultContext): Promise<CutInfo> {
  const fields = fileFaultFields(ctx, 4096);
  const seed = ctx.seed ?? 0;
  const draw = seededRandom(seed);
  const atMs = Date.now();
  const matched = matchAll(cluster, ids, fields, ctx);
  const saved: SavedChunk[] = [...matched].flatMap(([id, files]) => files.flatMap((f) => saveChunks(id, f, { chunks: fields.chunks, chunkBytes: fields.chunkBytes, draw })));
  const rec = { ...record(fields, seed, matched, []), savedAtMs: atMs, unchanged: [] as number[] };
  let healed = false;
  // The saved bytes live only here: released with the entry (a heal, Ctrl-C's heal, a failed trial's release).
  ctx.held.heal = async () => {
    if (healed) return;
    healed = true;
    if (ctx.signal?.aborted) {
      // Ctrl-C: the saved bytes are dropped, nothing is written; the trial is not checked.
      saved.length = 0;
      rec.unchanged = [...ids];
      rec.released = 'interrupted before the heal: the saved chunks were dropped, no file was changed';
      return;
    }
    await stopFirst(cluster, ids, fields);
    const changes = saved.flatMap((s) => restoreChunk(s) ?? []);
    saved.length = 0;
    rec.changes = changes;
    const changed = new Set(changes.map((c) => c.broker));
    rec.unchanged = ids.filter((id) => !changed.has(id));
  };
  return { brokerIds: ids, atMs, fileFault: rec };
}

/** What is at a change's range in the file now (the victim's data dir). */
export function changeStateNow(dataDir: string, c: FileChange): FileChangeState {
  const file = path.join(dataDir, c.file);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    if (c.how === 'truncate') return size > c.offset ? 'rewritten' : 'as-changed';
    if (size < c.offset + c.length) return 'cut-off';
    const buf = Buffer.alloc(c.length);
    readSync(fd, buf, 0, c.length, c.offset);
    return sha256(buf) === c.newSha256 ? 'as-changed' : 'rewritten';
  } finally {
    closeSync(fd);
  }
}

/** Every change of the record read back from its victim's data dir (after recovery and the check): record.afterCheck. */
export function readBackChanges(cluster: { brokers: ReadonlyArray<{ id: number; dataDir: string }> }, rec: FileFaultRecord): void {
  rec.afterCheck = rec.changes.map((c) => {
    const b = cluster.brokers.find((x) => x.id === c.broker);
    return { broker: c.broker, file: c.file, offset: c.offset, state: b ? changeStateNow(b.dataDir, c) : 'gone' };
  });
}

/** Text of a file fault's changes for the terminal: `broker 1: 00000000000000000000.log @1,234 +64 (bit-flip)`. */
export function fileFaultText(r: FileFaultRecord): string {
  const changes = r.changes.map((c) => `broker ${c.broker}: ${c.file} @${c.offset.toLocaleString('en-US')} +${c.length} (${c.how})`);
  const fails = r.readErrors?.length
    ? [`reads failing (${r.readErrors[0]!.mode}) on ${[...new Set(r.readErrors.map((x) => `broker ${x.broker}: ${x.file}`))].join(', ')}: ${r.readErrors.length} range(s), ${r.readErrors.reduce((a, x) => a + x.deviceTo - x.deviceFrom, 0).toLocaleString('en-US')} bytes of disk`]
    : [];
  const none = r.unchanged.length ? [`nothing changed on broker ${r.unchanged.join(', ')} (${r.files} matched ${r.unchanged.map((id) => (r.matched[String(id)] ?? []).length).join('/')} file(s))`] : [];
  return [...changes, ...fails, ...none].join('; ');
}

/** The read-back in one line: `broker 1: 2 as-changed, 2 rewritten`. */
export function afterCheckText(r: FileFaultRecord): string {
  const per = new Map<number, Map<string, number>>();
  for (const a of r.afterCheck ?? []) {
    const m = per.get(a.broker) ?? new Map<string, number>();
    m.set(a.state, (m.get(a.state) ?? 0) + 1);
    per.set(a.broker, m);
  }
  const hits = Object.entries(r.readHits ?? {}).map(([b, n]) => `broker ${b}: ${n} read(s) hit the failing blocks`);
  if (per.size === 0) return hits.join('; ') || 'no change to read back';
  return [...per].map(([b, m]) => `broker ${b}: ${[...m].map(([s, n]) => `${n} ${s}`).join(', ')}`).join('; ');
}
