// Names and addresses of the lab network. Every kernel object carries the marker and the pid of
// the harness that owns it, so a sweep can tell a dead harness's leftovers from a live one's:
//   network namespace  durolab-<pid>-<lab>-n<node>   (ip netns: names up to 255 bytes)
//   bridge             dlab<pid>b<lab>               (interface names: 15 bytes at most, so a
//   host-side veth     dlab<pid>v<seq>                shorter marker; the ifalias says which lab/node)
//   root nft table     inet durolab_<pid>_<lab>      (nft identifiers take no '-')
// <lab> and <seq> are per-process counters in base 36; pids are decimal (pid_max <= 4194304: 7 digits).

export const NETNS_PREFIX = 'durolab-';
export const LINK_PREFIX = 'dlab';
export const NFT_TABLE_PREFIX = 'durolab_';
/** The nft table each node namespace holds its partition and loss chains in. */
export const NODE_TABLE = 'durolab';
/** The node's end of its veth pair, inside its namespace. */
export const NODE_VETH = 'eth0';

const NETNS_OWNER = /^durolab-(\d+)-/;
const LINK_OWNER = /^dlab(\d+)[bv][0-9a-z]+$/;
const NFT_OWNER = /^durolab_(\d+)_/;

/** The owning pid a lab object's name carries, or null when the name is not the lab's. */
export function ownerOf(kind: 'netns' | 'link' | 'nft', name: string): number | null {
  const m = (kind === 'netns' ? NETNS_OWNER : kind === 'link' ? LINK_OWNER : NFT_OWNER).exec(name);
  return m ? Number(m[1]) : null;
}

export interface LabNode {
  index: number;
  netns: string;
  address: string;
  /** The veth end on the bridge, in the root namespace. */
  hostVeth: string;
}

export interface LabNames {
  bridge: string;
  table: string;
  /** Per node (index = node). */
  netns: string[];
  hostVeths: string[];
}

/** Host-side veth numbers never repeat within a process. */
let vethSeq = 0;

export function labNames(pid: number, lab: number, nodes: number): LabNames {
  const l = lab.toString(36);
  const names: LabNames = {
    bridge: `${LINK_PREFIX}${pid}b${l}`,
    table: `${NFT_TABLE_PREFIX}${pid}_${l}`,
    netns: Array.from({ length: nodes }, (_, n) => `${NETNS_PREFIX}${pid}-${l}-n${n}`),
    hostVeths: Array.from({ length: nodes }, () => `${LINK_PREFIX}${pid}v${(vethSeq++).toString(36)}`),
  };
  for (const n of [names.bridge, ...names.hostVeths]) if (n.length > 15) throw new Error(`lab network: interface name ${n} is longer than the kernel's 15 bytes (pid ${pid}, lab ${lab})`);
  return names;
}

/** 198.18.0.0/15 (RFC 2544's benchmarking range) holds 512 /24s; lab subnet i is the i-th. */
export const SUBNET_COUNT = 512;

export interface LabAddresses {
  subnet: string;
  prefix: string;
  /** The bridge's address in the root namespace: where nodes reach the harness. */
  harness: string;
  node: (node: number) => string;
}

/** Node addresses start at .10 (node 0 = .10); .2-.9 stay free for harness-side helpers. */
export const FIRST_NODE_HOST = 10;
export const MAX_NODES = 254 - FIRST_NODE_HOST;

export function labAddresses(subnetIndex: number): LabAddresses {
  if (!Number.isInteger(subnetIndex) || subnetIndex < 0 || subnetIndex >= SUBNET_COUNT) throw new Error(`lab network: subnet index ${subnetIndex} outside 0..${SUBNET_COUNT - 1}`);
  const prefix = `198.${18 + (subnetIndex >> 8)}.${subnetIndex & 255}`;
  return { subnet: `${prefix}.0/24`, prefix, harness: `${prefix}.1`, node: (n) => `${prefix}.${FIRST_NODE_HOST + n}` };
}
