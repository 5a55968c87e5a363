// `durolab engine <write|dump|recover|bench>`: the storage engine on its own, without a
// broker: write a partition, look inside one, recover one, benchmark the write paths against
// fio. Each subcommand is loaded only when asked for (bench pulls in fio handling and
// systeminformation).

type Sub = { summary: string; load: () => Promise<{ main: (argv: string[]) => Promise<number> }> };

const SUBCOMMANDS: Record<string, Sub> = {
  write: { summary: 'append records to a partition directory and report throughput and latency', load: () => import('./write-command.ts') },
  dump: { summary: "print a partition's segments, batches and index entries (like kafka-dump-log)", load: () => import('./dump-command.ts') },
  recover: { summary: 'run recovery on a partition directory and print its report', load: () => import('./recover-command.ts') },
  bench: { summary: 'engine vs fio (or raw writeSync) in every write path and flush policy', load: () => import('./bench-command.ts') },
};

function usage(): string {
  const width = Math.max(...Object.keys(SUBCOMMANDS).map((n) => n.length));
  return [
    'usage: durolab engine <subcommand> [options]   (durolab engine <subcommand> --help for its options)',
    '',
    'The Kafka-style segment engine on its own, without a broker.',
    '',
    'subcommands:',
    ...Object.entries(SUBCOMMANDS).map(([n, s]) => `  ${n.padEnd(width)}  ${s.summary}`),
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const sub = SUBCOMMANDS[name];
  if (!sub) {
    console.error(`durolab engine: unknown subcommand '${name}': expected one of ${Object.keys(SUBCOMMANDS).join(', ')}\n\n${usage()}`);
    return 2;
  }
  return (await sub.load()).main(rest);
}
