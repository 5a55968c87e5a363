// The lab network: each node of a cluster its own host. LabNetwork.create({ nodes }) builds
//   - a bridge in the root namespace with the address <prefix>.1/24: the harness (and its
//     clients) reach every node through it, and nodes reach the harness at that address;
//   - one network namespace per node, joined to the bridge by a veth pair (`eth0` inside, the
//     host end a bridge port), with loopback up and the address <prefix>.(10 + node)/24;
//   - a root-namespace nft table that drops anything the host would forward into or out of the
//     bridge (traffic between bridge ports, which br_netfilter also shows to the forward hook,
//     passes).
// <prefix> is one /24 of 198.18.0.0/15, the range RFC 2544 sets aside for benchmarking, claimed
// per lab so concurrent labs (other processes, parallel tests) never share one (subnet-claim.ts).
// The namespaces have no default route, and the host neither NATs nor forwards for them: a
// node's connect() to any address outside its /24 fails at once with ENETUNREACH ("Network is
// unreachable") and no packet leaves; lab traffic never reaches a real network. IPv6 addresses
// are not generated on lab links (addrgenmode none), so nothing but the lab's IPv4 is spoken.
// Processes start inside a node with argvIn() (`setpriv --pdeathsig KILL -- ip netns exec NS
// ...`: they die with the harness). Faults: partition() (partition.ts) and slowLink()
// (slow-link.ts); each returns a handle whose heal() removes exactly what it added (idempotent),
// healAll() heals everything.
// Nothing outlives the harness: names carry the marker and the owner's pid (lab-names.ts); an
// exit hook removes a lab left open synchronously (a failed trial, a second Ctrl-C), and every
// create() first sweeps what a SIGKILLed harness left: objects whose owner pid is not a live
// process (net-sweep.ts). A live owner's objects are never touched. Targets are wired to it later.
import { findExecutable } from '../vm/prerequisites.ts';
import { pdeathsigArgv } from '../vm/process-registry.ts';
import { labAddresses, labNames, MAX_NODES, NODE_VETH, SUBNET_COUNT, type LabAddresses, type LabNames, type LabNode } from './lab-names.ts';
import { type LabObjects, removeLabObjects, sweepOrphanedLabNetworks } from './net-sweep.ts';
import { labNetworkPrerequisiteProblem, mustRun, netTool, nftIn } from './net-tools.ts';
import { checkPartitionSpec, describePartition, type Endpoint, healRules, partitionPlan, partitionRules, type PartitionSpec } from './partition.ts';
import { applySlowLink, healSlowLink } from './slow-link-apply.ts';
import { checkSlowLinkSpec, type SlowLinkSpec } from './slow-link.ts';
import { claimSubnet, type SubnetClaim } from './subnet-claim.ts';

export interface LabNetworkOptions {
  nodes: number;
  /** Who it is for, in messages ("kafka cluster"). */
  name?: string;
  log?: (line: string) => void;
}

export type { LabNode };

/** A partition or slow link in force. heal() removes exactly its rules; a second call does nothing. */
export interface ActiveNetFault {
  readonly description: string;
  readonly healed: boolean;
  heal(): Promise<void>;
}

const live = new Set<LabNetwork>();
let exitHook = false;
let labSeq = 0;

/** A heal that runs once at a time and, once it succeeded, never again. */
function activeFault(description: string, doHeal: () => Promise<void>, onHealed: () => void): ActiveNetFault {
  let healing: Promise<void> | null = null;
  const f = {
    description,
    healed: false,
    heal(): Promise<void> {
      if (f.healed) return Promise.resolve();
      healing ??= doHeal().then(
        () => {
          f.healed = true;
          onHealed();
        },
        (err: unknown) => {
          healing = null;
          throw err;
        },
      );
      return healing;
    },
  };
  return f;
}

export class LabNetwork {
  private readonly faults = new Set<ActiveNetFault>();
  private readonly slowLinks = new Map<number, ActiveNetFault>();
  private partitionSeq = 0;
  private closed = false;
  readonly nodes: readonly LabNode[];

