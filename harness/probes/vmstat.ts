// Pure parser for /proc/vmstat text: the same function runs on the host's file and on
// text streamed from a QEMU guest's agent, so it takes text, never a path.

export interface VmstatSample {
  tMs: number;
  /** Pages dirty in the page cache (gauge). */
  nrDirty: number;
  /** Pages under writeback right now (gauge). */
  nrWriteback: number;
  /** Pages ever dirtied (counter). */
  nrDirtied: number;
  /** Pages ever written back (counter). */
  nrWritten: number;
  /** Pages: the limit where writers start to be throttled (dirty_ratio / dirty_bytes). */
  dirtyThreshold: number;
  /** Pages: the level where background writeback starts. */
  dirtyBackgroundThreshold: number;
}

const FIELDS = {
  nrDirty: 'nr_dirty',
  nrWriteback: 'nr_writeback',
  nrDirtied: 'nr_dirtied',
  nrWritten: 'nr_written',
  dirtyThreshold: 'nr_dirty_threshold',
  dirtyBackgroundThreshold: 'nr_dirty_background_threshold',
} as const satisfies Record<Exclude<keyof VmstatSample, 'tMs'>, string>;

const WANTED = new Set<string>(Object.values(FIELDS));

/** Parses `/proc/vmstat` ("name value" per line). Throws naming every missing key. */
export function parseVmstat(text: string, tMs: number): VmstatSample {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const name = line.slice(0, sp);
    if (!WANTED.has(name)) continue;
    const value = Number(line.slice(sp + 1).trim());
    if (!Number.isFinite(value)) {
      throw new Error(`/proc/vmstat: value of ${name} is not a number: ${JSON.stringify(line)}`);
    }
    found.set(name, value);
  }
  const missing = [...WANTED].filter((k) => !found.has(k));
  if (missing.length > 0) {
    throw new Error(
      `/proc/vmstat: missing ${missing.join(', ')} (expected "name value" lines; got ${text.length} chars` +
        `${text.length === 0 ? ', empty text' : ''})`,
    );
  }
  const get = (k: string): number => found.get(k) as number;
  return {
    tMs,
    nrDirty: get(FIELDS.nrDirty),
    nrWriteback: get(FIELDS.nrWriteback),
    nrDirtied: get(FIELDS.nrDirtied),
    nrWritten: get(FIELDS.nrWritten),
    dirtyThreshold: get(FIELDS.dirtyThreshold),
    dirtyBackgroundThreshold: get(FIELDS.dirtyBackgroundThreshold),
  };
}
