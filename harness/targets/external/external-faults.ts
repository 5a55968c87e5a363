// How target external delivers each fault kind: through the scenario's command templates
// (harness/model/external-spec.ts), the kind's own delivery over the Kafka protocol (a planned leader move), or
// not at all. A Record over FaultKind: a new kind is a type error here until it says which. The
// target's capabilities (harness/targets/registry.ts) and `scenario check` read this table; the
// cluster (external-target.ts) runs what it names. Also: the other side of a partition, as the
// {from} placeholder fills it in.
import type { FaultAction, FaultKind } from '../../model/kinds.ts';
import type { FaultScenarioIssue } from '../../model/scenario-issue.ts';
import type { Fault } from '../../model/scenario.ts';
import { parseFrom, peerText, type PartitionPeer } from '../../net/partition-peers.ts';
import { EXTERNAL_LINKS, type ExternalLink, type ExternalSpec, type TemplateName } from '../../model/external-spec.ts';

export type ExternalDelivery =
  /** start runs per victim at the entry's moment; heal (lasting kinds) `duration` later; restart: the victims are down until recovery runs it. */
  | { by: 'templates'; start: TemplateName; heal?: TemplateName; restart?: TemplateName; needs: FaultAction }
  /** The kind's own delivery works against any Kafka cluster (the Admin API). */
  | { by: 'protocol'; needs: FaultAction }
  | { by: 'none'; why: string };

const NO_FILE_TEMPLATE = "its brokers' data dirs are on hosts the lab did not start, and no command template (e.g. a corruptFile over ssh) changes their files yet";

export const EXTERNAL_FAULTS: Record<FaultKind, ExternalDelivery> = {
  'process-kill': { by: 'templates', start: 'kill', restart: 'restart', needs: 'kill-broker-process' },
  // An OS crash without a sync (sysrq b): the host's page cache is lost as in a power cut.
  'power-cut': { by: 'templates', start: 'powerCut', restart: 'restart', needs: 'cut-power' },
  pause: { by: 'templates', start: 'pause', heal: 'resume', needs: 'pause-broker-process' },
  partition: { by: 'templates', start: 'partition', heal: 'heal', needs: 'partition-network' },
  'slow-link': { by: 'none', why: 'no command template caps or drops a real host\'s traffic yet (tc/nft on the node would: give the kind templates first)' },
  'disk-full': { by: 'none', why: "its brokers' disks are not this host's: the lab cannot fill them" },
  'move-leader': { by: 'protocol', needs: 'elect-preferred-leader' },
  'crash-states': { by: 'none', why: "its brokers' disks are not this host's: no write log to build crash states from" },
  'corrupt-file': { by: 'none', why: NO_FILE_TEMPLATE },
  'truncate-file': { by: 'none', why: NO_FILE_TEMPLATE },
  'lost-write': { by: 'none', why: NO_FILE_TEMPLATE },
  'read-error': { by: 'none', why: "its brokers' disks are not this host's: the lab cannot fail their reads" },
};

/** The fault actions target external offers: those of every kind the table delivers. */
export function externalFaultActions(): FaultAction[] {
  return [...new Set(Object.values(EXTERNAL_FAULTS).flatMap((d) => (d.by === 'none' ? [] : [d.needs])))];
}

/** The templates a kind runs on target external (start, heal, restart). */
export function templatesOf(kind: FaultKind): TemplateName[] {
  const d = EXTERNAL_FAULTS[kind];
  return d.by === 'templates' ? [d.start, ...(d.heal ? [d.heal] : []), ...(d.restart ? [d.restart] : [])] : [];
}

/** A partition entry's `links:` as a list (absent: every link). */
export function linksOf(fault: Fault): ExternalLink[] | null {
  const links = (fault as { links?: ExternalLink | ExternalLink[] }).links;
  return links === undefined ? null : Array.isArray(links) ? links : [links];
}

/** A partition entry's `from:` as the partition kind parses it (harness/faults/partition-checks.ts): groups and broker indexes. */
export function fromOf(fault: Fault): PartitionPeer[] {
  const raw = (fault as { from?: unknown }).from;
  if (raw === undefined) return ['rest'];
  // As parsed (groups and { broker }), or as written (a group, an index, a list of them).
  const parsed = Array.isArray(raw) && raw.every((p) => typeof p === 'string' || (typeof p === 'object' && p !== null && 'broker' in p)) ? (raw as PartitionPeer[]) : parseFrom(raw);
  return parsed ?? ['rest'];
}

