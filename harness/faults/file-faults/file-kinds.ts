// The registry rows (harness/faults/registry.ts) of the file faults: corrupt-file,
// truncate-file and lost-write. Their fields, their checks against the scenario and the target's
// data files, and their phases (file-fault.ts delivers them).
import * as z from 'zod';
import type { FaultScenarioIssue } from '../../model/scenario-issue.ts';
import { leaf } from '../../model/zod-leaf.ts';
import type { TargetCapabilities } from '../../targets/types.ts';
import { FILES_EXPECTED, parseFilesSelector, selectorRefusal, type FilesSelector } from '../../targets/data-files.ts';
import type { FaultKindSpec } from '../registry.ts';
import { DEFAULT_FILES, FILE_FAULT_PHASES, FILE_FAULT_STOPS } from './file-fault.ts';
import { READ_ERROR_MODES } from './read-error.ts';

const MAX_CHUNK_BYTES = 16 * 2 ** 20;

/** The fields every file fault takes. */
const FILE_FIELDS = {
  /** Which of the victims' data files: a named set (harness/targets/data-files.ts) or a glob; default newest-segment. */
  files: leaf(FILES_EXPECTED, parseFilesSelector),
  /** stopped (default): each victim stopped, its files changed, restarted before the check; running: changed under the running broker. */
  phase: z.enum(FILE_FAULT_PHASES),
  /** phase stopped: kill (default, SIGKILL) or clean (the system's own shutdown) before the files change. */
  stop: z.enum(FILE_FAULT_STOPS),
};

const CHUNK_FIELDS = {
  /** Chunks per matching file (default 1). */
  chunks: z.int().min(1).max(10_000),
  /** Bytes per chunk (corrupt-file: default 64; lost-write: default 4096). */
  chunkBytes: z.int().min(1).max(MAX_CHUNK_BYTES),
};

/** `stop:` means nothing under the running broker. */
function phaseIssues(fault: Record<string, unknown>): FaultScenarioIssue[] {
  if (fault.phase === 'running' && fault.stop !== undefined) {
    return [{ path: ['stop'], expected: 'no stop: with phase: running (the broker is not stopped before its files change)', found: String(fault.stop) }];
  }
  return [];
}

/** The target must have the set `files:` names. */
function checkFilesOnTarget(fault: Record<string, unknown>, target: TargetCapabilities, system: string): FaultScenarioIssue[] {
  const files = (fault.files as FilesSelector | undefined) ?? DEFAULT_FILES;
  const why = selectorRefusal(files, system, target.dataFiles);
  return why ? [{ path: ['files'], expected: why, found: 'set' in files ? files.set : files.glob }] : [];
}

const COMMON = {
  needs: 'change-data-files',
  losesPageCache: false,
  // The hit brokers restart before the check (Jepsen's rows: the node restarted, then checked), whatever the phase.
  restartsBrokers: true,
  checkTarget: checkFilesOnTarget,
} as const;

export const FILE_KIND_ROWS: Record<'corrupt-file' | 'truncate-file' | 'lost-write' | 'read-error', FaultKindSpec> = {
  'corrupt-file': {
    ...COMMON,
    summary:
      "bit flips: one bit of every byte flipped in `chunks:` chunks of `chunkBytes:` at seeded offsets of the victims' `files:` (newest-segment, older-segment, index, checkpoint, metadata, or a glob); " +
      'stopped first by default (`phase:`, `stop:`), restarted before the check; every change recorded (file, offset, length, SHA-256 before and after)',
    fields: { ...FILE_FIELDS, ...CHUNK_FIELDS },
    loadRunsThrough: false,
    deliver: async (cluster, ids, ctx) => (await import('./file-fault.ts')).deliverFileEdit(cluster, ids, ctx, 'bit-flip'),
    checkScenario: phaseIssues,
  },
  'truncate-file': {
    ...COMMON,
    summary: "truncation: `bytes:` (or `fraction:` of each file, 1 = to zero) cut off the end of the victims' `files:`; stopped first by default, restarted before the check",
    fields: {
      ...FILE_FIELDS,
      /** Bytes cut off each file's end. */
      bytes: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
      /** Or the fraction of each file's size cut off its end (1: to zero bytes). */
      fraction: z.number().gt(0).max(1),
    },
    loadRunsThrough: false,
    deliver: async (cluster, ids, ctx) => (await import('./file-fault.ts')).deliverFileEdit(cluster, ids, ctx, 'truncate'),
    checkScenario(fault) {
      const out = phaseIssues(fault);
      const given = ['bytes', 'fraction'].filter((k) => fault[k] !== undefined);
      if (given.length !== 1) out.push({ path: [], expected: 'exactly one of bytes: N | fraction: F (0 < F <= 1) with a truncate-file fault', found: given.length ? given.join(' and ') : 'none' });
      return out;
    },
  },
  'lost-write': {
    ...COMMON,
    summary:
      "lost write (Jepsen's snapshot-file-chunks): at its start `chunks:` chunks of `chunkBytes:` (default 4096, the first at the sector holding each file's end) of the victims' `files:` are saved; " +
      '`duration` later the saved bytes are put back over what was written since, as a drive that acknowledged writes and kept its old sectors (stopped first by default); the load runs through it',
    fields: { ...FILE_FIELDS, ...CHUNK_FIELDS },
    loadRunsThrough: true,
    deliver: async (cluster, ids, ctx) => (await import('./file-fault.ts')).saveForLostWrite(cluster, ids, ctx),
    heal: async (_cluster, _ids, ctx) => ctx.held.heal?.(),
    checkScenario: phaseIssues,
  },
  'read-error': {
    summary:
      "read errors (CORDS's model): on the victims' host fault disks the NBD server fails every read of the blocks under their `files:` with EIO (`mode: wrong-bytes`: hands back flipped bytes, the stored ones unchanged), " +
      'O_DIRECT reads included; `blocks:` narrows it to N 4 KiB blocks per file; `duration` later, or without one when the trial ends (the bad blocks stay bad through recovery and the check); the load runs through it',
    fields: {
      files: FILE_FIELDS.files,
      /** eio (default) or wrong-bytes. */
      mode: z.enum(READ_ERROR_MODES),
      /** 4 KiB blocks per matching file that fail, at seeded places; default: all of them. */
      blocks: z.int().min(1).max(1_000_000),
    },
    needs: 'fail-disk-reads',
    losesPageCache: false,
    loadRunsThrough: true,
    restartsBrokers: true,
    healOptional: true,
    checkTarget: checkFilesOnTarget,
    deliver: async (cluster, ids, ctx) => (await import('./read-error.ts')).armReadErrors(cluster, ids, ctx),
    heal: async (_cluster, _ids, ctx) => ctx.held.heal?.(),
  },
};
