// What the lab measured for a durability class: the cells of runs under results/ (and, where
// none did, the shipped scenarios that would) whose settings match a topic's, with the
// acknowledged records they lost per fault and their throughput. A cell matches on acks, the
// flush policy's kind and whether there is more than one replica; the settings it differs in
// besides (RF, min ISR, flush interval, unclean election) are named, never hidden. Cells on a
// disk that ignores FLUSH are left out: they measure a lying drive, not the settings.
import { SETTINGS, type SettingValue } from '../scenario/settings.ts';
import { resolveSettings } from '../model/settings.ts';
import type { CellResult, RunResult } from '../results/types.ts';
import type { Scenario } from '../model/scenario.ts';
import type { Acks, FlushPolicy } from '../../engine/settings/values.ts';
import { formatFlushPolicy } from '../../engine/settings/values.ts';
import { median } from '../../engine/common/stats.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { DEFAULT_TARGET, systemOfTarget } from '../targets/registry.ts';

/** The system a cell measured (durolab, kafka, ...), as the target registry names it (harness/results/cell-target.ts). */
export type LabSystem = string;

export interface CellFacts {
  system: LabSystem;
  acks: Acks;
  replicationFactor: number;
  minInsyncReplicas: number;
  flush: FlushPolicy;
  unclean: boolean;
  /** The scenario's first fault, or null (a performance cell). */
  fault: { kind: string; target: string } | null;
  /** vm.disk.flush: ignored (a drive that drops FLUSH). */
  lyingDisk: boolean;
}

export interface ClassKey {
  acks: Acks;
  replicationFactor: number;
  minInsyncReplicas: number;
  flush: FlushPolicy;
  unclean: boolean;
}

export interface Evidence {
  scenario: string;
  runId: string;
  cell: string;
  system: LabSystem;
  fault: { kind: string; target: string } | null;
  /** Fault cells: acknowledged records lost per trial (or per crash state: crashStates). */
  lost: { min: number; median: number; max: number; count: number; unit: 'trial' | 'crash state' } | null;
  /** Acknowledged records per trial (median), the denominator of `lost`. */
  acked: number | null;
  recordsPerSec: number | null;
  /** The settings this cell has that the topic does not ("min ISR 2 there"). */
  differs: string[];
  /** run.json path relative to the results dir. */
  runFile: string;
}

type Raw = {
  cluster?: { brokers?: number; replicationFactor?: number; minInsyncReplicas?: number };
  settings?: Record<string, unknown>;
  faults?: Array<{ kind?: string; target?: unknown }>;
  vm?: { disk?: { flush?: string } };
};

function normalized(params: Record<string, unknown>): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const [k, v] of Object.entries(params)) {
    const s = SETTINGS[k];
    if (!s) continue;
    try {
      out[k] = s.parse(v) as SettingValue;
    } catch {
      // an older run.json's value the registry no longer takes: the default stands in
    }
  }
  return out;
}

function victimText(t: unknown): string {
  if (t === 'leader' || t === 'all') return t;
  if (t && typeof t === 'object' && 'broker' in t) return `broker ${String((t as { broker: unknown }).broker)}`;
  if (t && typeof t === 'object' && 'brokers' in t) return `brokers ${String((t as { brokers: unknown }).brokers)}`;
  return String(t ?? 'all');
}


function facts(raw: Raw, params: Record<string, unknown>, target: string | undefined): CellFacts {
  const brokers = raw.cluster?.brokers ?? 1;
  const minIsr = raw.cluster?.minInsyncReplicas ?? 1;
  const s = resolveSettings({ ...normalized(raw.settings ?? {}), ...normalized(params) }, minIsr);
  const f = raw.faults?.[0];
  const diskFlush = params['vm.disk.flush'] ?? raw.vm?.disk?.flush;
  return {
    system: systemOfTarget(target ?? DEFAULT_TARGET),
    acks: s.acks,
    // The cell's replication.factor setting overrides the cluster's (scenario/cell-cluster.ts).
    replicationFactor: typeof s.values['replication.factor'] === 'number' ? s.values['replication.factor'] : (raw.cluster?.replicationFactor ?? brokers),
    minInsyncReplicas: s.minInsyncReplicas,
    flush: s.flush,
    unclean: s.uncleanLeaderElectionEnable,
    fault: f?.kind ? { kind: f.kind, target: victimText(f.target) } : null,
    lyingDisk: diskFlush === 'ignored',
  };
}

