// target: kafka in the lab network (`cluster.network: namespaces`): node i's JVM in lab node i's
// network namespace, its three listeners at the node's address, each on its own port
// (LAB_PORTS): PLAINTEXT for clients (advertised), REPLICATION for inter-broker fetches
// (inter.broker.listener.name, advertised), CONTROLLER for KRaft (the static voters at the
// node addresses). Every node is a voter (combined mode), so "the controller" of a broker is
// the other nodes' CONTROLLER listeners.
import type { LabNetwork } from '../../net/lab-network.ts';
import { LAB_PORTS } from '../lab-links.ts';
import type { ClusterLabNetwork } from '../types.ts';
import type { KafkaNodeProcess, KafkaNodeSpec } from './kafka-node.ts';

/** Node `index`'s address and ports in the lab. */
export function labPlacement(lab: LabNetwork, index: number): Pick<KafkaNodeSpec, 'host' | 'port' | 'replicationPort' | 'controllerPort'> {
  const node = lab.nodes[index];
  if (!node) throw new Error(`kafka cluster: no lab node ${index} (nodes 0..${lab.nodes.length - 1})`);
  return { host: node.address, port: LAB_PORTS.client, replicationPort: LAB_PORTS.replication, controllerPort: LAB_PORTS.controller };
}

/** Each JVM started inside its node's namespace (node i = the i-th node process). */
export function spawnInLab(lab: LabNetwork, nodes: KafkaNodeProcess[]): void {
  nodes.forEach((n, i) => (n.spawnIn = (file, args) => lab.argvIn(i, file, args)));
}

/** What the partition kinds act on: broker id -> its node and link ports; the controllers are every node. */
export function kafkaLabLinks(lab: LabNetwork, nodes: KafkaNodeProcess[]): ClusterLabNetwork {
  const links: ClusterLabNetwork['links'] = {};
  nodes.forEach((n, i) => {
    const s = n.node;
    if (s.replicationPort === undefined) throw new Error(`kafka node ${s.id}: started without a REPLICATION listener, not in the lab network`);
    links[s.id] = { node: i, ports: { client: [s.port], replication: [s.replicationPort], controller: [s.controllerPort] } };
  });
  return { lab, links, controller: { endpoints: nodes.map((_, i) => i), port: LAB_PORTS.controller } };
}
