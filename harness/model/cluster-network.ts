// `cluster.network`: how a cluster's nodes are connected. loopback (default): every broker on
// 127.0.0.1, as always. namespaces: each node its own host, a network namespace on the lab's
// bridge with its own address (harness/net/lab-network.ts), so a partition or a slow link can
// cut one node, or one of its links, alone. A cell may override it with the `network` setting
// (a matrix axis: the cost of namespaces, one run). Targets that cannot put their nodes in
// namespaces say why in their capabilities (refuseLabNetwork), and `scenario check` refuses
// (network-checks.ts). No imports but the vocabulary: the target registry reads it.
import type { SettingValue } from '../../engine/settings/index.ts';
import { CLUSTER_NETWORKS, CLUSTER_NETWORK_EXPECTED, type ClusterNetwork } from './kinds.ts';

export { CLUSTER_NETWORKS, CLUSTER_NETWORK_EXPECTED, type ClusterNetwork };

export function isClusterNetwork(v: unknown): v is ClusterNetwork {
  return (CLUSTER_NETWORKS as readonly unknown[]).includes(v);
}

/** A cell's network: its `network` setting (settings:/matrix:) over cluster.network. */
export function cellNetwork(cluster: { network?: ClusterNetwork }, values: Record<string, SettingValue>): ClusterNetwork {
  const v = values.network;
  return isClusterNetwork(v) ? v : (cluster.network ?? 'loopback');
}
