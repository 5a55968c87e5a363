// One nats-server process of target: nats: its config file (server name, client listener,
// monitoring listener, the jetstream block with its store_dir and sync_interval, the cluster
// block with routes to every node; a 1-node cluster has none), started under setpriv
// --pdeathsig (killed with the harness) or inside its lab node's namespace, ready once its log
// says so. SIGSTOP/SIGCONT for pauses and the first step of a power cut, SIGKILL for kills,
// SIGTERM (nats-server's clean shutdown) to stop.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HostNodeProcess, type HostNodeProcessShape } from '../host-node-process.ts';
import { natsServerName } from '../../drivers/nats/monitor.ts';

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

/** nats-server's node process: ready at its "Server is ready" line; a stop thaws it first. */
const NATS_NODE_PROCESS: HostNodeProcessShape = {
  system: 'nats',
  program: 'nats-server',
  ready: /\[INF\] Server is ready/,
  notReady: 'was not ready',
  errorLines: /\[(ERR|FTL)\]/,
  pollMs: 20,
  thawBeforeStop: true,
};

export class NatsNodeProcess extends HostNodeProcess<NatsNodeSpec> {
  readonly configPath: string;

  constructor(
    readonly binary: string,
    node: NatsNodeSpec,
    config: string,
  ) {
    super(node, NATS_NODE_PROCESS);
    mkdirSync(node.dir, { recursive: true });
    this.configPath = path.join(node.dir, 'nats-server.conf');
    writeFileSync(this.configPath, config);
  }

  /** Starts nats-server and resolves once its log says it is ready (timeoutMs), with the ms it took. */
  async start(timeoutMs = 30_000): Promise<number> {
    mkdirSync(this.node.storeDir, { recursive: true });
    return this.launch(this.binary, ['-c', this.configPath], timeoutMs);
  }

  /** SIGTERM (nats-server's clean shutdown: its stores are synced and closed; a paused server is thawed first), SIGKILL after graceMs. */
  override stop(graceMs = 5000): Promise<'clean' | 'killed'> {
    return super.stop(graceMs);
  }
}
