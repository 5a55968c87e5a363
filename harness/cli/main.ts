// `durolab <command>`: one entry point; each command lives with the code it drives and is
// loaded only when asked for, so `durolab broker` starts without loading the report stack.

export interface Command {
  summary: string;
  load: () => Promise<{ main: (argv: string[]) => Promise<number> }>;
}

const commands: Record<string, Command> = {
};

export function registerCommand(name: string, command: Command): void {
  commands[name] = command;
}

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const lines = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return [
    'durolab: a benchmark and chaos lab for durability modes of Kafka-style logs',
    '',
    'usage: durolab <command> [options]   (durolab <command> --help for its options)',
    '',
    'commands:',
    ...lines,
  ].join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`durolab: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.main(rest);
}

const code = await run(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`durolab: ${err instanceof Error ? err.message : String(err)}`);
  if (process.env.DUROLAB_DEBUG && err instanceof Error) console.error(err.stack);
  return 1;
});
process.exitCode = code;
