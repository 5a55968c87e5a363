// One nats-server process of target: nats: its config file (server name, client listener,
// monitoring listener, the jetstream block with its store_dir and sync_interval, the cluster
// block with routes to every node; a 1-node cluster has none), started under setpriv
// --pdeathsig (killed with the harness) or inside its lab node's namespace, ready once its log
// says so. SIGSTOP/SIGCONT for pauses and the first step of a power cut, SIGKILL for kills,
// SIGTERM (nats-server's clean shutdown) to stop.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { findExecutable } from '../../vm/prerequisites.ts';
import { isAlive, pdeathsigArgv, trackChildProcess, untrackChildProcess } from '../../vm/process-registry.ts';

/** The NATS cluster's name in every node's cluster block. */
export const NATS_CLUSTER_NAME = 'durolab';

export interface NatsNodeSpec {
  id: number;
  /** Where its files live (config). */
  dir: string;
  /** jetstream.store_dir (nats-server keeps its streams under <store_dir>/jetstream). */
  storeDir: string;
  logPath: string;
  /** Address it listens at: 127.0.0.1, or its lab node's address. */
  host: string;
  /** Client listener (the driver connects here). */
  port: number;
  /** Route listener (other nodes connect here: JetStream's meta and stream Raft traffic goes over routes). */
  routePort: number;
  /** Monitoring listener (/healthz, /jsz): how the harness learns the meta leader. */
  httpPort: number;
}

/** Server name of node `id` (the stream's cluster info names its leader and replicas by it). */
export function natsServerName(id: number): string {
  return `n${id}`;
}

export function natsServerId(name: string): number | null {
  const m = /^n(\d+)$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** nats-server's config for one node of `all` (routes to every node; none with one node). */
export function natsNodeConfig(node: NatsNodeSpec, all: readonly NatsNodeSpec[], syncInterval: string | null): string {
  const lines = [
    `server_name: ${natsServerName(node.id)}`,
    `listen: "${node.host}:${node.port}"`,
    `http: "${node.host}:${node.httpPort}"`,
    'jetstream {',
    `  store_dir: ${JSON.stringify(node.storeDir)}`,
    // null: nats-server's default, a sync every 2 minutes (and on block rolls).
    ...(syncInterval === null ? [] : [`  sync_interval: ${syncInterval === 'always' ? 'always' : JSON.stringify(syncInterval)}`]),
    '}',
  ];
  if (all.length > 1) {
    lines.push(
      'cluster {',
      `  name: ${NATS_CLUSTER_NAME}`,
      `  listen: "${node.host}:${node.routePort}"`,
      `  routes: [${all.map((n) => JSON.stringify(`nats-route://${n.host}:${n.routePort}`)).join(', ')}]`,
      '}',
    );
  }
  return `${lines.join('\n')}\n`;
}

export class NatsNodeProcess {
  private child: ResultPromise | null = null;
  private exited: Promise<void> = Promise.resolve();
  pid: number | null = null;
  running = false;
  /** [file, args] that run the server where it belongs (inside its lab node's namespace); null: here, under setpriv --pdeathsig. */
  spawnIn: ((file: string, args: string[]) => [string, string[]]) | null = null;
  readonly configPath: string;

  constructor(
    readonly binary: string,
    readonly node: NatsNodeSpec,
    config: string,
  ) {
    mkdirSync(node.dir, { recursive: true });
    this.configPath = path.join(node.dir, 'nats-server.conf');
    writeFileSync(this.configPath, config);
  }

  /** Starts nats-server and resolves once its log says it is ready (timeoutMs), with the ms it took. */
  async start(timeoutMs = 30_000): Promise<number> {
    const t0 = Date.now();
    mkdirSync(this.node.storeDir, { recursive: true });
    appendFileSync(this.node.logPath, '');
    const logStart = readFileSync(this.node.logPath).length;
    const args = ['-c', this.configPath];
    const [file, argv] = this.spawnIn ? this.spawnIn(this.binary, args) : pdeathsigArgv(findExecutable('setpriv'), this.binary, args);
    const child = execa(file, argv, {
      stdin: 'ignore',
      stdout: { file: this.node.logPath, append: true },
      stderr: { file: this.node.logPath, append: true },
      reject: false,
      cleanup: true,
      forceKillAfterDelay: 2000,
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`nats node ${this.node.id}: could not spawn ${this.binary}`);
    trackChildProcess(pid, `nats-${this.node.id}`);
    this.child = child;
    this.pid = pid;
    this.running = true;
    let done = false;
    this.exited = child.then(() => {
      done = true;
      this.running = false;
      untrackChildProcess(pid);
    });
    for (;;) {
      const text = readFileSync(this.node.logPath).subarray(logStart).toString('utf8');
      if (/\[INF\] Server is ready/.test(text)) return Date.now() - t0;
      if (done) {
        throw new Error(`nats node ${this.node.id} exited during start; log ${this.node.logPath}:\n${text.trim().split('\n').filter((l) => /\[(ERR|FTL)\]/.test(l)).slice(-8).join('\n') || text.slice(-1500)}`);
      }
      if (Date.now() - t0 > timeoutMs) {
        await this.kill();
        throw new Error(`nats node ${this.node.id} was not ready within ${timeoutMs} ms; log ${this.node.logPath}:\n${text.slice(-1500)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private signal(sig: NodeJS.Signals): void {
    if (this.pid !== null && this.running) {
      try {
        process.kill(this.pid, sig);
      } catch {
        // exited meanwhile
      }
    }
  }

  /** SIGSTOP: the server stops at once (a pause, or a power cut's first step: nothing more is written or acknowledged). */
  freeze(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT: a frozen server runs on; nothing when it is gone. */
  thaw(): void {
    this.signal('SIGCONT');
  }

  /** SIGKILL; resolves when the process is gone. */
  async kill(): Promise<void> {
    if (this.child && this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (nats-server's clean shutdown: its stores are synced and closed), SIGKILL after graceMs. */
  async stop(graceMs = 5000): Promise<'clean' | 'killed'> {
    if (!this.child || !this.running) return 'clean';
    const pid = this.pid;
    this.thaw(); // a paused server cannot act on SIGTERM
    this.signal('SIGTERM');
    const timedOut = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs))]);
    if (timedOut) await this.kill();
    if (pid !== null && isAlive(pid)) throw new Error(`nats node ${this.node.id}: nats-server ${pid} still alive after SIGKILL`);
    return timedOut ? 'killed' : 'clean';
  }
}