/**
 * What of a fault entry target external cannot do with this external: block, for `scenario
 * check` (paths under the entry): a template the kind runs is missing; a partition from the
 * controller or the clients (their addresses are not known from Metadata); links without their
 * ports in external.links or a partition template without {ports} to narrow by.
 */
export function externalFaultIssues(fault: Fault, external: Partial<ExternalSpec> | undefined): FaultScenarioIssue[] {
  const d = EXTERNAL_FAULTS[fault.kind];
  if (d.by !== 'templates') return [];
  const out: FaultScenarioIssue[] = [];
  const missing = templatesOf(fault.kind).filter((t) => external?.[t] === undefined);
  if (missing.length) {
    out.push({
      path: ['kind'],
      expected: `external.${missing.join(' and external.')} (argv templates) for a ${fault.kind} fault on target: external (it runs ${templatesOf(fault.kind).join(', ')})`,
      found: `no ${missing.join(', ')} template`,
    });
  }
  if (fault.kind !== 'partition') return out;
  for (const group of fromOf(fault).filter((p) => p === 'controller' || p === 'clients')) {
    out.push({ path: ['from'], expected: `rest | followers | broker indexes on target: external (the ${group === 'controller' ? "KRaft quorum's" : "harness's"} addresses as the brokers see them are not in Metadata)`, found: group as string });
  }
  const links = linksOf(fault);
  if (links) {
    const unknown = links.filter((l) => !external?.links?.[l]);
    if (unknown.length) out.push({ path: ['links'], expected: `external.links.${unknown.join(', external.links.')}: the ports of those listeners, for {ports} (one of ${EXTERNAL_LINKS.join(', ')})`, found: 'no ports for them' });
    if (external?.partition && !external.partition.some((s) => s.includes('{ports}'))) {
      out.push({ path: ['links'], expected: 'a partition template that uses {ports} to narrow the cut to these links', found: `external.partition without {ports}: ${JSON.stringify(external.partition)}` });
    }
  }
  return out;
}

/** A broker as Metadata names it. */
export interface ExternalBroker {
  id: number;
  host: string;
  port: number;
}

/**
 * The other side of a partition of `victims`: `rest` = every other broker; `followers` = the
 * in-sync followers of partition 0's leader (`isr0`, `leader0`) that are not victims; a list =
 * the brokers at those indexes (ids sorted). Throws when the side is empty, or when a broker on it
 * shares a host with a victim (a cut by address cannot separate them).
 */
export function partitionSide(fault: Fault, victims: readonly number[], brokers: readonly ExternalBroker[], partition0: { leader: number; isr: number[] } | null): ExternalBroker[] {
  const from = fromOf(fault);
  const sides = from.map((peer): ExternalBroker[] => {
    if (typeof peer === 'object') return brokers[peer.broker] ? [brokers[peer.broker]!] : [];
    if (peer === 'rest') return brokers.filter((b) => !victims.includes(b.id));
    if (peer === 'followers') {
      if (!partition0) throw new Error('partition from followers: partition 0 has no leader at the moment of the fault');
      return brokers.filter((b) => b.id !== partition0.leader && partition0.isr.includes(b.id));
    }
    throw new Error(`partition from ${peer}: not deliverable on target external (refused at scenario check)`);
  });
  const side = [...new Map(sides.flat().filter((b) => !victims.includes(b.id)).map((b) => [b.id, b])).values()].sort((a, b) => a.id - b.id);
  if (side.length === 0) throw new Error(`partition of broker(s) ${victims.join(', ')} from ${from.map(peerText).join(', ')}: the other side is empty`);
  for (const v of brokers.filter((b) => victims.includes(b.id))) {
    const shared = side.find((b) => b.host === v.host);
    if (shared) throw new Error(`partition: brokers ${v.id} and ${shared.id} share host ${v.host}; a cut by address cannot separate them`);
  }
  return side;
}

/** {ports}: the ports of the entry's links, space-separated ('' for all traffic). */
export function linkPorts(fault: Fault, external: ExternalSpec): string {
  const links = linksOf(fault);
  if (!links) return '';
  return [...new Set(links.flatMap((l) => external.links?.[l] ?? []))].join(' ');
}
