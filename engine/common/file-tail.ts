// The last lines of a text file for an error message (a broker's log, a VM's serial console),
// or `missing` when the file cannot be read.
import { readFileSync } from 'node:fs';

export function tailOfFile(file: string, lines: number, missing: string): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return missing;
  }
}
