// Applying and healing a slow link on one node (what: slow-link.ts). Heal tolerates what is
// already gone (a qdisc never added or removed, a chain deleted), so it is idempotent.
import { NODE_VETH, type LabNode } from './lab-names.ts';
import { healLossRules, lossRules, tbfArgs, type SlowLinkSpec } from './slow-link.ts';
import { mustRun, netTool, nftIn, runTool } from './net-tools.ts';

/** tc on the node's end of the veth (inside its namespace) or on the host's end. */
function tcArgs(node: LabNode, end: 'node' | 'host', args: string[]): string[] {
  return end === 'node' ? ['-n', node.netns, ...args] : args;
}

export async function applySlowLink(node: LabNode, spec: SlowLinkSpec): Promise<void> {
  const tc = netTool('tc');
  if (spec.rateMbit !== undefined) {
    await mustRun(`rate cap on node ${node.index}'s ${NODE_VETH}`, tc, tcArgs(node, 'node', tbfArgs(NODE_VETH, spec.rateMbit)));
    await mustRun(`rate cap on ${node.hostVeth}`, tc, tcArgs(node, 'host', tbfArgs(node.hostVeth, spec.rateMbit)));
  }
  if (spec.lossPercent !== undefined) await nftIn(node.netns, lossRules(spec.lossPercent), `loss on node ${node.index}`);
}

const ALREADY_GONE = /handle of zero|No such file or directory|Cannot find device|Invalid handle/;

export async function healSlowLink(node: LabNode, spec: SlowLinkSpec): Promise<void> {
  const problems: string[] = [];
  if (spec.rateMbit !== undefined) {
    for (const [end, dev] of [['node', NODE_VETH], ['host', node.hostVeth]] as const) {
      const r = await runTool(netTool('tc'), tcArgs(node, end, ['qdisc', 'del', 'dev', dev, 'root']));
      if (!r.ok && !ALREADY_GONE.test(r.output)) problems.push(`tc qdisc del dev ${dev} root: ${r.output}`);
    }
  }
  if (spec.lossPercent !== undefined) {
    await nftIn(node.netns, healLossRules(), `heal of loss on node ${node.index}`).catch((err: Error) => {
      if (!ALREADY_GONE.test(err.message)) problems.push(err.message);
    });
  }
  if (problems.length) throw new Error(`heal of the slow link on node ${node.index}: ${problems.join('; ')}`);
}
