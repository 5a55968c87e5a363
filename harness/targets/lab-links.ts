// Each broker its own host (`cluster.network: namespaces`): what the process and kafka targets
// share to start a cluster in the lab network (harness/net/lab-network.ts). One node per broker,
// node i = the i-th broker; every node listens on the same fixed ports at its own address, one
// port per link (client, replication, controller), so a partition narrowed to a link's ports
// cuts that link alone. The ports are below the ephemeral range (32768-60999): an outgoing
// connection's own port never equals one, so a port-narrowed cut never catches a bystander.
import net from 'node:net';
import { LabNetwork } from '../net/lab-network.ts';
import { cellNetwork, type ClusterNetwork } from '../model/cluster-network.ts';
import type { ClusterStartOptions } from './types.ts';

/** The ports every node listens on in the lab network (durolab's HTTP API besides Kafka's three). */
export const LAB_PORTS = {
  /** Kafka protocol clients: Kafka's PLAINTEXT listener, durolab's Kafka listener. */
  client: 9092,
  /** Inter-broker replication: Kafka's REPLICATION listener, durolab's replication listener. */
  replication: 9091,
  /** Controller traffic: Kafka's CONTROLLER listener; durolab's controller (in the harness, on the bridge's address). */
  controller: 9093,
  /** durolab's HTTP API (clients of the http driver, the harness's reads). */
  http: 9080,
} as const;

/** The network a cell's cluster starts on: its `network` setting over cluster.network. */
export function networkOf(o: Pick<ClusterStartOptions, 'cluster' | 'settings'>): ClusterNetwork {
  return cellNetwork(o.cluster, o.settings.values);
}

/** A lab network of `nodes` nodes when the cell asks for namespaces, else null. */
export async function labNetworkFor(o: Pick<ClusterStartOptions, 'cluster' | 'settings'>, nodes: number, name: string, log: (line: string) => void): Promise<LabNetwork | null> {
  return networkOf(o) === 'namespaces' ? LabNetwork.create({ nodes, name, log }) : null;
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * The first port from `preferred` up (at most 100 tries) that `host` can listen on now: for a
 * listener in the root namespace on the lab's own bridge address, which only a wildcard
 * listener of another process can already hold.
 */
export async function listenablePort(host: string, preferred: number): Promise<number> {
  for (let port = preferred; port < preferred + 100; port++) if (await canListen(host, port)) return port;
  throw new Error(`no port from ${preferred} to ${preferred + 99} can be listened on at ${host} (each taken by another listener)`);
}
