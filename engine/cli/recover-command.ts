// `durolab engine recover`: offline recovery of a partition directory (validates every batch
// from the recovery point, cuts at the first invalid byte, rebuilds indexes) and its report.
import fs from 'node:fs';
import path from 'node:path';
import { parseSettingFlags, settingFlagOptions, settingFlagsHelp } from '../settings/index.ts';
import { logConfigFromSettings, recoverLog, type IoMode, type RecoveryReport } from '../storage/index.ts';
import { parseCommandFlags, requireString } from '../common/flags.ts';
import { fmtBytes, fmtInt } from './text-format.ts';

export interface RecoverOptions {
  dir: string;
  /** Validate every segment from the first, whatever the recovery-point checkpoint says. */
  full?: boolean;
  maxBatchBytes?: number;
  io?: IoMode;
}

export interface RecoverResult extends RecoveryReport {
  dir: string;
}

/** Did opening the log find anything to repair or check (beyond a clean shutdown or an empty directory)? */
export function recoveryHappened(r: RecoveryReport): boolean {
  return (
    r.segmentsScanned > 0 ||
    r.bytesTruncated > 0 ||
    r.segmentsDeleted > 0 ||
    r.indexesRebuilt > 0 ||
    r.deletedFiles.length > 0 ||
    r.truncation !== undefined
  );
}

export function runRecover(opts: RecoverOptions): RecoverResult {
  const dir = path.resolve(opts.dir);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw new Error(`engine recover: --dir ${opts.dir}: no such directory (expected an existing partition directory)`);
  }
  if (!st.isDirectory()) throw new Error(`engine recover: --dir ${opts.dir} is not a directory`);
  const report = recoverLog(dir, { maxBatchBytes: opts.maxBatchBytes, io: opts.io }, { full: opts.full });
  return { dir, ...report };
}

export function formatRecovery(r: RecoveryReport): string {
  const lines = [
    `shutdown before: ${r.cleanShutdown ? 'clean (marker present)' : 'unclean (no clean-shutdown marker)'}; recovery point ${r.recoveryPoint}`,
    `scanned ${r.segmentsScanned} segment(s), validated ${fmtInt(r.batchesValidated)} batches; ${r.segments} segment(s) now, log end offset ${r.logEndOffset}`,
    `truncated ${fmtInt(r.bytesTruncated)} bytes (${fmtBytes(r.bytesTruncated)}) and ${r.batchesTruncated} batch(es)` +
      (r.zeroTailBytes > 0 ? `, of which ${fmtInt(r.zeroTailBytes)} bytes were an all-zero tail (padding, no batch lost)` : ''),
    `segments deleted: ${r.segmentsDeleted}; indexes rebuilt: ${r.indexesRebuilt}`,
  ];
  if (r.truncation) {
    lines.push(`truncated at segment ${r.truncation.segmentBaseOffset}, position ${r.truncation.position}: ${r.truncation.reason}`);
  } else {
    lines.push('no truncation: every scanned batch was valid');
  }
  if (r.strayFiles.length > 0) lines.push(`stray files (left alone): ${r.strayFiles.join(', ')}`);
  if (r.deletedFiles.length > 0) lines.push(`files removed: ${r.deletedFiles.join(', ')}`);
  lines.push(`took ${r.durationMs.toFixed(1)} ms`);
  return lines.join('\n');
}

/** The registry settings `engine recover` takes as flags: those the log was written with. */
const RECOVER_SETTINGS = ['message.max.bytes', 'io'] as const;

const HELP = `usage: durolab engine recover --dir D [options]

Runs the engine's recovery on the partition directory D, whatever the clean-shutdown marker
says: every batch from the recovery point on is validated (CRC and record framing), the log
is cut at the first invalid byte, later segments are deleted and indexes rebuilt; then the
log is closed cleanly. Prints the recovery report.

  --dir D               partition directory (must exist)
  --full                validate from the first segment, ignoring the recovery-point checkpoint
${settingFlagsHelp(RECOVER_SETTINGS, 22)}
                        (the values the log was written with)
  --json                print the report as JSON
  -h, --help            this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('engine recover', argv, {
    dir: { type: 'string' },
    full: { type: 'boolean', default: false },
    ...settingFlagOptions(RECOVER_SETTINGS),
    json: { type: 'boolean', default: false },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const { maxBatchBytes, io } = logConfigFromSettings(parseSettingFlags(values, RECOVER_SETTINGS));
  const result = runRecover({
    dir: requireString('engine recover', '--dir', values.dir, 'the partition directory'),
    full: values.full === true,
    maxBatchBytes,
    io,
  });
  console.log(values.json ? JSON.stringify(result, null, 2) : `recovered ${result.dir}\n${formatRecovery(result)}`);
  return 0;
}
