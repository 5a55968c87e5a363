import fs from 'node:fs';
import { writeFileAtomic } from '../common/atomic-file.ts';

/**
 * Replaces a checkpoint file (Kafka's CheckpointFile: tmp + fsync + rename + fsync(dir)); the
 * temporary file has a fixed name, `<file>.tmp`, since each checkpoint has one writer.
 */
export function writeCheckpointFile(file: string, text: string): void {
  writeFileAtomic(file, text, { tmp: `${file}.tmp` });
}

/** The file's text, or null when it does not exist. */
export function readFileIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Parses Kafka's checkpoint layout: line 1 version, line 2 entry count, then one entry per line.
 * Throws an Error naming the file and line when the layout is not what is expected.
 */
export function parseCheckpoint(file: string, text: string, fieldsPerLine: number): string[][] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length < 2) throw new Error(`${file}: expected a version line and a count line, got ${lines.length} line(s)`);
  if (lines[0].trim() !== '0') throw new Error(`${file}: line 1: expected version 0, got ${JSON.stringify(lines[0])}`);
  const count = Number(lines[1].trim());
  if (!Number.isInteger(count) || count < 0) {
    throw new Error(`${file}: line 2: expected a non-negative entry count, got ${JSON.stringify(lines[1])}`);
  }
  if (lines.length - 2 !== count) {
    throw new Error(`${file}: line 2 says ${count} entries but the file has ${lines.length - 2}`);
  }
  return lines.slice(2).map((line, i) => {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== fieldsPerLine) {
      throw new Error(`${file}: line ${i + 3}: expected ${fieldsPerLine} fields, got ${JSON.stringify(line)}`);
    }
    return fields;
  });
}

/** A non-negative safe integer field of a checkpoint, or an Error naming file and line. */
export function parseIntField(file: string, lineNo: number, what: string, s: string, min = 0): number {
  const n = Number(s);
  if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(n) || n < min) {
    throw new Error(`${file}: line ${lineNo}: expected ${what} to be an integer >= ${min}, got ${JSON.stringify(s)}`);
  }
  return n;
}
