// The ground floor of the harness's vocabulary: the names of each registry's entries, with no
// behaviour and no imports, so the types every floor shares (model/scenario.ts, results/types.ts)
// need not import the registries that give the names their meaning. Each list is defined here
// once; its registry (named beside it) maps every name to its spec, as a Record over the type,
// so a name without a spec is a type error there.

/** harness/faults/registry.ts: what a scenario's `faults:` entry can be. */
export const FAULT_KINDS = ['power-cut', 'process-kill', 'crash-states', 'move-leader', 'pause', 'partition', 'slow-link', 'disk-full', 'corrupt-file', 'truncate-file', 'lost-write', 'read-error'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** harness/faults/registry.ts: what a target's clusters can do to a broker; a fault kind names the one it needs. */
export const FAULT_ACTIONS = ['kill-broker-process', 'cut-power', 'record-write-log', 'elect-preferred-leader', 'pause-broker-process', 'partition-network', 'shape-lab-network', 'fill-disk', 'change-data-files', 'fail-disk-reads'] as const;
export type FaultAction = (typeof FAULT_ACTIONS)[number];

/** harness/targets/registry.ts: how brokers are started. */
export const TARGET_KINDS = ['process', 'vm', 'kafka', 'external', 'nats'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** harness/drivers/registry.ts: how the load reaches the brokers. */
export const DRIVER_NAMES = ['http', 'kafka', 'nats'] as const;
export type DriverName = (typeof DRIVER_NAMES)[number];

/** harness/disk/on-cut.ts: what a power cut does to a volatile cache's unflushed writes (the live disk and the crash-state builder alike). */
export const ON_CUT_POLICIES = ['drop-unflushed', 'random-subset', 'reorder', 'torn'] as const;
export type OnCutPolicy = (typeof ON_CUT_POLICIES)[number];

/** harness/model/cluster-network.ts: how a cluster's nodes are connected (`cluster.network`). */
export const CLUSTER_NETWORKS = ['loopback', 'namespaces'] as const;
export type ClusterNetwork = (typeof CLUSTER_NETWORKS)[number];
/** What a `cluster.network` (or `network` setting) value must be, for error messages. */
export const CLUSTER_NETWORK_EXPECTED = 'loopback | namespaces (namespaces: each broker its own host, a network namespace on a lab bridge)';

/** harness/targets/data-files.ts: the named sets of a broker's data files a file fault's `files:` can say; each target maps them to its system's names. */
export const DATA_FILE_SETS = ['newest-segment', 'older-segment', 'index', 'checkpoint', 'metadata'] as const;
export type DataFileSetName = (typeof DATA_FILE_SETS)[number];
