// Pure parser for /proc/vmstat text: the same function runs on the host's file and on
// text streamed from a QEMU guest's agent, so it takes text, never a path. The write side
// (dirty pages, writeback) is required; the read side (pgpgin, major faults, refaults, reclaim
// scans) is kept when the kernel has it.

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
  /**
   * The read side (counters), when the kernel has every key: what tells a cold read from a warm
   * one. Absent on a kernel that lacks one (the write-side figures do not depend on them).
   */
  reads?: VmstatReadCounters;
}

export interface VmstatReadCounters {
  /** KiB read from block devices (pgpgin). */
  pgpginKB: number;
  /** Page faults that had to read from the device (pgmajfault). */
  majorFaults: number;
  /** File pages read again soon after reclaim evicted them (workingset_refault_file; workingset_refault before 5.9). */
  refaultsFile: number;
  /** Pages scanned and reclaimed by kswapd and direct reclaim (pgscan_*, pgsteal_*). */
  pagesScanned: number;
  pagesStolen: number;
}

const FIELDS = {
  nrDirty: 'nr_dirty',
  nrWriteback: 'nr_writeback',
  nrDirtied: 'nr_dirtied',
  nrWritten: 'nr_written',
  dirtyThreshold: 'nr_dirty_threshold',
  dirtyBackgroundThreshold: 'nr_dirty_background_threshold',
} as const satisfies Record<Exclude<keyof VmstatSample, 'tMs' | 'reads'>, string>;

const WANTED = new Set<string>(Object.values(FIELDS));
const READ_KEYS = ['pgpgin', 'pgmajfault', 'workingset_refault_file', 'workingset_refault', 'pgscan_kswapd', 'pgscan_direct', 'pgsteal_kswapd', 'pgsteal_direct'];
const READ_WANTED = new Set<string>(READ_KEYS);

/** Parses `/proc/vmstat` ("name value" per line). Throws naming every missing key. */
export function parseVmstat(text: string, tMs: number): VmstatSample {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const name = line.slice(0, sp);
    if (!WANTED.has(name) && !READ_WANTED.has(name)) continue;
    const value = Number(line.slice(sp + 1).trim());
    if (!Number.isFinite(value)) {
      throw new Error(`/proc/vmstat: value of ${name} is not a number: ${JSON.stringify(line)}`);
    }
    found.set(name, value);
  }
  const missing = [...WANTED].filter((k) => !found.has(k));
  const refaults = found.get('workingset_refault_file') ?? found.get('workingset_refault');
  const has = (k: string) => found.has(k);
  const reads: VmstatReadCounters | undefined =
    has('pgpgin') && has('pgmajfault') && refaults !== undefined && has('pgscan_kswapd') && has('pgscan_direct') && has('pgsteal_kswapd') && has('pgsteal_direct')
      ? {
          pgpginKB: found.get('pgpgin')!,
          majorFaults: found.get('pgmajfault')!,
          refaultsFile: refaults,
          pagesScanned: found.get('pgscan_kswapd')! + found.get('pgscan_direct')!,
          pagesStolen: found.get('pgsteal_kswapd')! + found.get('pgsteal_direct')!,
        }
      : undefined;
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
    ...(reads ? { reads } : {}),
  };
}
