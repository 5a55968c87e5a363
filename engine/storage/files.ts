// The partition directory itself (made if missing), its file names (Kafka's), the recovery-point
// checkpoint and the clean-shutdown marker, and the fsync of the directory that makes creations,
// renames and deletions durable.
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, writeFileAtomic } from '../common/atomic-file.ts';
import { StorageError } from './errors.ts';

const LOG_SUFFIX = '.log';
const INDEX_SUFFIX = '.index';
const TIME_INDEX_SUFFIX = '.timeindex';
export const CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const CHECKPOINT_TMP = `${CHECKPOINT_FILE}.tmp`;
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';

const SEGMENT_FILE = /^(\d{20})\.(log|index|timeindex)$/;

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

export interface SegmentPaths {
  log: string;
  index: string;
  timeIndex: string;
}

export function segmentPaths(dir: string, baseOffset: number): SegmentPaths {
  return {
    log: path.join(dir, segmentFileName(baseOffset, LOG_SUFFIX)),
    index: path.join(dir, segmentFileName(baseOffset, INDEX_SUFFIX)),
    timeIndex: path.join(dir, segmentFileName(baseOffset, TIME_INDEX_SUFFIX)),
  };
}

export interface DirListing {
  /** Base offsets that have a .log file, ascending. */
  logs: number[];
  /** Index files whose .log is missing. */
  orphanIndexes: string[];
  strays: string[];
  hasCheckpoint: boolean;
  hasCheckpointTmp: boolean;
  hasCleanMarker: boolean;
}

export function listDir(dir: string): DirListing {
  const out: DirListing = { logs: [], orphanIndexes: [], strays: [], hasCheckpoint: false, hasCheckpointTmp: false, hasCleanMarker: false };
  const names = fs.readdirSync(dir, { withFileTypes: true });
  const logs = new Set<number>();
  const indexes: Array<{ name: string; base: number }> = [];
  for (const d of names) {
    const name = d.name;
    const m = SEGMENT_FILE.exec(name);
    if (m && d.isFile()) {
      const base = Number(m[1]);
      if (!Number.isSafeInteger(base)) {
        out.strays.push(name);
      } else if (m[2] === 'log') {
        logs.add(base);
      } else {
        indexes.push({ name, base });
      }
    } else if (name === CHECKPOINT_FILE && d.isFile()) {
      out.hasCheckpoint = true;
    } else if (name === CHECKPOINT_TMP && d.isFile()) {
      out.hasCheckpointTmp = true;
    } else if (name === CLEAN_SHUTDOWN_FILE && d.isFile()) {
      out.hasCleanMarker = true;
    } else {
      out.strays.push(name);
    }
  }
  for (const ix of indexes) if (!logs.has(ix.base)) out.orphanIndexes.push(ix.name);
  out.logs = [...logs].sort((a, b) => a - b);
  out.strays.sort();
  out.orphanIndexes.sort();
  return out;
}

/**
 * Kafka's checkpoint text format (version, entry count, entries), with one entry: the
 * partition directory's name and its recovery point.
 */
function formatCheckpoint(dir: string, recoveryPoint: number): string {
  return `0\n1\n${path.basename(dir)} ${recoveryPoint}\n`;
}

/** The recovery point in the checkpoint file, or null when it is missing or unreadable (then recovery starts at 0). */
export function readCheckpoint(dir: string): { offset: number | null; problem: string | null } {
  const p = path.join(dir, CHECKPOINT_FILE);
  let text: string;
  try {
    text = fs.readFileSync(p, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { offset: null, problem: null };
    throw e;
  }
  const lines = text.split('\n');
  const m = /^\S+ (\d+)$/.exec(lines[2] ?? '');
  if (lines[0] !== '0' || lines[1] !== '1' || !m || !Number.isSafeInteger(Number(m[1]))) {
    return { offset: null, problem: `${p}: expected "0\\n1\\n<dir> <offset>\\n", got ${JSON.stringify(text.slice(0, 80))}` };
  }
  return { offset: Number(m[1]), problem: null };
}

/** tmp + fsync + rename + fsync(dir): a crash leaves the old or the new checkpoint, never a torn one. */
export function writeCheckpoint(dir: string, recoveryPoint: number): void {
  writeFileAtomic(path.join(dir, CHECKPOINT_FILE), formatCheckpoint(dir, recoveryPoint), { tmp: path.join(dir, CHECKPOINT_TMP) });
}

export function writeCleanMarker(dir: string): void {
  const fd = fs.openSync(path.join(dir, CLEAN_SHUTDOWN_FILE), 'w');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fsyncDir(dir);
}

export function removeCleanMarker(dir: string): void {
  fs.rmSync(path.join(dir, CLEAN_SHUTDOWN_FILE), { force: true });
  // Durable before any new append: a crash must not find the marker of the previous run.
  fsyncDir(dir);
}

/** A partition's directory, made if missing; a path that is a file (or lies under one) is refused by name. */
export function makeLogDir(abs: string): void {
  try {
    fs.mkdirSync(abs, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new StorageError('invalid-argument', `${abs} is not a directory: a partition's log is a directory of segment files`, { code });
    }
    throw e;
  }
}
