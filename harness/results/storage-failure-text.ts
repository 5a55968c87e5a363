// A broker's storage failure in words, as the terminal, the report and trial notes say it.
import type { StorageFailure } from './types.ts';

/** HH:MM:SS.mmm on this host's clock, as the terminal shows the moment of a failure. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** "ENOSPC on /d/t-0/00000000000000000000.log at 12:03:04.512" */
export function failureText(f: StorageFailure): string {
  return `${f.errno ?? 'a storage error'} on ${f.file}${f.atMs !== null ? ` at ${clockTime(f.atMs)}` : ''}`;
}
