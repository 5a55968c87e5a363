// Command-line flags for every durolab command (engine, broker, harness, guest tools): one
// strict node:util parseArgs whose errors name the command, optional -h/--help, value checks
// whose errors name the flag and the form it expects, and the direct-run entry the tests use
// to start a command from source without the CLI bundle.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseSize } from '../units.ts';

export type FlagOptions = NonNullable<ParseArgsConfig['options']>;
type ParsedFlags<O extends FlagOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>;
export type FlagValues<O extends FlagOptions> = ParsedFlags<O>['values'];

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
type WithHelp<O extends FlagOptions> = O & typeof HELP_OPTION;

/**
 * Strict flags for `durolab <command>`: node's message (unknown flag, missing value, unexpected
 * positional) gets the command's name in front and a pointer to its --help.
 */
export function parseFlags<O extends FlagOptions>(command: string, argv: string[], options: O, allowPositionals = false): { values: FlagValues<O>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals, strict: true }) as ParsedFlags<O>;
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (e) {
    throw new Error(`durolab ${command}: ${(e as Error).message} (see durolab ${command} --help)`);
  }
}

/** parseFlags plus -h/--help: prints `help` and returns null when asked for it. */
export function parseCommandFlags<O extends FlagOptions>(
  command: string,
  argv: string[],
  options: O,
  help: string,
  allowPositionals = false,
): { values: FlagValues<WithHelp<O>>; positionals: string[] } | null {
  const parsed = parseFlags(command, argv, { ...options, ...HELP_OPTION } as WithHelp<O>, allowPositionals);
  if ((parsed.values as { help?: unknown }).help === true) {
    console.log(help.replace(/\n$/, ''));
    return null;
  }
  return parsed;
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

/** An optional integer flag: `def` when it was not given. */
export function intFlag(flag: string, text: string | undefined, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return text === undefined ? def : parseIntFlag(flag, text, min, max);
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

/**
 * A file path a command writes its results to at the end: refused at once when it names a
 * directory (or lies under a file), not after a run whose results would then be lost.
 */
export function checkOutFile(flag: string, file: string): string {
  const resolved = path.resolve(file);
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(resolved);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') throw new Error(`${flag} ${file}: a parent of this path is a file, not a directory`);
  }
  if (st?.isDirectory()) throw new Error(`${flag} ${file}: is a directory (expected the path of a file to write)`);
  return resolved;
}

/**
 * A directory a command reads from, named by a flag: refused when missing or not a directory,
 * with `what` (e.g. "the scenarios directory") after the reason when given.
 */
export function requireExistingDir(flag: string, value: string, what?: string): string {
  const resolved = path.resolve(value);
  const suffix = what ? ` (${what})` : '';
  let isDir = false;
  try {
    isDir = fs.statSync(resolved).isDirectory();
  } catch {
    throw new Error(`${flag} ${value}: no such directory${suffix}`);
  }
  if (!isDir) throw new Error(`${flag} ${value}: not a directory${suffix}`);
  return resolved;
}

/** The flag's value when given as a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * Runs `main` when this module is the process entry. `file` guards the CLI bundle, where every
 * module shares the bundle's import.meta.url.
 */
export function runWhenDirect(moduleUrl: string, file: string, command: string, main: (argv: string[]) => Promise<number>): void {
  if (!moduleUrl.endsWith(`/${file}`) || !process.argv[1] || moduleUrl !== pathToFileURL(path.resolve(process.argv[1])).href) return;
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`durolab ${command}: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
