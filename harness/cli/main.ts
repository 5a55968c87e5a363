// `durolab <command>`: one entry point; each command lives with the code it drives and is
// loaded only when asked for, so `durolab broker` starts without loading the report stack.

export interface Command {
  summary: string;
  load: () => Promise<{ main: (argv: string[]) => Promise<number> }>;
}

const commands: Record<string, Command> = {
  bench: {
    summary: 'run a scenario (scenarios/<name>.yaml): load, probes, checker, results and report',
    load: () => import('./bench-command.ts'),
  },
  engine: {
    summary: 'the segment engine alone: write, dump, recover a partition directory; bench it against fio',
    load: () => import('../../engine/cli/engine-command.ts'),
  },
  broker: {
    summary: 'run one broker (HTTP produce/fetch, replication follower/leader)',
    load: () => import('../../engine/server/broker-command.ts'),
  },
  'disk-server': {
    summary: "one NBD fault disk in its own process (the host route's disk under Kafka JVMs; started by the harness)",
    load: () => import('../disk/disk-server-command.ts'),
  },
  cluster: {
    summary: 'run a controller and N brokers on loopback in the foreground, for curl',
    load: () => import('../../engine/server/cluster-command.ts'),
  },
  'bench-broker': {
    summary: 'benchmark one broker with autocannon against a null HTTP server',
    load: () => import('../../engine/server/bench-broker.ts'),
  },
  'bench-peers': {
    summary: "durolab's broker vs Apache Kafka under the same Kafka-client load (RF 1/3, acks 1/all), ratios and PASS/FAIL",
    load: () => import('../peers/bench-peers-command.ts'),
  },
  'bench-crash-states': {
    summary: "crash states checked per minute, durolab's recovery (a recorded VM trial) and Kafka's (a node on the host's fault disk)",
    load: () => import('../peers/bench-crash-states-command.ts'),
  },
  'bench-fault-disk': {
    summary: "what the host route's fault disk costs Kafka and durolab's broker: records/s on it vs a plain directory, in one run",
    load: () => import('../peers/bench-fault-disk-command.ts'),
  },
  'bench-recovery': {
    summary: "time to serve again after SIGKILL vs log size and segments, durolab's recovery and Kafka's, side by side with their ratio",
    load: () => import('../peers/bench-recovery-command.ts'),
  },
  'producer-perf': {
    summary: "Java's kafka-producer-perf-test (ProducerPerformance, from Maven Central) against a bootstrap address, parsed into one row",
    load: () => import('../../engine/server/kafka/producer-perf-command.ts'),
  },
  scenario: {
    summary: 'list, check or show scenario files without running them',
    load: () => import('../scenario/scenario-command.ts'),
  },
  settings: {
    summary: 'the reference of every setting, the brokers\' and the client\'s: name, type, default, range, where it applies (--json, --markdown)',
    load: () => import('./settings-command.ts'),
  },
  'vm-image': {
    summary: 'build (or find cached) the QEMU guest image: kernel, busybox initramfs, node, the bundled CLI',
    load: () => import('../vm/image-command.ts'),
  },
  kafka: {
    summary: 'Apache Kafka for target: kafka: `durolab kafka install` fetches its jars from Maven Central into the cache',
    load: () => import('../targets/kafka/kafka-runtime.ts'),
  },
  report: {
    summary: 'render a run (results/<scenario>/<run id>/run.json) as a self-contained HTML report',
    load: () => import('../report/report-command.ts'),
  },
  compare: {
    summary: 'runs side by side: cells aligned by settings, ratios, noise bands, environment differences; --scenario NAME: its trend',
    load: () => import('../compare/compare-command.ts'),
  },
  claims: {
    summary: "the source articles' claims, each with its verdict computed from the latest run of its scenario",
    load: () => import('../claims/claims-command.ts'),
  },
  recount: {
    summary: "a run's acknowledged records re-counted from the disk images its trials kept: served, on a disk but not served, on no disk",
    load: () => import('../recount/recount-command.ts'),
  },
  docs: {
    summary: 'write the generated parts of docs/ from the code (scenario reference, settings, fault kinds, systems); --check says which are stale; --findings RESULTS_DIR the measured tables',
    load: () => import('../docs/docs-command.ts'),
  },
  audit: {
    summary: "a live cluster's topics over the Kafka protocol: each one's durability class, its risks, and what the lab measured for the same settings",
    load: () => import('../audit/audit-command.ts'),
  },
  publish: {
    summary: 'a static site of runs under results/: index, run pages, compare pages, claims, the documentation (default out: site/)',
    load: () => import('../publish/publish-command.ts'),
  },
};

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
