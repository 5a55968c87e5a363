// `durolab broker`: runs one broker process until SIGTERM/SIGINT (clean shutdown: partitions
// close and Log.close writes the clean-shutdown marker). Any other end (SIGKILL, crash, power
// cut) leaves the logs to be recovered on the next start.
import fs from 'node:fs';
import path from 'node:path';
import { Broker } from './broker.ts';
import { warmLatencySummaries } from '../common/latency.ts';
import { parseCommandFlags, runWhenDirect } from '../common/flags.ts';
import { brokerSettings, loadRawSettings, parseTopicSpec, settingsHelp } from './config.ts';

const HELP = `usage: durolab broker --id N --data DIR [options]

Runs one broker. Prints {"event":"ready","brokerId","url","kafka","replication","pid"} on stdout
once it serves (kafka: the Kafka protocol listener's host:port, null with kafka.port=-1;
replication: the --replication-port listener's URL, null without one);
logs go to stderr. SIGTERM or SIGINT shuts down cleanly.

options:
  --id N                 broker id (an integer from 0 to 2147483647, as Kafka's broker.id)
  --data DIR             data directory (DIR/<topic>-<partition>/ per replica; made if missing)
  --listen HOST:PORT     bind address (default 127.0.0.1:9092; port 0 = any free port)
  --advertise URL        URL other brokers and clients use (default http://HOST:PORT)
  --replication-port N   a second HTTP listener on the --listen host for other brokers' replica
                         fetches (0 = any free port); its URL is what the broker registers with
                         the controller, so replication has a link of its own, apart from clients'
  --controller URL       controller base URL (e.g. http://127.0.0.1:9095); without it the
                         broker is standalone: its --topic partitions at RF 1, led by itself
  --topic NAME:PARTITIONS  standalone topic (repeatable)
  --config FILE          settings, Kafka-style key=value .properties or .json
  --set KEY=VALUE        override one setting (repeatable; applied after --config)
  --parent-pid PID       shut down cleanly when this process is gone (used by durolab cluster)

settings:
${settingsHelp()}
`;

export function parseListen(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(s) ?? /^()()(\d{1,5})$/.exec(s);
  if (!m) throw new Error(`--listen ${s}: expected HOST:PORT (e.g. 127.0.0.1:9092)`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`--listen ${s}: port must be in [0, 65535]`);
  return { host: m[1] || m[2] || '127.0.0.1', port };
}

export function parseReplicationPort(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  if (!/^\d{1,5}$/.test(s) || Number(s) > 65535) throw new Error(`--replication-port ${s}: expected a port number from 0 to 65535 (0 = any free port)`);
  return Number(s);
}

/** Kafka's broker.id is an int32. */
const MAX_BROKER_ID = 2 ** 31 - 1;

export function parseId(s: string | undefined): number {
  if (s === undefined) throw new Error(`--id is required (broker id, an integer from 0 to ${MAX_BROKER_ID})`);
  if (!/^\d{1,10}$/.test(s) || Number(s) > MAX_BROKER_ID) throw new Error(`--id ${s}: expected an integer from 0 to ${MAX_BROKER_ID}`);
  return Number(s);
}

export function parseParentPid(s: string | undefined): number | null {
  if (s === undefined) return null;
  const pid = /^\d{1,10}$/.test(s) ? Number(s) : NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`--parent-pid ${s}: expected a process id (an integer >= 1)`);
  return pid;
}

const URL_SHAPE = /^https?:\/\/[^/]+/;

/** A data directory (--data, or a bench's or cluster's --dir), made if missing; refused with its reason when it cannot be one. */
export function prepareDataDir(data: string | undefined, flag = '--data'): string {
  if (!data) throw new Error(`${flag} is required (the broker data directory)`);
  const dir = path.resolve(data);
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(dir);
  } catch {
    // missing: made below
  }
  if (st !== undefined && !st.isDirectory()) throw new Error(`${flag} ${data}: not a directory`);
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new Error(`${flag} ${data}: cannot make the directory (${(e as Error).message})`);
  }
  return dir;
}

/** Exits cleanly when the parent (durolab cluster, a test) disappears, even after its SIGKILL. */
function watchParent(pid: number, onGone: () => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') {
        clearInterval(timer);
        onGone();
      }
    }
  }, 500);
  timer.unref();
  return timer;
}

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags(
    'broker',
    argv,
    {
      id: { type: 'string' },
      data: { type: 'string' },
      listen: { type: 'string', default: '127.0.0.1:9092' },
      advertise: { type: 'string' },
      'replication-port': { type: 'string' },
      controller: { type: 'string' },
      topic: { type: 'string', multiple: true, default: [] },
      config: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      'parent-pid': { type: 'string' },
    },
    HELP,
  )?.values;
  if (!values) return 0;
  // Whoever reads our stdout/stderr may be gone (a SIGKILLed parent); a broken pipe must not
  // turn a clean shutdown into a crash.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
  const id = parseId(values.id);
  const parentPid = parseParentPid(values['parent-pid']);
  const { host, port } = parseListen(values.listen!);
  const replicationPort = parseReplicationPort(values['replication-port']);
  const topics = values.topic!.map((t) => parseTopicSpec(t, false));
  if (values.controller && topics.length > 0) {
    throw new Error('--topic is for a standalone broker; with --controller create topics on the controller (POST /v1/controller/topics or durolab cluster --topic)');
  }
  if (values.controller && !URL_SHAPE.test(values.controller)) throw new Error(`--controller ${values.controller}: expected a URL like http://127.0.0.1:9091`);
  if (values.advertise !== undefined && !URL_SHAPE.test(values.advertise)) throw new Error(`--advertise ${values.advertise}: expected a URL like http://127.0.0.1:9092`);
  const settings = brokerSettings(loadRawSettings(values.config, values.set!));
  const dataDir = prepareDataDir(values.data);

  const broker = await Broker.start({
    id,
    dataDir,
    host,
    port,
    advertiseUrl: values.advertise,
    ...(replicationPort !== undefined ? { replicationPort } : {}),
    controllerUrl: values.controller,
    topics,
    settings,
  });

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (why: string, code: number): void => {
      if (stopping) {
        broker.log(`${why} during shutdown: exiting now`);
        process.exit(code || 1);
      }
      stopping = true;
      broker.log(`${why}: shutting down cleanly`);
      broker.close().then(
        () => {
          process.off('SIGTERM', onTerm);
          process.off('SIGINT', onInt);
          resolve(code);
        },
        (err: unknown) => {
          broker.log(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          resolve(1);
        },
      );
    };
    const onTerm = (): void => stop('SIGTERM', 0);
    const onInt = (): void => stop('SIGINT', 0);
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    if (parentPid !== null) watchParent(parentPid, () => stop(`parent process ${parentPid} is gone`, 0));
    process.stdout.write(`${JSON.stringify({ event: 'ready', brokerId: id, url: broker.url, kafka: broker.kafka?.address ?? null, replication: broker.replicationUrl, pid: process.pid })}\n`);
    // Compile the metrics' summary code now, before any load (latency.ts says why).
    setImmediate(warmLatencySummaries);
  });
}

// Direct run (`node --import tsx engine/server/broker-command.ts ...`) before the CLI bundle knows `broker`.
runWhenDirect(import.meta.url, 'broker-command.ts', 'broker', main);
