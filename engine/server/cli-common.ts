// Flag handling shared by the broker-side commands (`durolab broker`, `cluster`, `bench-broker`):
// one strict parseArgs with -h/--help, integer flags whose errors name the flag and the range,
// and the direct-run entry (`node --import tsx engine/server/<x>-command.ts ...`) that the tests
// use to start these commands from source, without the CLI bundle.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true; allowPositionals: false }>>['values'];

/** Strict flags (no positionals) plus -h/--help; null once `help` has been printed. */
export function parseCommandFlags<O extends Options>(argv: string[], options: O, help: string): Values<O> | null {
  const withHelp: Options = { ...options, help: { type: 'boolean', short: 'h' } };
  const { values } = parseArgs({ args: argv, options: withHelp, strict: true, allowPositionals: false });
  if (values.help === true) {
    console.log(help);
    return null;
  }
  return values as Values<O>;
}

/** `--name v` as an integer in [min, max]; `def` when the flag was not given. */
export function intFlag(name: string, v: string | undefined, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`--${name} ${v}: expected an integer in [${min}, ${max}]`);
  return Number(v);
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
