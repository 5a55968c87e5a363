// A durolab broker's storage error lines (engine/server/storage-error-log.ts writes them, once
// per errno and log dir), for the targets that run durolab's broker (process, vm).
import { parseStorageErrorLine } from '../../engine/server/storage-error-log.ts';
import type { StorageFailureLines } from './broker-log-failures.ts';

export const durolabStorageFailureLines: StorageFailureLines = (text) =>
  text.split('\n').flatMap((line) => {
    const c = parseStorageErrorLine(line);
    return c ? [{ errno: c.errno, file: c.file ?? c.dir ?? 'unknown', atMs: c.atMs, line: line.trim() }] : [];
  });
