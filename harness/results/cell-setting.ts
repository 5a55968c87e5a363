// A cell's setting without the system that ran it: the key that pairs cells of a target axis
// (durolab vs Kafka vs NATS under the same settings) for the frontier (report/frontier.ts) and for
// the comparisons against the lab's own broker (report/recovery-compare.ts, report/throughput-vs-lab.ts).
import type { CellResult, RunResult } from './types.ts';
import { cellTargetName } from './cell-target.ts';

/**
 * The params a setting is named without: target always, and `extra` (the frontier's measure);
 * driver too when the run pairs each target with one driver (a target axis whose systems speak
 * different protocols: the driver then says nothing the target does not).
 */
export function omittedParams(run: RunResult, extra: readonly string[] = []): Set<string> {
  const omit = new Set(['target', ...extra]);
  const driversOf = new Map<string, Set<string>>();
  for (const c of run.cells) {
    if (c.params.driver === undefined) continue;
    const t = cellTargetName(run, c);
    if (!driversOf.has(t)) driversOf.set(t, new Set());
    driversOf.get(t)!.add(String(c.params.driver));
  }
  if (driversOf.size > 0 && [...driversOf.values()].every((d) => d.size === 1)) omit.add('driver');
  return omit;
}

/** `flush=never,acks=1`: the cell's params without the omitted ones; 'base' when none is left. */
export function settingKey(c: Pick<CellResult, 'params'>, omit: ReadonlySet<string>): string {
  const parts = Object.entries(c.params)
    .filter(([k]) => !omit.has(k))
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.join(',') || 'base';
}