export function factsOfRunCell(run: RunResult, cell: CellResult): CellFacts {
  return facts((run.scenario.raw ?? {}) as Raw, cell.params, cellTargetName(run, cell));
}

export function factsOfScenarioCell(scenario: Scenario, params: Record<string, SettingValue>): CellFacts {
  return facts((scenario.raw ?? {}) as Raw, params, (params.target as string | undefined) ?? scenario.target);
}

/** null: the cell cannot speak for the class; otherwise what it differs in (empty: the same settings). */
export function differences(k: ClassKey, c: CellFacts): string[] | null {
  if (c.lyingDisk) return null;
  if (String(c.acks) !== String(k.acks)) return null;
  if (c.flush.kind !== k.flush.kind) return null;
  if ((c.replicationFactor > 1) !== (k.replicationFactor > 1)) return null;
  const d: string[] = [];
  if (c.replicationFactor !== k.replicationFactor) d.push(`RF ${c.replicationFactor} there`);
  if (c.minInsyncReplicas !== k.minInsyncReplicas) d.push(`min ISR ${c.minInsyncReplicas} there`);
  if (formatFlushPolicy(c.flush) !== formatFlushPolicy(k.flush)) d.push(`flush ${formatFlushPolicy(c.flush)} there`);
  if (c.unclean !== k.unclean) d.push(`unclean election ${c.unclean ? 'on' : 'off'} there`);
  return d;
}

function spread(values: number[]): { min: number; median: number; max: number } {
  return { min: Math.min(...values), median: median(values) ?? 0, max: Math.max(...values) };
}

function evidenceOf(run: RunResult, cell: CellResult, f: CellFacts, differs: string[], runFile: string): Evidence {
  let lost: Evidence['lost'] = null;
  let acked: number | null = null;
  if (cell.crashStates && cell.crashStates.states > 0) {
    const cs = cell.crashStates;
    lost = { min: cs.lostMin, median: cs.lostMedian, max: cs.lostMax, count: cs.states, unit: 'crash state' };
  } else if (f.fault && cell.trials && cell.trials.length > 0) {
    const trials = cell.trials;
    lost = { ...spread(trials.map((t) => t.ledger.ackedLost)), count: trials.length, unit: 'trial' };
    acked = median(trials.map((t) => t.ledger.acked));
  }
  const rps = cell.throughput?.recordsPerSec;
  return {
    scenario: run.scenario.name,
    runId: run.runId,
    cell: cell.id,
    system: f.system,
    fault: f.fault,
    lost,
    acked,
    recordsPerSec: !f.fault && typeof rps === 'number' && rps > 0 ? rps : null,
    differs,
    runFile,
  };
}

/**
 * The matching cells of each scenario's newest run that has any (runs: newest first), the
 * closest first (fewest differences), faults before performance cells.
 */
export function findEvidence(k: ClassKey, runs: Array<{ run: RunResult; file: string }>): Evidence[] {
  const seen = new Set<string>();
  const out: Evidence[] = [];
  for (const { run, file } of runs) {
    if (seen.has(run.scenario.name)) continue;
    const found: Evidence[] = [];
    for (const cell of run.cells) {
      if (cell.status !== 'ok' && cell.status !== 'interrupted') continue;
      const f = factsOfRunCell(run, cell);
      const d = differences(k, f);
      if (d === null) continue;
      const e = evidenceOf(run, cell, f, d, file);
      if (e.lost === null && e.recordsPerSec === null) continue;
      found.push(e);
    }
    if (found.length === 0) continue;
    seen.add(run.scenario.name);
    out.push(...found);
  }
  return out.sort((a, b) => a.differs.length - b.differs.length || Number(a.lost === null) - Number(b.lost === null));
}

/** Shipped scenarios with a fault cell that matches, for the classes nothing under results/ measured yet. */
export function scenariosToRun(k: ClassKey, scenarios: Scenario[]): Array<{ scenario: string; cells: string[]; differs: string[] }> {
  const out: Array<{ scenario: string; cells: string[]; differs: string[] }> = [];
  for (const s of scenarios) {
    const cells = s.matrix.filter((c) => {
      const f = factsOfScenarioCell(s, c.params);
      return f.fault !== null && differences(k, f) !== null;
    });
    if (cells.length === 0) continue;
    const d = differences(k, factsOfScenarioCell(s, cells[0]!.params)) ?? [];
    out.push({ scenario: s.name, cells: cells.map((c) => c.id), differs: d });
  }
  return out.sort((a, b) => a.differs.length - b.differs.length);
}
