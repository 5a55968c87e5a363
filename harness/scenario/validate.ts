// From YAML text to a Scenario: syntax, then each section's schema, then the relations
// between sections (the client settings', faults' and expectations' own checks are in
// client-settings-checks.ts, fault-checks.ts and expectation-checks.ts). Every problem found
// is collected; any problem throws one ScenarioError listing them all, so nothing starts on a
// bad file.

import type * as z from 'zod';
import type { ScenarioIssue } from './errors.ts';
import { ScenarioError, describeFound, unknownKeyExpected } from './errors.ts';
import { checkExpectations } from './expectation-checks.ts';
import { checkFaults } from './fault-checks.ts';
import { checkFaultSets } from './fault-set-checks.ts';
import { applyTargetSettings } from './target-settings.ts';
import { consumerSpecs } from '../model/consumer-spec.ts';
import { checkConsumers } from './consumer-checks.ts';
import { checkVmBlock } from './vm-block-checks.ts';
import { batchBytes, checkDiskVolume } from './disk-volume-check.ts';
import { expandMatrix, type MatrixSpec } from './matrix.ts';
import { SECTION_SCHEMAS, TOP_LEVEL_KEYS } from './schema.ts';
import { DEFAULT_TARGET, TARGET_KINDS, capabilitiesOf } from '../targets/registry.ts';
import { partitionRefusal } from '../targets/partition-limits.ts';
import { SETTINGS, SETTING_NAMES, SYSCTL_EXCLUSIVE, hostGlobalWrite, isSysctl, type SettingValue } from './settings.ts';
import { SourceFile } from './source.ts';
import { cellId, cellLabel } from './matrix.ts';
import { cellTargetKind, targetKindOf, type TargetAxisValue } from './target-axis.ts';
import { checkImpliedNamespaces, checkLabNetwork } from './network-checks.ts';
import { cellReplicationFactors, checkReplicationFactor } from './replication-checks.ts';
import { needsLabNetwork } from '../faults/registry.ts';
import { DRIVER_NAMES } from '../drivers/registry.ts';
import { checkClientSettings } from './client-settings-checks.ts';
import type { TargetKind } from '../targets/registry.ts';
import type { MatrixCell } from '../model/scenario.ts';
import { everyFaultEntry, type Scenario } from '../model/scenario.ts';

export interface CompileOptions {
  /** Scenario name when the file has no `name:` (the file's stem). */
  defaultName: string;
  /** DURATION override, seconds. */
  durationSec?: number;
  /** REPEAT override. */
  repeat?: number;
  /** DRIVER override (--driver): workload.driver as if the file said it. */
  driver?: string;
}

/** Each section's parsed value, absent when that section had problems. */
type Sections = { [K in keyof typeof SECTION_SCHEMAS]?: z.output<(typeof SECTION_SCHEMAS)[K]> };

function checkOverrides(opts: CompileOptions): void {
  if (opts.durationSec !== undefined && !(Number.isFinite(opts.durationSec) && opts.durationSec > 0)) {
    throw new Error(`DURATION: expected a number of seconds > 0, found ${describeFound(opts.durationSec)}`);
  }
  if (opts.repeat !== undefined && !(Number.isInteger(opts.repeat) && opts.repeat >= 1)) {
    throw new Error(`REPEAT: expected an integer >= 1, found ${describeFound(opts.repeat)}`);
  }
  if (opts.driver !== undefined && !(DRIVER_NAMES as readonly string[]).includes(opts.driver)) {
    throw new Error(`DRIVER: expected ${DRIVER_NAMES.join(' | ')}, found ${describeFound(opts.driver)}`);
  }
}

/**
 * The overrides as typed on a command line (durolab bench / scenario --duration, --repeat,
 * --driver; make's DURATION, REPEAT, DRIVER): numbers parsed, every one checked, and an error
 * that names the flag and quotes what was typed.
 */
