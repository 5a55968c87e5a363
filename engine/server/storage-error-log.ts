// The broker's word on its storage errors: every KAFKA_STORAGE_ERROR it answers or meets is
// logged once per cause (errno) and log dir, with the file and the moment the log went offline,
// e.g.
//   KAFKA_STORAGE_ERROR: ENOSPC on /data/t-0/00000000000000000000.log at 2025-06-01T12:03:04.512Z
//   (log dir /data/t-0 is offline until the broker restarts): append of 16512 bytes to ... failed ...
// A full disk answers thousands of produces with the same error; the first line names why.
// The harness reads these lines back from the broker's log (parseStorageErrorLine).
import path from 'node:path';
import type { BrokerError } from '../replication/index.ts';

export interface StorageErrorCause {
  /** The errno of the failed call (ENOSPC, EIO), or null when the error named none. */
  errno: string | null;
  /** The file the failed call was on (a segment, a checkpoint), or the log dir. */
  file: string | null;
  /** The partition's log dir that is offline (or the file's directory). */
  dir: string | null;
  /** When the log went offline (ms since the epoch), or when the error was met. */
  atMs: number;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The cause a storage error carries in its details (engine/storage/log.ts, replication/errors.ts asBrokerError). */
export function causeOf(e: BrokerError, nowMs = Date.now()): StorageErrorCause {
  const d = e.details;
  const file = str(d.file);
  const dir = str(d.dir) ?? (file ? path.dirname(file) : null);
  const atMs = typeof d.atMs === 'number' ? d.atMs : nowMs;
  return { errno: str(d.errno), file, dir, atMs };
}

/** The line the broker logs for a cause (parseStorageErrorLine reads it back). */
export function storageErrorLine(c: StorageErrorCause, message: string): string {
  return (
    `KAFKA_STORAGE_ERROR: ${c.errno ?? 'no errno'} on ${c.file ?? c.dir ?? 'an unnamed file'} at ${new Date(c.atMs).toISOString()} ` +
    `(log dir ${c.dir ?? 'unknown'} is offline until the broker restarts): ${message}`
  );
}

const LINE = /KAFKA_STORAGE_ERROR: (\S+(?: errno)?) on (.+?) at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) \(log dir (.+?) is offline/;

/** A line of a durolab broker's log that names a storage error's cause, or null. */
export function parseStorageErrorLine(line: string): StorageErrorCause | null {
  const m = LINE.exec(line);
  if (!m) return null;
  return { errno: m[1] === 'no errno' ? null : m[1]!, file: m[2]!, dir: m[4] === 'unknown' ? null : m[4]!, atMs: Date.parse(m[3]!) };
}

/** Logs each (errno, log dir) once; later errors of the same cause are only counted. */
export class StorageErrorLog {
  private readonly seen = new Map<string, number>();

  constructor(private readonly log: (line: string) => void) {}

  note(e: BrokerError): void {
    const c = causeOf(e);
    const key = `${c.errno ?? ''}\u0000${c.dir ?? ''}`;
    const n = this.seen.get(key);
    this.seen.set(key, (n ?? 0) + 1);
    if (n === undefined) this.log(storageErrorLine(c, e.message));
  }

  /** Storage errors met per cause since start ("ENOSPC /data/t-0": 3019), for /v1/metrics. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.seen].map(([k, n]) => [k.replace('\u0000', ' ').trim() || 'unknown', n]));
  }
}
