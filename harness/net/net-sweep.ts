// Removing lab objects: a lab's own teardown (close, the exit hook) and the sweep of what a
// SIGKILLed harness left. The sweep rule: an object whose name carries the marker (lab-names.ts)
// and a pid that is no longer a live process is removed; one whose owner lives is left alone,
// however old (other agents and parallel test files run labs at the same time). Processes still
// inside a removed namespace are SIGKILLed first (they would be stranded without a network).
// Everything here is synchronous: the exit hook can run nothing else, and it is quick (one
// `ip -batch`, one nft call, a few milliseconds).
import { existsSync, readdirSync } from 'node:fs';
import { isAlive } from '../vm/process-registry.ts';
import { ownerOf } from './lab-names.ts';
import { netTool, runToolSync } from './net-tools.ts';

export interface LabObjects {
  netns: string[];
  /** Root-namespace links (bridges, host-side veths). */
  links: string[];
  /** Root-namespace inet tables. */
  tables: string[];
}

export function listNetns(): string[] {
  return existsSync('/run/netns') ? readdirSync('/run/netns') : [];
}

export function listLinks(): string[] {
  const r = runToolSync(netTool('ip'), ['-j', 'link', 'show']);
  if (!r.ok) throw new Error(`ip -j link show failed: ${r.output}`);
  return (JSON.parse(r.output) as Array<{ ifname: string }>).map((l) => l.ifname);
}

export function listInetTables(): string[] {
  const r = runToolSync(netTool('nft'), ['-j', 'list', 'tables', 'inet']);
  if (!r.ok) throw new Error(`nft -j list tables inet failed: ${r.output}`);
  const items = (JSON.parse(r.output) as { nftables: Array<{ table?: { name: string } }> }).nftables;
  return items.flatMap((i) => (i.table ? [i.table.name] : []));
}

/** Lab objects present on this host whose owner pid passes `pick`. */
export function labObjects(pick: (owner: number) => boolean): LabObjects {
  const mine = (kind: 'netns' | 'link' | 'nft') => (name: string) => {
    const owner = ownerOf(kind, name);
    return owner !== null && pick(owner);
  };
  return { netns: listNetns().filter(mine('netns')), links: listLinks().filter(mine('link')), tables: listInetTables().filter(mine('nft')) };
}

/** PIDs of processes inside a named network namespace. */
export function pidsInNetns(netns: string): number[] {
  const r = runToolSync(netTool('ip'), ['netns', 'pids', netns]);
  return r.ok ? r.output.split(/\s+/).filter(Boolean).map(Number) : [];
}

/**
 * Removes the given objects (those already gone are fine) and returns what is still there
 * afterwards, as problems. Veths go before their namespaces: deleting a namespace frees its
 * links only later, in the kernel's cleanup work, while deleting a veth removes both ends now.
 */
export function removeLabObjects(objs: LabObjects): string[] {
  for (const ns of objs.netns) {
    for (const pid of pidsInNetns(ns)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  const links = [...objs.links].sort((a, b) => Number(/^dlab\d+b/.test(a)) - Number(/^dlab\d+b/.test(b)));
  const batch = [...links.map((l) => `link del dev ${l}`), ...objs.netns.map((n) => `netns del ${n}`)];
  if (batch.length) runToolSync(netTool('ip'), ['-force', '-batch', '-'], `${batch.join('\n')}\n`);
  if (objs.tables.length) runToolSync(netTool('nft'), ['-f', '-'], objs.tables.map((t) => `delete table inet ${t}\n`).join(''));
  const problems: string[] = [];
  const netnsLeft = new Set(listNetns());
  const linksLeft = new Set(listLinks());
  const tablesLeft = new Set(listInetTables());
  for (const n of objs.netns) if (netnsLeft.has(n)) problems.push(`network namespace ${n} is still there`);
  for (const l of objs.links) if (linksLeft.has(l)) problems.push(`link ${l} is still there`);
  for (const t of objs.tables) if (tablesLeft.has(t)) problems.push(`nft table inet ${t} is still there`);
  return problems;
}

/**
 * Removes the namespaces, links and root nft tables whose owning harness is gone (not a live
 * process); leaves those of live owners. Returns what it removed, one line each.
 */
export function sweepOrphanedLabNetworks(): string[] {
  const orphans = labObjects((owner) => !isAlive(owner));
  const problems = removeLabObjects(orphans);
  if (problems.length) throw new Error(`lab network sweep: ${problems.join('; ')}`);
  return [...orphans.netns.map((n) => `network namespace ${n}`), ...orphans.links.map((l) => `link ${l}`), ...orphans.tables.map((t) => `nft table inet ${t}`)];
}