export function parseOverrideFlags(flags: { duration?: string; repeat?: string; driver?: string }): Pick<CompileOptions, 'durationSec' | 'repeat' | 'driver'> {
  const out: Pick<CompileOptions, 'durationSec' | 'repeat' | 'driver'> = {};
  const numeric = (v: string) => (/^\s*[0-9.eE+]+\s*$/.test(v) ? Number(v) : NaN);
  if (flags.duration !== undefined) {
    const n = numeric(flags.duration);
    if (!(Number.isFinite(n) && n > 0)) throw new Error(`--duration (DURATION): expected a number of seconds > 0, found '${flags.duration}'`);
    out.durationSec = n;
  }
  if (flags.repeat !== undefined) {
    const n = numeric(flags.repeat);
    if (!(Number.isInteger(n) && n >= 1)) throw new Error(`--repeat (REPEAT): expected a whole number >= 1, found '${flags.repeat}'`);
    out.repeat = n;
  }
  if (flags.driver !== undefined) {
    if (!(DRIVER_NAMES as readonly string[]).includes(flags.driver)) throw new Error(`--driver (DRIVER): expected ${DRIVER_NAMES.join(' | ')}, found '${flags.driver}'`);
    out.driver = flags.driver;
  }
  return out;
}

export function compileScenario(text: string, file: string, opts: CompileOptions): Scenario {
  checkOverrides(opts);
  const src = new SourceFile(file, text);
  if (src.doc.errors.length > 0) throw new ScenarioError(src.syntaxIssues());

  const raw: unknown = src.doc.toJS({ maxAliasCount: 100 });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ScenarioError([
      src.issue([], `a mapping with question, cluster, settings, matrix, workload, ... (a scenario)`, raw === null || raw === undefined ? 'an empty file' : describeFound(raw)),
    ]);
  }
  const doc = raw as Record<string, unknown>;
  if (opts.driver !== undefined && typeof doc.workload === 'object' && doc.workload !== null) doc.workload = { ...doc.workload, driver: opts.driver };
  const issues: ScenarioIssue[] = [];

  for (const key of Object.keys(doc)) {
    if (!TOP_LEVEL_KEYS.includes(key)) issues.push(src.issue([key], unknownKeyExpected(key, TOP_LEVEL_KEYS), `'${key}'`, { key: true }));
  }

  const s: Sections = {};
  for (const [key, schema] of Object.entries(SECTION_SCHEMAS)) {
    const r = schema.safeParse(doc[key], { reportInput: true });
    if (r.success) (s as Record<string, unknown>)[key] = r.data;
    else issues.push(...src.zodIssues(r.error.issues, [key]));
  }

  // A misspelt target is reported once, not again through every check that depends on it.
  const targetKnown = s.target !== undefined;
  const target = s.target ?? DEFAULT_TARGET;
  // A target axis (matrix.target) runs each cell on its own target; every check below holds for each.
  const axisTargets = (s.matrix as { target?: TargetAxisValue[] } | undefined)?.target;
  if (axisTargets && doc.target !== undefined) {
    issues.push(src.issue(['target'], 'either target: or matrix.target (a target axis), not both', 'both', { key: true }));
  }
  const kinds: TargetKind[] = axisTargets ? [...new Set(axisTargets.map(targetKindOf))] : [target];
  issues.push(...checkVmBlock(src, doc.vm, targetKnown ? kinds : null));
  // A target with a block of its own (external: its cluster) needs it; no other target takes it.
  if (targetKnown) issues.push(...checkOwnBlocks(src, kinds, doc));

  // Cluster shape.
  let rf: number | undefined;
  if (s.cluster) {
    const c = s.cluster;
    rf = c.replicationFactor ?? c.brokers;
    if (rf > c.brokers) {
      issues.push(src.issue(['cluster', 'replicationFactor'], `at most cluster.brokers (${c.brokers})`, String(rf)));
      rf = undefined;
    } else if (c.minInsyncReplicas > rf) {
      issues.push(src.issue(['cluster', 'minInsyncReplicas'], `at most the replication factor (${rf})`, String(c.minInsyncReplicas)));
    }
  }

  // Settings layers (base, matrix axes, include entries): cross-setting rules.
  const rawMatrix = (typeof doc.matrix === 'object' && doc.matrix !== null ? doc.matrix : {}) as Record<string, unknown>;
  const rawInclude = (Array.isArray(rawMatrix.include) ? rawMatrix.include : []) as unknown[];
  const layers: Array<{ path: PropertyKey[]; values: Record<string, SettingValue[]> }> = [];
  if (s.settings) layers.push({ path: ['settings'], values: mapValues(s.settings, (v) => [v]) });
  // The schema's keys are computed from SETTINGS, so zod cannot type the axes by name.
  const matrixAxes = (s.matrix ?? {}) as Record<string, unknown>;
  const axes: Array<[string, SettingValue[]]> = Object.keys(rawMatrix)
    .filter((k) => SETTINGS[k] && Array.isArray(matrixAxes[k]))
    .map((k) => [k, matrixAxes[k] as SettingValue[]]);
  const includes = (s.matrix?.include ?? []) as Array<Record<string, unknown> & { label?: string }>;
  const excludes = (s.matrix?.exclude ?? []) as Array<Record<string, unknown>>;
  if (s.matrix) {
    layers.push({ path: ['matrix'], values: Object.fromEntries(axes) });
    includes.forEach((entry, i) =>
      layers.push({ path: ['matrix', 'include', i], values: mapValues(settingsOf(entry, rawInclude[i]), (v) => [v]) }),
    );
  }
  let firstSysctl: PropertyKey[] | undefined;
  for (const layer of layers) {
    for (const [name, values] of Object.entries(layer.values)) {
      if (values.some((v) => hostGlobalWrite(name, v) !== null)) firstSysctl ??= [...layer.path, name];
      const diskless = kinds.filter((k) => capabilitiesOf(k).faultDisk === null);
      if (name.startsWith('vm.disk.') && targetKnown && diskless.length) {
        const able = TARGET_KINDS.filter((t) => capabilitiesOf(t).faultDisk !== null).join(' | ');
        issues.push(src.issue([...layer.path, name], `no ${name} on target: ${diskless.join(', ')} (the fault disk's models need target: ${able})`, name, { key: true }));
      }
      if (name === 'min.insync.replicas' && rf !== undefined) {
        values.forEach((v, i) => {
          if (Number(v) > rf) {
            const path = layer.path[0] === 'matrix' && layer.path.length === 1 ? [...layer.path, name, i] : [...layer.path, name];
            issues.push(src.issue(path, `at most the replication factor (${rf})`, String(v)));
          }
        });
      }
    }
    for (const [a, b] of SYSCTL_EXCLUSIVE) {
      if (a in layer.values && b in layer.values) {
        issues.push(
          src.issue([...layer.path, b], `either ${a} or ${b} in one place (writing one makes the kernel zero the other)`, 'both', { key: true }),
        );
      }
    }
  }
  if (targetKnown && capabilitiesOf(target).sysctls === 'host' && firstSysctl && s.requiresRoot !== true) {
    issues.push(
      src.issue(
        firstSysctl,
        `requiresRoot: true at the top of the file (on target: ${target}, vm.* settings and consumer.cache: cold rewrite the host's global sysctls)`,
        `${String(firstSysctl[firstSysctl.length - 1])} without requiresRoot`,
        { key: true },
      ),
    );
  }

  // Matrix cells.
  let cells: Scenario['matrix'] | undefined;
  if (s.matrix) {
    const spec: MatrixSpec = {
      axes,
      include: includes.map((entry, i) => ({ params: settingsOf(entry, rawInclude[i]), label: entry.label })),
      exclude: excludes.filter((e) => e.target === undefined).map((entry) => settingsOf(entry)),
    };
    const { cells: expanded, problems } = expandMatrix(spec);
    for (const p of problems) issues.push(src.issue(p.path, p.expected, p.found, { key: p.key }));
    if (problems.length === 0) cells = axisTargets
        ? crossTargets(axisTargets, expanded.length ? expanded : [{ id: 'base', label: 'base settings', params: {} }], axes.map(([n]) => n))
        : expanded;
    // Exclude entries naming a target drop that target's matching cells (after the targets are crossed).
    excludes.forEach((entry, i) => {
      if (entry.target === undefined || cells === undefined) return;
      if (!axisTargets) {
        issues.push(src.issue(['matrix', 'exclude', i, 'target'], 'a target axis (matrix.target) for an exclude entry to name a target of', String(entry.target), { key: true }));
        return;
      }
      const partial = { ...settingsOf(entry), target: entry.target as SettingValue };
      const bad = Object.keys(partial).filter((k) => k !== 'target' && !axes.some(([n]) => n === k));
      if (bad.length) {
        issues.push(src.issue(['matrix', 'exclude', i, bad[0]!], `a matrix key (${['target', ...axes.map(([n]) => n)].join(', ')})`, `'${bad[0]}'`, { key: true }));
        return;
      }
      const before = cells.length;
      cells = cells.filter((c) => !Object.entries(partial).every(([k, v]) => c.params[k] === v));
      if (cells.length === before) issues.push(src.issue(['matrix', 'exclude', i], 'an entry that matches at least one cell', 'one that matches none'));
      else if (cells.length === 0) issues.push(src.issue(['matrix'], 'at least one cell', 'every cell excluded'));
    });
  } else if (doc.matrix === undefined) {
    cells = [{ id: 'base', label: 'base settings', params: {} }];
  }

  // Settings of one target's cells only (targetSettings:), merged into them.
  if (cells !== undefined || s.targetSettings) {
    const applied = applyTargetSettings(src, s.targetSettings as Record<string, Record<string, SettingValue | undefined>> | undefined, cells ?? [], axisTargets ?? null, axes.map(([n]) => n));
    if (cells !== undefined) cells = applied.cells;
    issues.push(...applied.issues);
    layers.push(...applied.layers);
  }

  // Settings the target has no equivalent for (target: kafka: io direct/dsync, sync fdatasync, ...).
  // With the cells known, a value counts for a target only when one of that target's cells has
  // it (an exclude: entry naming the target takes the value away from it).
  const reaches = (kind: TargetKind, name: string, v: SettingValue): boolean =>
    cells === undefined || cells.some((c) => cellTargetKind(c.params, target) === kind && (c.params[name] ?? (s.settings as Record<string, SettingValue> | undefined)?.[name]) === v);
  for (const kind of targetKnown ? kinds : []) {
    const refuse = capabilitiesOf(kind).refuseSetting;
    if (!refuse) continue;
    for (const layer of layers) {
      for (const [name, values] of Object.entries(layer.values)) {
        values.forEach((v, i) => {
          const why = refuse(name, v);
          if (!why || !reaches(kind, name, v)) return;
          const path = layer.path[0] === 'matrix' && layer.path.length === 1 ? [...layer.path, name, i] : [...layer.path, name];
          issues.push(src.issue(path, `a setting target: ${kind} can honour (${why}; or leave it to other targets with matrix.exclude: [{ target: ..., ${name}: ${String(v)} }])`, `${name}: ${String(v)}`));
        });
      }
    }
  }

  // A cluster this machine cannot hold on a target (the open files its partitions need), for
  // the largest partition count of that target's cells (the partitions setting overrides cluster.partitions).
  for (const kind of targetKnown && s.cluster ? kinds : []) {
    const c = s.cluster!;
    const counts = (cells ?? []).filter((x) => cellTargetKind(x.params, target) === kind).map((x) => Number(x.params.partitions ?? s.settings?.partitions ?? c.partitions));
    const partitions = Math.max(c.partitions, ...counts);
    const ios = new Set([s.settings?.io ?? 'buffered', ...(cells ?? []).filter((x) => cellTargetKind(x.params, target) === kind).map((x) => x.params.io ?? s.settings?.io ?? 'buffered')]);
    const cost = capabilitiesOf(kind).partitionCost;
    // The most replicas any of the target's cells puts on a broker (replication.factor over cluster.replicationFactor).
    const replicationFactor = Math.max(...cellReplicationFactors(c, s.settings as Record<string, SettingValue> | undefined, (cells ?? []).filter((x) => cellTargetKind(x.params, target) === kind)));
    const why = cost ? partitionRefusal(cost, { brokers: c.brokers, partitions, replicationFactor, unbufferedIo: [...ios].some((v) => v !== 'buffered') }) : null;
    const where: PropertyKey[] = partitions === c.partitions ? ['cluster', 'partitions'] : s.matrix && 'partitions' in (s.matrix as object) ? ['matrix', 'partitions'] : ['settings', 'partitions'];
    if (why) issues.push(src.issue(where, `a partition count target: ${kind} can run on this machine (${why})`, String(partitions)));
    const shape = capabilitiesOf(kind).refuseCluster?.({ brokers: c.brokers, partitions, replicationFactor });
    if (shape) issues.push(src.issue(where, `a cluster target: ${kind} can run (${shape})`, String(partitions)));
  }

  if (s.cluster) issues.push(...checkReplicationFactor({ src, cluster: s.cluster, target, baseSettings: s.settings as Record<string, SettingValue> | undefined, cells }));

  // A partition or slow-link fault acts on the lab network: its cells run in namespaces.
  const labFault = everyFaultEntry(s).find((f) => needsLabNetwork(f.kind));
  if (labFault) issues.push(...checkImpliedNamespaces(src, labFault.kind, doc, cells));
  issues.push(
    ...checkLabNetwork({
      src,
      kinds: targetKnown ? kinds : null,
      target,
      // Not the implied namespaces: a target without the lab network cannot deliver the fault either, and fault-checks.ts says why there.
      network: s.cluster?.network,
      baseSettings: s.settings as Record<string, SettingValue> | undefined,
      cells,
      matrixHasNetwork: s.matrix !== undefined && 'network' in (s.matrix as object),
    }),
  );

  // measure: loss runs the scenario's fault; without one there is nothing to measure loss under.
  const measures = new Set([s.settings?.measure, ...(cells ?? []).map((c) => c.params.measure)].filter((v) => v !== undefined));
  if (measures.has('loss') && s.faults !== undefined && s.faults.length === 0) {
    issues.push(src.issue(s.matrix && 'measure' in (s.matrix as object) ? ['matrix', 'measure'] : ['settings', 'measure'], 'a faults: entry for the measure: loss cells to run under', 'no faults'));
  }

  // The driver: one the target can talk to (the target's first when the file names none).
  const rawWorkload = (typeof doc.workload === 'object' && doc.workload !== null ? doc.workload : {}) as Record<string, unknown>;
  let driver = s.workload?.driver;
  // The targets of the cells that run with workload.driver (a driver setting or axis gives the others theirs).
  const baseDriver = (s.settings as Record<string, SettingValue> | undefined)?.driver;
  const workloadKinds = cells === undefined ? kinds : [...new Set(cells.filter((c) => c.params.driver === undefined && baseDriver === undefined).map((c) => cellTargetKind(c.params, target)))];
  if (s.workload && targetKnown && workloadKinds.length > 0) {
    // Drivers every target of those cells can talk to.
    const can = DRIVER_NAMES.filter((d) => workloadKinds.every((k) => capabilitiesOf(k).drivers.includes(d)));
    if (rawWorkload.driver === undefined && !can.includes(s.workload.driver) && can.length > 0) driver = can[0]!;
    else if (!can.includes(s.workload.driver)) {
      issues.push(src.issue(['workload', 'driver'], `a driver target: ${workloadKinds.join(', ')} can talk to (${can.join(' | ') || 'none in common'})`, `'${s.workload.driver}'`));
    }
  }
  const producer = s.workload?.producer;
  issues.push(
    ...checkClientSettings({
      src,
      layers,
      kinds: targetKnown ? kinds : null,
      scenarioTarget: target,
      driver,
      producer,
      pipelining: s.workload?.pipelining,
      baseSettings: s.settings as Record<string, SettingValue> | undefined,
      cells,
      ...(Array.isArray(s.faults) ? { faults: everyFaultEntry(s) } : {}),
    }),
  );
  if (producer?.acks !== undefined) {
    const elsewhere = layers.some((l) => 'acks' in l.values);
    if (elsewhere) issues.push(src.issue(['workload', 'producer', 'acks'], 'acks in one place: settings/matrix or workload.producer', 'acks in both', { key: true }));
    else if (s.settings) (s.settings as Record<string, SettingValue>).acks = producer.acks;
  }
  if (producer && s.workload) {
    const need = batchBytes(s.workload.recordsPerBatch, s.workload.recordBytes);
    if (producer['batch.size'] !== undefined && producer['batch.size'] < need) {
      issues.push(src.issue(['workload', 'producer', 'batch.size'], `at least ${need} bytes: one batch of workload.recordsPerBatch (${s.workload.recordsPerBatch}) records of ${s.workload.recordBytes} bytes must fit`, String(producer['batch.size'])));
    }
  }

  // Workload with the command line's overrides.
  const workload = s.workload
    ? {
        recordBytes: s.workload.recordBytes,
        recordsPerBatch: s.workload.recordsPerBatch,
        connections: s.workload.connections,
        pipelining: s.workload.pipelining,
        rate: s.workload.rate,
        warmupSec: s.workload.warmup,
        durationSec: opts.durationSec ?? s.workload.duration,
        repetitions: opts.repeat ?? s.workload.repetitions,
        extraTrials: s.workload.extraTrials,
        driver: driver ?? s.workload.driver,
        ...(producer ? { producer: producer as NonNullable<Scenario['workload']['producer']> } : {}),
        consumers: consumerSpecs(s.workload.consumers),
      }
    : undefined;
  if (workload) issues.push(...checkConsumers(src, workload, targetKnown ? kinds : null));

  issues.push(
    ...checkFaults({
      src,
      rawFaults: doc.faults,
      kinds: targetKnown ? kinds : null,
      // A fault's demands on replicas (followers, a move-leader's follower to move to) hold in every cell: the fewest any cell has.
      cluster: s.cluster && { ...s.cluster, replicationFactor: Math.min(...cellReplicationFactors(s.cluster, s.settings as Record<string, SettingValue> | undefined, cells)) },
      external: s.external,
      load: workload && { warmupSec: workload.warmupSec, durationSec: workload.durationSec, durationFromCommandLine: opts.durationSec !== undefined },
    }),
  );
  // A schedule of faultSets: is checked on the targets of the cells that run it.
  const runsSet = (name: string, k: TargetKind) => (cells ?? []).some((c) => (c.params.faults ?? (s.settings as Record<string, SettingValue> | undefined)?.faults) === name && cellTargetKind(c.params, target) === k);
  issues.push(...checkFaultSets(src, doc, s, cells, (rawFaults, at, name) => checkFaults({
      src,
      rawFaults,
      at,
      kinds: targetKnown ? kinds.filter((k) => runsSet(name, k)) : null,
      cluster: s.cluster && { ...s.cluster, replicationFactor: Math.min(...cellReplicationFactors(s.cluster, s.settings as Record<string, SettingValue> | undefined, cells)) },
      external: s.external,
      load: workload && { warmupSec: workload.warmupSec, durationSec: workload.durationSec, durationFromCommandLine: opts.durationSec !== undefined },
    })));
  const checked = checkExpectations({ src, texts: s.expectations, cells, minInsyncReplicas: s.cluster?.minInsyncReplicas, settings: s.settings as Record<string, SettingValue> | undefined });
  issues.push(...checked.issues);

  if (issues.length > 0) {
    issues.sort((a, b) => a.line - b.line || a.column - b.column);
    throw new ScenarioError(issues);
  }

  const cluster = s.cluster!;
  const scenario: Scenario = {
    name: s.name ?? opts.defaultName,
    file,
    question: s.question!,
    ...(s.description !== undefined ? { description: s.description } : {}),
    target,
    ...(kinds.some((k) => capabilitiesOf(k).faultDisk !== null) ? { vm: s.vm ?? SECTION_SCHEMAS.vm.parse({})! } : {}),
    ...(s.external ? { external: s.external } : {}),
    cluster: {
      brokers: cluster.brokers,
      topic: cluster.topic,
      partitions: cluster.partitions,
      replicationFactor: cluster.replicationFactor ?? cluster.brokers,
      minInsyncReplicas: cluster.minInsyncReplicas,
      ...(labFault ? { network: 'namespaces' as const } : cluster.network !== 'loopback' ? { network: cluster.network } : {}),
    },
    settings: s.settings as Record<string, SettingValue>,
    matrix: cells!,
    workload: workload!,
    faults: s.faults!,
    faultSets: s.faultSets ?? {},
    expectations: checked.expectations,
    ...(s.requiresRoot ? { requiresRoot: true } : {}),
    raw,
  };
  // The load against its fault disk: estimated from the whole scenario (cells, workload, faults).
  const full = checkDiskVolume(src, scenario);
  if (full.length > 0) throw new ScenarioError(full);
  return scenario;
}

