// Flag parsing shared by the `durolab engine` subcommands: node:util parseArgs, plus value
// checks whose errors name the flag and the form it expects.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseSize } from '../units.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** parseArgs with the subcommand's name in front of node's message (unknown flag, missing value). */
export function parseFlags(command: string, argv: string[], options: Options, allowPositionals = false): Parsed {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true }) as Parsed;
  } catch (e) {
    throw new Error(`durolab ${command}: ${(e as Error).message} (see durolab ${command} --help)`);
  }
}

/** "65536", "64k", "64KiB", "1MiB", "1m": k/m/g/t and KiB/MiB/GiB/TiB are powers of 1024, kB/MB/GB/TB powers of 1000. */
export function parseByteSize(flag: string, text: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseSize(text);
  if (n === undefined || n < min || n > max) {
    throw new Error(`${flag} ${JSON.stringify(text)}: expected a whole number of bytes in [${min}, ${max}], optionally with a unit (e.g. 4096, 64KiB, 1MiB)`);
  }
  return n;
}

export function parseIntFlag(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${flag} ${JSON.stringify(text)}: expected an integer in [${min}, ${max}]`);
  }
  return n;
}

export function parseNumberFlag(flag: string, text: string, min: number, max: number): number {
  const n = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new Error(`${flag} ${JSON.stringify(text)}: expected a number in [${min}, ${max}]`);
  }
  return n;
}

export function parseChoice<T extends string>(flag: string, text: string, allowed: readonly T[]): T {
  if (!allowed.includes(text as T)) {
    throw new Error(`${flag} ${JSON.stringify(text)}: expected one of ${allowed.join(', ')}`);
  }
  return text as T;
}

/** A comma-separated list, each item checked by `one`. */
export function parseList<T>(flag: string, text: string, one: (item: string) => T): T[] {
  const items = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new Error(`${flag} ${JSON.stringify(text)}: expected a comma-separated list`);
  return items.map(one);
}

export function requireString(command: string, flag: string, v: unknown, form: string): string {
  if (typeof v !== 'string' || v === '') throw new Error(`durolab ${command}: ${flag} is required (${form})`);
  return v;
}

/** The flag's value when given as a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
