// `durolab cluster`: a controller in this process plus N broker processes on loopback, until
// Ctrl-C or SIGTERM (then every broker is stopped cleanly, SIGKILL after a grace period).
import path from 'node:path';
import { intFlag, parseCommandFlags, runWhenDirect } from '../common/flags.ts';
import { startCluster } from './cluster.ts';
import { prepareDataDir } from './broker-command.ts';
import { parseTopicSpec, settingsHelp } from './config.ts';

const HELP = `usage: durolab cluster --brokers N --dir D [options]

Runs a controller (in this process) and N brokers (child processes) on loopback. Brokers get
ids 1..N, ports P..P+N-1, data dirs D/broker-<id>/ and logs D/broker-<id>.log; the controller
listens on port P+N. Ctrl-C or SIGTERM stops everything.

options:
  --brokers N                  number of brokers (default 3)
  --dir D                      root directory for data and logs (required)
  --port P                     first broker port (default 9092; 0 = any free ports)
  --controller-port PORT       controller port (default P+N)
  --topic NAME:PARTITIONS:RF   create a topic (repeatable; RF defaults to 1)
  --config FILE                settings for every broker (.properties or .json); controller keys too
  --set KEY=VALUE              override one setting (repeatable)
  --stop-grace-ms MS           SIGTERM -> SIGKILL grace per broker (default 5000)

settings (broker and controller):
${settingsHelp()}
`;

/** Brokers take P..P+N-1 and the controller P+N unless --controller-port names its own (port 0: any free ports). */
export function checkPortRange(port: number, brokers: number, controllerPort: number | undefined): void {
  if (port === 0) return;
  const last = port + brokers - 1 + (controllerPort === undefined ? 1 : 0);
  if (last > 65535) {
    throw new Error(
      `--port ${port}: ${controllerPort === undefined ? `brokers and controller take ports ${port}..${last}` : `brokers take ports ${port}..${last}`}, past 65535`,
    );
  }
}

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags(
    'cluster',
    argv,
    {
      brokers: { type: 'string' },
      dir: { type: 'string' },
      port: { type: 'string' },
      'controller-port': { type: 'string' },
      topic: { type: 'string', multiple: true, default: [] },
      config: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      'stop-grace-ms': { type: 'string' },
    },
    HELP,
  )?.values;
  if (!values) return 0;
  if (!values.dir) throw new Error('--dir is required (root directory for broker data and logs)');
  const brokers = intFlag('--brokers', values.brokers, 3, 1, 64);
  const port = intFlag('--port', values.port, 9092, 0, 65535);
  const controllerPort = values['controller-port'] === undefined ? undefined : intFlag('--controller-port', values['controller-port'], 0, 0, 65535);
  checkPortRange(port, brokers, controllerPort);
  const topics = values.topic!.map((t) => parseTopicSpec(t, true));
  for (const t of topics) {
    if (t.replicationFactor > brokers) throw new Error(`--topic ${t.name}: RF ${t.replicationFactor} exceeds --brokers ${brokers}`);
  }
  const dir = prepareDataDir(values.dir, '--dir');

  let interrupted = false;
  const early = (): void => {
    interrupted = true;
  };
  process.on('SIGINT', early);
  process.on('SIGTERM', early);
  const cluster = await startCluster({
    brokers,
    dir,
    port,
    controllerPort,
    topics,
    configFile: values.config,
    set: values.set,
    stopGraceMs: intFlag('--stop-grace-ms', values['stop-grace-ms'], 5000, 0, 600_000),
  }).finally(() => {
    process.off('SIGINT', early);
    process.off('SIGTERM', early);
  });
  if (interrupted) {
    await cluster.stop();
    return 130;
  }

  const lines = [`controller  ${cluster.controllerUrl}   (GET ${cluster.controllerUrl}/v1/controller/state)`];
  for (const b of cluster.brokers) lines.push(`broker ${b.id}    ${b.url}   kafka ${b.kafka || 'off'}   pid ${b.pid}   data ${b.dataDir}   log ${b.logPath}`);
  const bootstrap = cluster.brokers.map((b) => b.kafka).filter(Boolean);
  if (bootstrap.length > 0) lines.push(`kafka bootstrap: ${bootstrap.join(',')}   (e.g. kcat -b ${bootstrap.join(',')} -L)`);
  for (const t of topics) {
    for (let p = 0; p < t.partitions; p++) {
      const l = cluster.leaderOf(t.name, p);
      lines.push(`topic ${t.name}-${p}: leader broker ${l?.id ?? 'none'} (epoch ${l?.leaderEpoch ?? '-'}), isr [${l?.isr.join(',') ?? ''}]`);
    }
  }
  const first = topics[0];
  const leader = first ? cluster.leaderOf(first.name, 0) : null;
  if (first && leader) {
    const base = `${leader.url}/v1/topics/${first.name}/partitions/0/records`;
    lines.push(
      '',
      'produce (acks=all):',
      `  curl -s -X POST '${base}?acks=all' -H 'content-type: application/json' -d '{"records":[{"key":"k1","value":"hello"}]}'`,
      'fetch (up to the high watermark):',
      `  curl -s '${base}?offset=0' -H 'accept: application/json'`,
    );
  } else {
    lines.push('', `create a topic: curl -s -X POST ${cluster.controllerUrl}/v1/controller/topics -H 'content-type: application/json' -d '{"name":"t","partitions":1,"replicationFactor":${Math.min(3, brokers)}}'`);
  }
  lines.push('', 'Ctrl-C stops the cluster.');
  console.log(lines.join('\n'));

  await new Promise<void>((resolve) => {
    const onSignal = (sig: string): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.stderr.write(`[cluster] ${sig}: stopping brokers\n`);
      resolve();
    };
    const onInt = (): void => onSignal('SIGINT');
    const onTerm = (): void => onSignal('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
  await cluster.stop();
  return 0;
}

runWhenDirect(import.meta.url, 'cluster-command.ts', 'cluster', main);