  private constructor(
    readonly name: string,
    private readonly names: LabNames,
    private readonly addresses: LabAddresses,
    private readonly claim: SubnetClaim,
    private readonly log: (line: string) => void,
  ) {
    this.nodes = names.netns.map((netns, index) => ({ index, netns, address: addresses.node(index), hostVeth: names.hostVeths[index]! }));
  }

  /** The lab's /24, e.g. 198.18.7.0/24. */
  get subnet(): string {
    return this.addresses.subnet;
  }

  /** The bridge's address: where nodes reach the harness. */
  get harnessAddress(): string {
    return this.addresses.harness;
  }

  get bridge(): string {
    return this.names.bridge;
  }

  /** The root-namespace inet table that keeps the host from forwarding lab traffic. */
  get nftTable(): string {
    return this.names.table;
  }

  static async create(opts: LabNetworkOptions): Promise<LabNetwork> {
    const name = opts.name ?? 'lab network';
    const log = opts.log ?? (() => undefined);
    const why = labNetworkPrerequisiteProblem();
    if (why) throw new Error(`${name}: ${why}`);
    if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > MAX_NODES) throw new Error(`${name}: nodes ${opts.nodes} is not a whole number 1..${MAX_NODES}`);
    for (const s of sweepOrphanedLabNetworks()) log(`lab network: removed ${s}, left by a harness that is gone`);
    const lab = labSeq++;
    const claim = await claimSubnet((process.pid * 7 + lab) % SUBNET_COUNT);
    const net = new LabNetwork(name, labNames(process.pid, lab, opts.nodes), labAddresses(claim.index), claim, log);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const l of live) l.closeSync();
      });
    }
    live.add(net);
    try {
      await net.build();
    } catch (err) {
      net.closeSync();
      throw err;
    }
    log(`${name}: bridge ${net.bridge} ${net.harnessAddress}/24; ${net.nodes.map((n) => `node ${n.index} ${n.address} in ${n.netns}`).join(', ')}`);
    return net;
  }

  private async build(): Promise<void> {
    const { bridge, table } = this.names;
    const ip = netTool('ip');
    const alias = (what: string) => `durolab:pid=${process.pid}:${what}`;
    const root = [`link add ${bridge} type bridge`, `link set dev ${bridge} alias ${alias(this.name.replace(/\W+/g, '-'))}`, `link set dev ${bridge} addrgenmode none`, `addr add ${this.harnessAddress}/24 dev ${bridge}`, `link set dev ${bridge} up`];
    for (const n of this.nodes) {
      root.push(`netns add ${n.netns}`, `link add ${n.hostVeth} type veth peer name ${NODE_VETH} netns ${n.netns}`, `link set dev ${n.hostVeth} alias ${alias(`node${n.index}`)}`);
      root.push(`link set dev ${n.hostVeth} addrgenmode none`, `link set dev ${n.hostVeth} master ${bridge} up`);
    }
    await mustRun(`${this.name}: building the lab network`, ip, ['-batch', '-'], `${root.join('\n')}\n`);
    await Promise.all(
      this.nodes.map((n) =>
        mustRun(`${this.name}: node ${n.index}'s namespace`, ip, ['-n', n.netns, '-batch', '-'], `link set dev lo up\nlink set dev ${NODE_VETH} addrgenmode none\naddr add ${n.address}/24 dev ${NODE_VETH}\nlink set dev ${NODE_VETH} up\n`),
      ),
    );
    const noForward = [`add table inet ${table}`, `add chain inet ${table} lab_forward { type filter hook forward priority 0; policy accept; }`, `add rule inet ${table} lab_forward iifname "${bridge}" oifname != "${bridge}" drop`, `add rule inet ${table} lab_forward oifname "${bridge}" iifname != "${bridge}" drop`];
    await mustRun(`${this.name}: the no-forwarding table`, netTool('nft'), ['-f', '-'], `${noForward.join('\n')}\n`);
  }

  private node(index: number, what: string): LabNode {
    const n = this.nodes[index];
    if (!n) throw new Error(`${this.name}: ${what}: no node ${index} (nodes 0..${this.nodes.length - 1})`);
    return n;
  }

  private ensureOpen(what: string): void {
    if (this.closed) throw new Error(`${this.name}: ${what} after close()`);
  }

  /** [file, argv] that run `file argv` inside node `index`'s namespace, killed with the harness. */
  argvIn(index: number, file: string, argv: readonly string[]): [string, string[]] {
    return pdeathsigArgv(findExecutable('setpriv'), netTool('ip'), ['netns', 'exec', this.node(index, 'argvIn').netns, file, ...argv]);
  }

  /** Cuts side a from side b (both directions), on `ports` only when given. */
  async partition(spec: PartitionSpec): Promise<ActiveNetFault> {
    this.ensureOpen('partition');
    checkPartitionSpec(spec, this.nodes.length);
    const id = this.partitionSeq++;
    const plan = partitionPlan(spec, (e: Endpoint) => (e === 'harness' ? this.harnessAddress : this.node(e, 'partition').address));
    const healAll = async () => {
      const results = await Promise.allSettled([...plan.keys()].map((n) => nftIn(this.nodes[n]!.netns, healRules(id), `${this.name}: heal of partition ${id} on node ${n}`)));
      const failed = results.flatMap((r) => (r.status === 'rejected' && !/No such file or directory/.test(String(r.reason)) ? [String(r.reason)] : []));
      if (failed.length) throw new Error(failed.join('; '));
    };
    const fault = activeFault(`partition ${id}: ${describePartition(spec)}`, healAll, () => this.faults.delete(fault));
    this.faults.add(fault);
    try {
      await Promise.all([...plan].map(([n, peers]) => nftIn(this.nodes[n]!.netns, partitionRules(id, peers, spec.ports), `${this.name}: partition ${id} on node ${n}`)));
    } catch (err) {
      await fault.heal().catch(() => undefined);
      throw err;
    }
    this.log(`${this.name}: ${fault.description}`);
    return fault;
  }

  /** Caps node `index`'s link and/or drops a share of its packets; one slow link per node at a time. */
  async slowLink(index: number, spec: SlowLinkSpec): Promise<ActiveNetFault> {
    this.ensureOpen('slowLink');
    checkSlowLinkSpec(spec);
    const n = this.node(index, 'slowLink');
    if (this.slowLinks.has(index)) throw new Error(`${this.name}: node ${index} already has a slow link (${this.slowLinks.get(index)!.description}); heal it first`);
    const description = `slow link on node ${index}:${spec.rateMbit !== undefined ? ` ${spec.rateMbit} Mbit/s` : ''}${spec.lossPercent !== undefined ? ` ${spec.lossPercent} % loss` : ''}`;
    const fault = activeFault(description, () => healSlowLink(n, spec), () => {
      this.faults.delete(fault);
      this.slowLinks.delete(index);
    });
    this.faults.add(fault);
    this.slowLinks.set(index, fault);
    try {
      await applySlowLink(n, spec);
    } catch (err) {
      await fault.heal().catch(() => undefined);
      throw new Error(`${this.name}: ${description}: ${(err as Error).message}`);
    }
    this.log(`${this.name}: ${description}`);
    return fault;
  }

  /** Faults in force. */
  get activeFaults(): ActiveNetFault[] {
    return [...this.faults];
  }

  /** Heals every partition and slow link in force; throws with every heal that failed. */
  async healAll(): Promise<void> {
    const results = await Promise.allSettled([...this.faults].map((f) => f.heal()));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    if (failed.length) throw new Error(`${this.name}: heal: ${failed.join('; ')}`);
  }

  private objects(): LabObjects {
    return { netns: this.nodes.map((n) => n.netns), links: [this.bridge, ...this.nodes.map((n) => n.hostVeth)], tables: [this.names.table] };
  }

  /** Heals what is in force, then removes the namespaces (and what runs in them), veths, bridge and table. */
  async close(): Promise<void> {
    if (this.closed) return;
    const problems: string[] = [];
    await this.healAll().catch((err: Error) => problems.push(err.message));
    this.closeSync(problems);
    if (problems.length) throw new Error(`${this.name}: closing the lab network: ${problems.join('; ')}`);
  }

  /** Synchronous removal (the exit hook): no heal first, the namespaces take their rules along. */
  closeSync(problems: string[] = []): void {
    if (this.closed) return;
    this.closed = true;
    problems.push(...removeLabObjects(this.objects()));
    this.claim.release();
    live.delete(this);
  }
}
