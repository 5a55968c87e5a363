// A local cluster: the controller in this process, N brokers as child processes on loopback.
// The building block of `durolab cluster`, the broker tests and the harness's process target.
// Children never outlive us: SIGTERM (then SIGKILL after a grace period) on stop, execa's
// cleanup on our exit, and each broker watches our pid (--parent-pid) in case we are SIGKILLed.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import type { Controller, PartitionAssignment } from '../replication/index.ts';
import { brokerSettings, controllerSettings, loadRawSettings, type ControllerSettings } from './config.ts';
import { startControllerServer, type ControllerServer } from './controller-server.ts';
import { request } from './http-client.ts';
import { repoRoot } from '../common/repo-root.ts';
import { tailOfFile } from '../common/file-tail.ts';

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor: number;
}

export interface ClusterOptions {
  /** Number of brokers; ids are firstBrokerId..firstBrokerId+N-1. */
  brokers: number;
  /** Root directory: D/broker-<id>/ data, D/broker-<id>.log stdout+stderr. */
  dir: string;
  /** First broker port (brokers on port, port+1, ...); 0 = any free port for every broker. Default 9092. */
  port?: number;
  /** Controller port. Default port + brokers (just above the last broker), or any free port when port is 0. */
  controllerPort?: number;
  host?: string;
  firstBrokerId?: number;
  topics?: TopicSpec[];
  /** Settings file handed to every broker (--config) and read for controller keys. */
  configFile?: string;
  /** key=value overrides handed to every broker (--set) and read for controller keys. */
  set?: string[];
  /** Controller settings that win over the file and --set. */
  controller?: Partial<ControllerSettings>;
  /** argv prefix that runs `durolab broker`. Default: node bin/durolab.mjs broker. */
  brokerCommand?: string[];
  /**
   * Each broker its own host (e.g. a network namespace per broker): where broker `id` binds and
   * how it is spawned. Absent: every broker on `host`, ports from `port`, spawned as is.
   */
  placeBroker?: (id: number) => BrokerPlacement;
  /** Address the controller binds (brokers reach it there). Default: host. */
  controllerHost?: string;
  readyTimeoutMs?: number;
  /** SIGTERM -> SIGKILL grace when stopping a broker. Default 5000. */
  stopGraceMs?: number;
  log?: (msg: string) => void;
}

/** One broker's own host: its address, fixed ports (one per link), and how to start a process there. */
export interface BrokerPlacement {
  /** The address it binds every listener to and advertises. */
  host: string;
  /** HTTP API (clients, the harness's reads). */
  port: number;
  /** Kafka protocol listener (clients). */
  kafkaPort: number;
  /** Replica fetches from the other brokers (--replication-port). */
  replicationPort: number;
  /** [file, args] that run `file args` on that host (e.g. inside its network namespace). */
  spawn(file: string, args: string[]): [string, string[]];
}

export interface ClusterBroker {
  id: number;
  url: string;
  /** Kafka protocol bootstrap address host:port ('' without a listener); kept across restarts. */
  kafka: string;
  pid: number;
  dataDir: string;
  logPath: string;
  /** false after it exited (killed or crashed) until restartBroker. */
  running: boolean;
  /** true while SIGSTOPped. */
  paused: boolean;
}

export interface LeaderInfo {
  id: number;
  url: string;
  leaderEpoch: number;
  isr: number[];
}

