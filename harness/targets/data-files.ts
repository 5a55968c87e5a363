// The files a broker keeps in its data dir, by what they are: the named sets a file fault's
// `files:` can say (newest-segment, older-segment, index, checkpoint, metadata), each mapped by
// the target's row to its system's own names (capabilities.dataFiles), or a glob over the paths
// relative to the data dir. What a set or glob matches on one broker at one moment is listed
// here, and only what lies inside the broker's own data dir: real paths are resolved, and a
// file or directory whose real path leaves the data dir is refused, naming the path.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { DATA_FILE_SETS, type DataFileSetName } from '../model/kinds.ts';

export { DATA_FILE_SETS, type DataFileSetName };

/** One named set on one system: which relative paths belong to it, and which of them a fault takes. */
export interface DataFileSet {
  /** What the set is on this system, for help texts and refusals (`the newest .log of each <topic>-<p>/`). */
  describe: string;
  /** The relative paths (`/`-separated, from the data dir) of files in the set, given the scenario's topic. */
  pattern(topic: string): RegExp;
  /**
   * Per directory, which of its matching files the fault takes, ordered by the number in their
   * names (Kafka's base offsets, NATS's block numbers): the highest, the one just below it; absent: all.
   */
  pick?: 'newest' | 'older';
}

/** A system's data files as a target row declares them (capabilities.dataFiles). */
export interface DataFileSets {
  /** How many directory levels below the data dir hold its files. */
  maxDepth: number;
  sets: Partial<Record<DataFileSetName, DataFileSet>>;
  /** Why a set has no equivalent on this system (`scenario check` refuses it with this reason). */
  lacks: Partial<Record<DataFileSetName, string>>;
}

/** What a fault's `files:` says: one of the named sets, or a glob over relative paths. */
export type FilesSelector = { set: DataFileSetName } | { glob: string };

export const FILES_EXPECTED = `one of ${DATA_FILE_SETS.join(' | ')}, or a glob over the paths in the data dir (e.g. '*-0/*.log', 'jetstream/**/msgs/*.blk')`;

export function parseFilesSelector(v: unknown): FilesSelector | undefined {
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  if ((DATA_FILE_SETS as readonly string[]).includes(v)) return { set: v as DataFileSetName };
  // A glob must name something relative inside the data dir.
  if (v.startsWith('/') || v.split('/').includes('..')) return undefined;
  return { glob: v };
}

export function describeSelector(s: FilesSelector): string {
  return 'set' in s ? s.set : `'${s.glob}'`;
}

/** Why a selector cannot name anything on this system (a set it has no equivalent for), or null. */
export function selectorRefusal(s: FilesSelector, system: string, files: DataFileSets | undefined): string | null {
  if (!files) return `target ${system} does not say what its data files are: no file fault can name them`;
  if (!('set' in s)) return null;
  if (files.sets[s.set]) return null;
  const offered = DATA_FILE_SETS.filter((n) => files.sets[n]);
  const why = files.lacks[s.set];
  return `${system} has no ${s.set} file set${why ? ` (${why})` : ''}; it offers ${offered.join(', ')} or a glob`;
}

/** A data file a fault may change: its path, and the path relative to the broker's data dir. */
export interface DataFile {
  path: string;
  rel: string;
  size: number;
}

/** Thrown when a path under a data dir leads outside it (a symlink): nothing is touched. */
export class OutsideDataDirError extends Error {}

function numberIn(name: string): number {
  const m = /(\d+)/.exec(name);
  return m ? Number(m[1]) : -1;
}

/** Every regular file below `dataDir` (to maxDepth), each checked to stay inside it. */
function walk(dataDir: string, maxDepth: number): DataFile[] {
  const root = realpathSync(dataDir);
  const out: DataFile[] = [];
  const visit = (dir: string, rel: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // vanished (a segment deleted meanwhile)
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      let st;
      try {
        st = lstatSync(full);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) {
        const real = realpathSync(full);
        if (real !== root && !real.startsWith(root + path.sep)) throw new OutsideDataDirError(`${full} is a symlink to ${real}, outside the broker's data dir ${root}: a file fault touches nothing there`);
        continue; // inside: its target is walked where it lies
      }
      if (st.isDirectory()) {
        if (depth < maxDepth) visit(full, relPath, depth + 1);
      } else if (st.isFile()) out.push({ path: full, rel: relPath, size: st.size });
    }
  };
  visit(root, '', 0);
  return out;
}

/** The files `selector` names in one broker's data dir now, sorted by path. */
export function matchDataFiles(dataDir: string, selector: FilesSelector, files: DataFileSets, topic: string): DataFile[] {
  const all = walk(dataDir, 'glob' in selector ? Math.max(files.maxDepth, 8) : files.maxDepth);
  if ('glob' in selector) return all.filter((f) => path.matchesGlob(f.rel, selector.glob)).sort((a, b) => a.rel.localeCompare(b.rel));
  const set = files.sets[selector.set];
  if (!set) throw new Error(`no ${selector.set} file set on this system`);
  const re = set.pattern(topic);
  const hits = all.filter((f) => re.test(f.rel));
  if (!set.pick) return hits.sort((a, b) => a.rel.localeCompare(b.rel));
  const byDir = new Map<string, DataFile[]>();
  for (const f of hits) {
    const dir = path.posix.dirname(f.rel);
    byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
  }
  const out: DataFile[] = [];
  for (const group of byDir.values()) {
    group.sort((a, b) => numberIn(path.posix.basename(b.rel)) - numberIn(path.posix.basename(a.rel)));
    const f = set.pick === 'newest' ? group[0] : group[1];
    if (f) out.push(f);
  }
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

/** `text` with the characters a RegExp gives meaning escaped. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Kafka's layout, which durolab's broker follows: <topic>-<p>/ with 20-digit .log, .index and .timeindex. */
export function kafkaStyleSegmentSets(): Pick<DataFileSets['sets'], 'newest-segment' | 'older-segment' | 'index'> {
  const dir = (topic: string) => `${escapeRegExp(topic)}-\\d+`;
  return {
    'newest-segment': { describe: 'the newest .log segment of each <topic>-<partition>/', pattern: (t) => new RegExp(`^${dir(t)}/\\d{20}\\.log$`), pick: 'newest' },
    'older-segment': { describe: 'the .log segment before the newest in each <topic>-<partition>/', pattern: (t) => new RegExp(`^${dir(t)}/\\d{20}\\.log$`), pick: 'older' },
    index: { describe: 'the .index and .timeindex files of each <topic>-<partition>/', pattern: (t) => new RegExp(`^${dir(t)}/\\d{20}\\.(index|timeindex)$`) },
  };
}