/** Every cell once per target of the axis, target first in its id and label. */
function crossTargets(targets: TargetAxisValue[], cells: MatrixCell[], axisOrder: string[]): MatrixCell[] {
  return targets.flatMap((t) =>
    cells.map((c) => {
      const params = { target: t, ...c.params };
      return { id: cellId(params, ['target', ...axisOrder]), label: `${t}: ${c.id === 'base' ? 'base settings' : cellLabel(c.params, axisOrder)}`, params };
    }),
  );
}

function mapValues<T, U>(obj: Record<string, T | undefined>, f: (v: T) => U): Record<string, U> {
  const out: Record<string, U> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = f(v);
  return out;
}

/** The settings of an include/exclude entry (without `label`), in the file's order when known. */
function settingsOf(entry: Record<string, unknown>, rawEntry?: unknown): Record<string, SettingValue> {
  const order = typeof rawEntry === 'object' && rawEntry !== null ? Object.keys(rawEntry) : Object.keys(entry);
  const out: Record<string, SettingValue> = {};
  for (const k of order) if (SETTING_NAMES.includes(k) && entry[k] !== undefined) out[k] = entry[k] as SettingValue;
  return out;
}

/** The scenario blocks only some target reads (TargetCapabilities.ownBlock): present exactly when a target of the run owns it. */
function checkOwnBlocks(src: SourceFile, kinds: TargetKind[], doc: Record<string, unknown>): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  const blocks = TARGET_KINDS.flatMap((k) => capabilitiesOf(k).ownBlock ?? []);
  for (const block of new Set(blocks.map((b) => b.key))) {
    const owners = TARGET_KINDS.filter((k) => capabilitiesOf(k).ownBlock?.key === block);
    const used = kinds.filter((k) => owners.includes(k));
    if (used.length && doc[block] === undefined) {
      out.push(src.issue(['target'], `an ${block}: block with ${capabilitiesOf(used[0]!).ownBlock!.expected} (the cluster target: ${used.join(', ')} runs against)`, `target: ${used.join(', ')} without it`));
    } else if (!used.length && doc[block] !== undefined) {
      out.push(src.issue([block], `no ${block}: block on target: ${kinds.join(', ')} (it is for target: ${owners.join(', ')})`, `an ${block}: block`, { key: true }));
    }
  }
  return out;
}
