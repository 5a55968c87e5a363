// A slow link: a node's veth capped in bandwidth and/or losing packets at random.
//   rate  tc tbf on both ends of the node's veth pair: the node's end (inside its namespace)
//         shapes what the node sends, the host end (on the bridge) what it receives.
//   loss  nft in the node's namespace, `numgen random mod 10000 < N drop` on what crosses its
//         veth in either direction (loopback untouched): each packet is lost with probability
//         lossPercent/100, on its way out and again on its way in.
//   delay this kernel has tbf/htb and nf_tables but no netem (`tc qdisc add ... netem` answers
//         "Specified qdisc kind is unknown"): linkDelayProblem() probes for it and says why
//         delay cannot be had, so `scenario check` can refuse `delay:`.
import { NETNS_PREFIX, NODE_TABLE, NODE_VETH } from './lab-names.ts';
import { labNetworkPrerequisiteProblem, netTool, runToolSync } from './net-tools.ts';

export interface SlowLinkSpec {
  /** Bandwidth cap in each direction, megabits per second. */
  rateMbit?: number;
  /** Each packet's chance of being dropped, per cent (0-100, two decimals). */
  lossPercent?: number;
}

export function checkSlowLinkSpec(spec: SlowLinkSpec): void {
  if (spec.rateMbit === undefined && spec.lossPercent === undefined) throw new Error('slow link: neither rateMbit nor lossPercent given');
  if (spec.rateMbit !== undefined && !(Number.isFinite(spec.rateMbit) && spec.rateMbit > 0)) throw new Error(`slow link: rateMbit ${spec.rateMbit} is not a positive number of megabits per second`);
  if (spec.lossPercent !== undefined && !(Number.isFinite(spec.lossPercent) && spec.lossPercent >= 0 && spec.lossPercent <= 100)) throw new Error(`slow link: lossPercent ${spec.lossPercent} is outside 0..100`);
}

/**
 * tc arguments that cap a device at rateMbit: tbf with a bucket of ~10 ms of traffic (at least
 * 16 KiB, so one full-size packet always fits) and 100 ms of queue before it drops.
 */
export function tbfArgs(dev: string, rateMbit: number): string[] {
  const kbit = Math.max(1, Math.round(rateMbit * 1000));
  const burst = Math.max(16 * 1024, Math.ceil((kbit * 1000) / 8 / 100));
  return ['qdisc', 'replace', 'dev', dev, 'root', 'tbf', 'rate', `${kbit}kbit`, 'burst', String(burst), 'latency', '100ms'];
}

export const LOSS_CHAINS = { input: 'loss_in', output: 'loss_out' } as const;

/** The nft script that drops lossPercent of the node's veth traffic, both directions. */
export function lossRules(lossPercent: number): string {
  const threshold = Math.round(lossPercent * 100);
  // numgen's values are 0..9999: 100 % is a plain drop.
  const chance = threshold >= 10000 ? '' : ` numgen random mod 10000 < ${threshold}`;
  const lines = [`add table inet ${NODE_TABLE}`];
  for (const [chain, hook, dev] of [[LOSS_CHAINS.output, 'output', 'oifname'], [LOSS_CHAINS.input, 'input', 'iifname']] as const) {
    lines.push(`add chain inet ${NODE_TABLE} ${chain} { type filter hook ${hook} priority 0; policy accept; }`);
    lines.push(`add rule inet ${NODE_TABLE} ${chain} ${dev} "${NODE_VETH}"${chance} drop`);
  }
  return `${lines.join('\n')}\n`;
}

export function healLossRules(): string {
  return `delete chain inet ${NODE_TABLE} ${LOSS_CHAINS.output}\ndelete chain inet ${NODE_TABLE} ${LOSS_CHAINS.input}\n`;
}

let delayProblem: string | null | undefined;
let probeSeq = 0;

/**
 * Why a link delay cannot be applied on this host (null when it can): probes `tc qdisc add ...
 * netem` on the loopback of a throwaway namespace (named like a lab's, so a sweep removes it if
 * this process dies meanwhile). Cached for the process.
 */
export function linkDelayProblem(): string | null {
  if (delayProblem !== undefined) return delayProblem;
  const missing = labNetworkPrerequisiteProblem();
  if (missing) return (delayProblem = `delay cannot be probed: ${missing}`);
  const ns = `${NETNS_PREFIX}${process.pid}-probe${probeSeq++}`;
  const ip = netTool('ip');
  const add = runToolSync(ip, ['netns', 'add', ns]);
  if (!add.ok) return (delayProblem = `delay cannot be probed: ip netns add ${ns} failed: ${add.output}`);
  try {
    const r = runToolSync(netTool('tc'), ['-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
    delayProblem = r.ok
      ? null
      : `this kernel has no netem qdisc (tc qdisc add ... netem: ${r.output.replace(/^Error: /, '').replace(/\.$/, '')}): a link delay cannot be applied; rate (tc tbf) and loss (nft numgen) can`;
  } finally {
    runToolSync(ip, ['netns', 'del', ns]);
  }
  return delayProblem;
}