export interface Cluster {
  controllerUrl: string;
  controller: Controller;
  brokers: ClusterBroker[];
  broker(id: number): ClusterBroker;
  /** Sends a signal. SIGSTOP/SIGCONT return at once; other signals wait until the broker exited. */
  killBroker(id: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a stopped broker again (same port, same data dir); a running one is SIGTERMed first. */
  restartBroker(id: number): Promise<ClusterBroker>;
  leaderOf(topic: string, partition: number): LeaderInfo | null;
  createTopic(spec: TopicSpec): Promise<void>;
  /**
   * Waits until every partition has a leader that knows it leads (and serves) at the current
   * epoch, and every running (not paused) replica has opened it as a follower of that epoch.
   */
  waitForLeaders(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface Child {
  info: ClusterBroker;
  proc: ResultPromise | null;
  exited: Promise<void>;
  port: number;
  placement: BrokerPlacement | null;
}

/**
 * `node bin/durolab.mjs broker`, or the JSON argv array in DUROLAB_BROKER_COMMAND (to run
 * brokers from source with tsx, or under a profiler).
 */
export function defaultBrokerCommand(): string[] {
  const env = process.env.DUROLAB_BROKER_COMMAND;
  if (env) {
    let argv: unknown;
    try {
      argv = JSON.parse(env);
    } catch {
      argv = null;
    }
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
      throw new Error(`DUROLAB_BROKER_COMMAND: expected a JSON array of strings (argv), got ${env}`);
    }
    return argv as string[];
  }
  return [process.execPath, path.join(repoRoot(), 'bin', 'durolab.mjs'), 'broker'];
}

const tail = (file: string, lines = 20): string => tailOfFile(file, lines, '(no log)');

const liveChildren = new Set<Child>();
let exitHookInstalled = false;

/** Last resort when this process exits without stop(): SIGCONT (a paused broker cannot take SIGTERM) then SIGTERM. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of liveChildren) {
      if (!c.info.running) continue;
      try {
        process.kill(c.info.pid, 'SIGCONT');
        process.kill(c.info.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  });
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const n = opts.brokers;
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`cluster: brokers must be an integer in [1, 64], got ${n}`);
  const host = opts.host ?? '127.0.0.1';
  const basePort = opts.port ?? 9092;
  const firstId = opts.firstBrokerId ?? 1;
  const grace = opts.stopGraceMs ?? 5000;
  // Opening a partition costs a few fsyncs (10,000 took 25-70 s on this 2-core machine): the wait grows with them.
  const partitionCount = (opts.topics ?? []).reduce((a, t) => a + t.partitions * t.replicationFactor, 0);
  const readyTimeout = opts.readyTimeoutMs ?? 30_000 + 12 * partitionCount;
  const log = opts.log ?? ((m: string) => process.stderr.write(`[cluster] ${m}\n`));
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const sets = opts.set ?? [];
  const raw = loadRawSettings(opts.configFile, sets);
  brokerSettings(raw); // fail here, naming the setting, rather than in N child logs
  const cs = { ...controllerSettings(raw), ...opts.controller };
  const command = opts.brokerCommand ?? defaultBrokerCommand();
  const configArgs = [...(opts.configFile ? ['--config', path.resolve(opts.configFile)] : []), ...sets.flatMap((s) => ['--set', s])];

  const controllerPort = opts.controllerPort ?? (basePort === 0 ? 0 : basePort + n);
  const cserver: ControllerServer = await startControllerServer({
    port: controllerPort,
    host: opts.controllerHost ?? host,
    sessionTimeoutMs: cs.sessionTimeoutMs,
    uncleanLeaderElection: cs.uncleanLeaderElection,
    eligibleLeaderReplicas: cs.eligibleLeaderReplicas,
    minInsyncReplicas: cs.minInsyncReplicas,
    tickMs: cs.tickMs,
  });
  installExitHook();

  const children = new Map<number, Child>();
  let stopping = false;

  const spawnBroker = async (c: Child): Promise<void> => {
    const { info, placement } = c;
    mkdirSync(info.dataDir, { recursive: true });
    const args = [
      ...command.slice(1),
      '--id',
      String(info.id),
      '--data',
      info.dataDir,
      '--listen',
      `${placement?.host ?? host}:${c.port}`,
      ...(placement ? ['--replication-port', String(placement.replicationPort)] : []),
      '--controller',
      cserver.url,
      '--parent-pid',
      String(process.pid),
      ...configArgs,
      // A restarted broker keeps its Kafka port, so clients' bootstrap lists stay valid.
      ...(placement ? ['--set', `kafka.port=${placement.kafkaPort}`] : info.kafka ? ['--set', `kafka.port=${info.kafka.slice(info.kafka.lastIndexOf(':') + 1)}`] : []),
    ];
    const [file, argv] = placement ? placement.spawn(command[0]!, args) : [command[0]!, args];
    // The child writes its log straight into the file (an inherited fd, not a pipe through us),
    // so it keeps logging, and shuts down cleanly, after we are gone. Its stdout (the ready
    // line) comes through a pipe and is copied into the same file.
    const logFd = openSync(info.logPath, 'a');
    let proc: ResultPromise;
    try {
      proc = execa(file, argv, {
        cwd: repoRoot(),
        stdin: 'ignore',
        stdout: 'pipe',
        // execa hands a file descriptor to child_process.spawn as is; its TypeScript types
        // (NoStreamStdioOption admits `number`) do not resolve for a plain number here.
        stderr: logFd as 3,
        buffer: false,
        reject: false,
        cleanup: true,
        forceKillAfterDelay: grace,
      });
    } catch (err) {
      closeSync(logFd);
      throw err;
    }
    proc.stdout!.on('data', (chunk: Buffer) => {
      try {
        writeSync(logFd, chunk);
      } catch {
        // the log is best effort
      }
    });
    c.proc = proc;
    info.pid = proc.pid ?? -1;
    info.running = true;
    info.paused = false;
    liveChildren.add(c);
    c.exited = proc.then((r) => {
      closeSync(logFd);
      info.running = false;
      info.paused = false;
      liveChildren.delete(c);
      if (!stopping && !r.isTerminated && r.exitCode !== 0) {
        log(`broker ${info.id} (pid ${info.pid}) exited with ${r.exitCode ?? r.signal}; log: ${info.logPath}`);
      }
    });
    const ready = await new Promise<{ url: string; kafka: string }>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(
        () => reject(new Error(`broker ${info.id} not ready within ${readyTimeout} ms; last log lines (${info.logPath}):\n${tail(info.logPath)}`)),
        readyTimeout,
      );
      const onData = (chunk: Buffer): void => {
        buf += chunk.toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          try {
            const ev = JSON.parse(line) as { event?: string; url?: string; kafka?: string | null };
            if (ev.event === 'ready' && typeof ev.url === 'string') {
              clearTimeout(timer);
              proc.stdout!.off('data', onData);
              resolve({ url: ev.url, kafka: typeof ev.kafka === 'string' ? ev.kafka : '' });
              return;
            }
          } catch {
            // not our line
          }
        }
      };
      proc.stdout!.on('data', onData);
      void c.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`broker ${info.id} exited before it was ready; last log lines (${info.logPath}):\n${tail(info.logPath)}`));
      });
    });
    info.url = ready.url;
    info.kafka = ready.kafka;
    c.port = Number(new URL(ready.url).port);
  };

  const killBroker = async (id: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const c = children.get(id);
    if (!c) throw new Error(`cluster: no broker ${id} (brokers: ${[...children.keys()].join(', ')})`);
    if (!c.info.running) return;
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
      process.kill(c.info.pid, signal);
      c.info.paused = signal === 'SIGSTOP';
      return;
    }
    process.kill(c.info.pid, signal);
    if (c.info.paused && signal !== 'SIGKILL') process.kill(c.info.pid, 'SIGCONT');
    if (signal === 'SIGTERM' || signal === 'SIGINT') {
      const timer = setTimeout(() => {
        if (c.info.running) process.kill(c.info.pid, 'SIGKILL');
      }, grace);
      await c.exited;
      clearTimeout(timer);
    } else if (signal === 'SIGKILL') await c.exited;
  };

  const cluster: Cluster = {
    controllerUrl: cserver.url,
    controller: cserver.controller,
    brokers: [],
    broker(id) {
      const c = children.get(id);
      if (!c) throw new Error(`cluster: no broker ${id}`);
      return c.info;
    },
    killBroker,
    async restartBroker(id) {
      const c = children.get(id);
      if (!c) throw new Error(`cluster: no broker ${id}`);
      if (c.info.running) await killBroker(id, 'SIGTERM');
      await spawnBroker(c);
      return c.info;
    },
    leaderOf(topic, partition) {
      const a: PartitionAssignment | undefined = cserver.controller.assignment(topic, partition);
      if (!a || a.leader < 0) return null;
      const b = children.get(a.leader);
      return { id: a.leader, url: b?.info.url ?? '', leaderEpoch: a.leaderEpoch, isr: a.isr };
    },
    async createTopic(spec) {
      cserver.controller.createTopic(spec.name, spec.partitions, spec.replicationFactor, [...children.keys()]);
    },
    async waitForLeaders(timeoutMs = readyTimeout) {
      const deadline = Date.now() + timeoutMs;
      let missing = '';
      while (Date.now() < deadline) {
        missing = await missingLeaders(cserver.controller, children);
        if (missing === '') return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`cluster: partitions not ready after ${timeoutMs} ms: ${missing}`);
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      await Promise.all([...children.keys()].map((id) => killBroker(id, 'SIGTERM').catch(() => {})));
      await cserver.close();
    },
  };

  try {
    const ids = Array.from({ length: n }, (_, i) => firstId + i);
    for (const [i, id] of ids.entries()) {
      const c: Child = {
        info: { id, url: '', kafka: '', pid: -1, dataDir: path.join(dir, `broker-${id}`), logPath: path.join(dir, `broker-${id}.log`), running: false, paused: false },
        proc: null,
        exited: Promise.resolve(),
        port: opts.placeBroker ? 0 : basePort === 0 ? 0 : basePort + i,
        placement: opts.placeBroker?.(id) ?? null,
      };
      if (c.placement) c.port = c.placement.port;
      children.set(id, c);
      cluster.brokers.push(c.info);
    }
    const reused = [...children.values()].filter((c) => existsSync(c.info.dataDir) && readdirSync(c.info.dataDir).length > 0);
    if (reused.length > 0) {
      log(
        `data from an earlier run in ${reused.map((c) => c.info.dataDir).join(', ')}: the controller's state is not persisted, ` +
          'so leader epochs restart at 0 while the logs hold older ones; use a fresh --dir for experiments that depend on truncation',
      );
    }
    // Brokers start in parallel: each spends most of its start-up loading node and the bundle.
    await Promise.all([...children.values()].map((c) => spawnBroker(c)));
    for (const t of opts.topics ?? []) await cluster.createTopic(t);
    if ((opts.topics ?? []).length > 0) await cluster.waitForLeaders();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/**
 * '' when every partition's leader reports itself leader at the controller's epoch and every
 * other running replica has opened it as a follower of that epoch; else what is missing.
 */
async function missingLeaders(controller: Controller, children: Map<number, Child>): Promise<string> {
  const state = controller.state();
  const missing: string[] = [];
  const byBroker = new Map<number, PartitionAssignment[]>();
  for (const a of state.partitions) {
    if (a.leader < 0) missing.push(`${a.topic}-${a.partition} (offline)`);
    for (const id of a.replicas) byBroker.set(id, [...(byBroker.get(id) ?? []), a]);
  }
  for (const [id, parts] of byBroker) {
    const c = children.get(id);
    if (!c?.info.running || c.info.paused) {
      missing.push(...parts.filter((a) => a.leader === id).map((a) => `${a.topic}-${a.partition} (leader ${id} ${c?.info.paused ? 'paused' : 'not running'})`));
      continue;
    }
    try {
      // A broker of 10,000 partitions answers its metrics in ~0.7 s.
      const r = await request(`${c.info.url}/v1/metrics`, { timeoutMs: 10_000 });
      const m = JSON.parse(r.body.toString('utf8')) as { partitions: Array<{ topic: string; partition: number; role: string; leaderEpoch: number }> };
      const byKey = new Map(m.partitions.map((x) => [`${x.topic}\0${x.partition}`, x]));
      for (const a of parts) {
        if (a.leader < 0) continue;
        const want = a.leader === id ? 'leader' : 'follower';
        const pm = byKey.get(`${a.topic}\0${a.partition}`);
        if (!pm || pm.role !== want || pm.leaderEpoch !== a.leaderEpoch) missing.push(`${a.topic}-${a.partition} (broker ${id} not yet ${want} at epoch ${a.leaderEpoch})`);
      }
    } catch (err) {
      missing.push(...parts.map((a) => `${a.topic}-${a.partition} (broker ${id}: ${(err as Error).message})`));
    }
  }
  return missing.join(', ');
}
